// Package skills serves Skills on the gateway's aggregate endpoint (SEP-2640, the
// io.modelcontextprotocol/skills extension; docs/SKILLS.md). A server that declares the
// extension serves skills/list (entries: the SKILL.md's uri, its frontmatter verbatim, and
// a resources manifest of {uri, digest "sha256:<hex>"} per file), skills/get (one entry by
// the uri of its SKILL.md) and the skill's files as resources.
//
// The single-server endpoint is the upstream: skills/list, skills/get and
// resources/directory/read pass through byte for byte (forward.PassThrough), and the
// extension is advertised with its settings as declared. This package is the aggregate
// endpoint's part, which shows every visible connection's skills under its handle, as MCP
// Apps' views are (package apps):
//
//	skill://<rest>  (upstream)  ⇄  skill://<handle>/<rest>  (client)
//
// so two upstreams' skill://code-review/SKILL.md stay apart, and a skill's path still ends
// in its name. Only the URIs change: the entry's uri and each resources[].uri in skills/list
// and skills/get, and contents[].uri of a resources/read of a skill file. Frontmatter,
// digests and file contents keep every byte, so a host's digest check (SHA-256 of the bytes
// it reads equals the manifest's digest) still holds after the gateway. Skills served under
// another scheme are left out of the aggregate listing (reachable on the single-server
// endpoint).
//
// skills/list on the aggregate endpoint asks the upstreams at request time (every visible
// connection that declared the extension, concurrently, every page up to maxPages) and
// answers one page, ordered by handle then as each upstream listed. An upstream that fails
// is left out of that answer (logged): the listing MAY be partial (SEP-2640).
//
// The gateway's HTTP edge (package gateway) decides which requests reach this package and
// writes the answers; the upstream requests go through package forward.
package skills
