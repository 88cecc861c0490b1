package gateway

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Skills (SEP-2640, the io.modelcontextprotocol/skills extension; docs/SKILLS.md). A server
// that declares the extension serves skills/list (entries: the SKILL.md's uri, its
// frontmatter verbatim, and a resources manifest of {uri, digest "sha256:<hex>"} per file),
// skills/get (one entry by the uri of its SKILL.md) and the skill's files as resources.
//
// The single-server endpoint is the upstream: skills/list, skills/get and
// resources/directory/read pass through byte for byte (forward.PassThrough), and the
// extension is advertised with its settings as declared (single.go).
//
// The aggregate endpoint shows every visible connection's skills under its handle, as MCP
// Apps' views are (apps.go):
//
//	skill://<rest>  (upstream)  ⇄  skill://<handle>/<rest>  (client)
//
// so two upstreams' skill://code-review/SKILL.md stay apart, and a skill's path still ends in
// its name. Only the URIs change: the entry's uri and each resources[].uri in skills/list and
// skills/get, and contents[].uri of a resources/read of a skill file. Frontmatter, digests
// and file contents keep every byte, so a host's digest check (SHA-256 of the bytes it reads
// equals the manifest's digest) still holds after the gateway. Skills served under another
// scheme are left out of the aggregate listing (reachable on the single-server endpoint).
//
// skills/list on the aggregate endpoint asks the upstreams at request time (every visible
// connection that declared the extension, concurrently, every page up to skillsMaxPages)
// and answers one page, ordered by handle then as each upstream listed. An upstream that
// fails is left out of that answer (logged): the listing MAY be partial (SEP-2640).

// skillsExtension is the Skills extension's identifier (capabilities.extensions key).
const skillsExtension = "io.modelcontextprotocol/skills"

const skillScheme = "skill://"

// skillsMaxPages bounds how many skills/list pages the aggregate endpoint reads of one
// upstream per request.
const skillsMaxPages = 20

// skillRest returns what follows the skill:// scheme of uri (matched without regard to
// case); ok is false for any other URI.
func skillRest(uri string) (string, bool) {
	if len(uri) < len(skillScheme) || !strings.EqualFold(uri[:len(skillScheme)], skillScheme) {
		return "", false
	}
	return uri[len(skillScheme):], true
}

// skillURI is the aggregate endpoint's name of connection handle's skill:// URI uri:
// skill://<handle>/<what followed skill://>; ok is false for any other URI.
func skillURI(handle, uri string) (string, bool) {
	rest, ok := skillRest(uri)
	if !ok || rest == "" {
		return "", false
	}
	return skillScheme + handle + "/" + rest, true
}

// skillTarget reverses skillURI: the handle and the upstream's own URI; ok is false when
// uri is not skill://<handle>/<non-empty rest>.
func skillTarget(uri string) (handle, upstream string, ok bool) {
	rest, ok := skillRest(uri)
	if !ok {
		return "", "", false
	}
	handle, orig, found := strings.Cut(rest, "/")
	if !found || handle == "" || orig == "" {
		return "", "", false
	}
	return handle, skillScheme + orig, true
}

// declaresSkills reports whether connection c declared the Skills extension at its last
// connect.
func declaresSkills(c *catalog.Connection) bool {
	u, ok := capsOf(c)
	return ok && len(u.Extensions[skillsExtension]) > 0 && string(u.Extensions[skillsExtension]) != "null"
}

// skillsConnections are st's visible connections that declared the Skills extension, by
// handle (aggregate endpoint).
func skillsConnections(st *requestState) map[string]*catalog.Connection {
	out := map[string]*catalog.Connection{}
	for i := range st.Snapshot.Doc.Connections {
		if c := &st.Snapshot.Doc.Connections[i]; st.Visible(c) && declaresSkills(c) {
			out[c.Handle] = c
		}
	}
	return out
}

// withSkillsCapability returns caps with the Skills extension advertised ({}: no settings
// the aggregate endpoint serves, such as directoryRead) when conns is not empty; caps itself
// otherwise (never modified).
func withSkillsCapability(caps *mcp.ServerCapabilities, conns map[string]*catalog.Connection) *mcp.ServerCapabilities {
	if len(conns) == 0 {
		return caps
	}
	c := *caps
	c.Extensions = maps.Clone(caps.Extensions)
	if c.Extensions == nil {
		c.Extensions = map[string]any{}
	}
	c.Extensions[skillsExtension] = json.RawMessage(`{}`)
	return &c
}

// skillEntry is a skills/list or skills/get entry of connection handle with its uri and
// every resources[].uri that is a skill:// URI shown under the handle; every other byte
// (frontmatter, digests, unknown members) kept. ok is false when the entry's uri is not a
// skill:// URI (left out of the aggregate listing).
func skillEntry(entry json.RawMessage, handle string) (json.RawMessage, bool) {
	out, ok := mapSkillMember(entry, "uri", handle)
	if !ok {
		return nil, false
	}
	m, _ := jsonobj.Members(out)
	if m["resources"] == nil {
		return out, true
	}
	res, changed := mapItems(m["resources"], func(item json.RawMessage) (json.RawMessage, bool) {
		return mapSkillMember(item, "uri", handle)
	})
	if !changed {
		return out, true
	}
	if edited, err := jsonobj.SetMember(out, "resources", res); err == nil {
		return edited, true
	}
	return out, true
}

// mapSkillMember returns obj with its member key (a skill:// URI) under handle; ok is false
// when it is no skill:// URI.
func mapSkillMember(obj json.RawMessage, key, handle string) (json.RawMessage, bool) {
	m, ok := jsonobj.Members(obj)
	if !ok {
		return nil, false
	}
	var u string
	if json.Unmarshal(m[key], &u) != nil {
		return nil, false
	}
	ns, ok := skillURI(handle, u)
	if !ok {
		return nil, false
	}
	out, err := jsonobj.SetMember(obj, key, jsonString(ns))
	return out, err == nil
}

// skillsList is the aggregate endpoint's skills/list: every entry of every connection in
// conns (each upstream asked concurrently, all its pages up to skillsMaxPages), mapped by
// skillEntry, in one page ordered by handle. The client's cursor is refused: the answer
// has no next page.
func (g *Gateway) skillsList(ctx context.Context, st *request.State, conns map[string]*catalog.Connection, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(params) > 0 && string(params) != "null" && json.Unmarshal(params, &p) != nil {
		return nil, wire.InvalidParams("params must be an object")
	}
	if p.Cursor != "" {
		return nil, wire.InvalidParams("invalid cursor: the aggregate skills/list answers one page")
	}
	handles := slices.Sorted(maps.Keys(conns))
	lists := make([][]json.RawMessage, len(handles))
	var wg sync.WaitGroup
	for i, h := range handles {
		wg.Go(func() {
			lists[i] = g.upstreamSkills(ctx, st, conns[h])
		})
	}
	wg.Wait()
	var b strings.Builder
	b.WriteString(`{"skills":[`)
	n := 0
	for _, l := range lists {
		for _, e := range l {
			if n > 0 {
				b.WriteByte(',')
			}
			b.Write(e)
			n++
		}
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String()), nil
}

// upstreamSkills lists connection c's skill entries (every page, at most skillsMaxPages),
// mapped under its handle; a failure is logged and ends the list where it is.
func (g *Gateway) upstreamSkills(ctx context.Context, st *request.State, c *catalog.Connection) []json.RawMessage {
	var out []json.RawMessage
	cursor := ""
	for range skillsMaxPages {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params = json.RawMessage(`{"cursor":` + string(jsonString(cursor)) + `}`)
		}
		res, err := g.forward.Method(ctx, st, c, "skills/list", params)
		if err != nil {
			g.log.WarnContext(ctx, "upstream skills/list failed; its skills are left out of this listing",
				"connection_id", c.ID, "err", err)
			return out
		}
		var page struct {
			Skills     []json.RawMessage `json:"skills"`
			NextCursor string            `json:"nextCursor"`
		}
		if json.Unmarshal(res, &page) != nil {
			g.log.WarnContext(ctx, "upstream skills/list result is not one", "connection_id", c.ID)
			return out
		}
		for _, e := range page.Skills {
			if m, ok := skillEntry(e, c.Handle); ok {
				out = append(out, m)
			}
		}
		if page.NextCursor == "" || page.NextCursor == cursor {
			return out
		}
		cursor = page.NextCursor
	}
	return out
}

// skillsGet is the aggregate endpoint's skills/get: params.uri skill://<handle>/<rest> is
// asked of that connection as skill://<rest> (the client's other members kept) and the
// entry it answers is mapped (skillEntry). A URI of no visible connection that declared
// the extension is -32602 (SEP-2640: "URIs it does not serve as skills").
func (g *Gateway) skillsGet(ctx context.Context, st *request.State, conns map[string]*catalog.Connection, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil, wire.InvalidParams("params must be an object with uri")
	}
	handle, upstream, ok := skillTarget(p.URI)
	c := conns[handle]
	if !ok || c == nil {
		return nil, wire.InvalidParams("not a skill of this server: " + p.URI)
	}
	up, err := jsonobj.SetMember(params, "uri", jsonString(upstream))
	if err != nil {
		return nil, wire.InvalidParams("params must be an object")
	}
	res, err := g.forward.Method(ctx, st, c, "skills/get", up)
	if err != nil {
		return nil, err
	}
	m, ok := jsonobj.Members(res)
	if !ok || m["skill"] == nil {
		return res, nil
	}
	entry, ok := skillEntry(m["skill"], handle)
	if !ok {
		return res, nil
	}
	if out, err := jsonobj.SetMember(res, "skill", entry); err == nil {
		return out, nil
	}
	return res, nil
}

// skillRead reports whether params (of a resources/read) name skill://<handle>/… of a
// connection in conns, and returns that URI.
func skillRead(conns map[string]*catalog.Connection, params json.RawMessage) (string, bool) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", false
	}
	h, _, ok := skillTarget(p.URI)
	return p.URI, ok && conns[h] != nil
}

// readSkill reads skill file uri (skill://<handle>/<rest>) from its connection as
// skill://<rest> and answers the upstream's result with each contents[].uri that is a
// skill:// URI shown under the handle; the contents' text and blob keep every byte (the
// manifest's digests hold).
func (g *Gateway) readSkill(ctx context.Context, st *request.State, conns map[string]*catalog.Connection, uri string, params json.RawMessage) (json.RawMessage, error) {
	handle, upstream, _ := skillTarget(uri)
	c := conns[handle]
	up, err := jsonobj.SetMember(params, "uri", jsonString(upstream))
	if err != nil || c == nil {
		return nil, wire.InvalidParams("resource not found: " + uri)
	}
	res, err := g.forward.Method(ctx, st, c, "resources/read", up)
	if err != nil {
		return nil, err
	}
	m, ok := jsonobj.Members(res)
	if !ok || m["contents"] == nil {
		return res, nil
	}
	contents, changed := mapItems(m["contents"], func(item json.RawMessage) (json.RawMessage, bool) {
		return mapSkillMember(item, "uri", handle)
	})
	if !changed {
		return res, nil
	}
	if out, err := jsonobj.SetMember(res, "contents", contents); err == nil {
		return out, nil
	}
	return res, nil
}

// skillsMethod reports whether method is one of the Skills extension's own.
func skillsMethod(method string) bool {
	return method == "skills/list" || method == "skills/get"
}
