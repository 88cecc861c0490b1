// Package names builds and checks the tool names the gateway exposes to MCP clients
// (docs/DESIGN.md §4): every name matches ^[A-Za-z0-9_-]{1,64}$ (what Claude and OpenAI accept),
// proxied tools are named mcp_<handle>_<tool> (a short handle in place of the connection name),
// and names that would pass 64 characters are shortened deterministically with a hash
// suffix. Connection handles are [a-z0-9]{1,16} and unique, so the prefix mcp_<handle>_
// can never be shared by two connections.
package names

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
)

// MaxLen is the longest exposed tool name (Claude and OpenAI limit).
const MaxLen = 64

var valid = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Valid reports whether name is acceptable to every major MCP client.
func Valid(name string) bool { return valid.MatchString(name) }

// Prefix is the exposed-name prefix of a connection handle: "mcp_<handle>_".
func Prefix(handle string) string { return "mcp_" + handle + "_" }

// Exposed returns the exposed name of upstream tool upstream on connection handle:
// mcp_<handle>_<tool>, where every character of the tool name outside [A-Za-z0-9_-]
// becomes '_'. When the result would pass 64 characters, or when the tool name had to be
// changed at all (so that "a.b" and "a_b" never collide), the tool part is cut and
// followed by '_' and the first 8 hex digits of SHA-256(upstream). The result is always
// Valid and depends only on (handle, upstream).
func Exposed(handle, upstream string) string {
	prefix := Prefix(handle)
	clean, changed := sanitize(upstream)
	name := prefix + clean
	if !changed && clean != "" && len(name) <= MaxLen {
		return name
	}
	sum := sha256.Sum256([]byte(upstream))
	suffix := "_" + hex.EncodeToString(sum[:4])
	room := MaxLen - len(prefix) - len(suffix)
	if room < 0 {
		room = 0
	}
	if len(clean) > room {
		clean = clean[:room]
	}
	return prefix + clean + suffix
}

// Unique returns Exposed(handle, upstream) unless taken reports that name as used. An
// upstream can list a clean name equal to another tool's hashed name ("a.b" is exposed as
// mcp_<h>_a_b_<8 hex of SHA-256("a.b")>, and "a_b_<those 8 hex>" is a clean name), so the
// caller passes the names already given in this connection; on a clash the hash is taken
// over upstream plus a counter until a free name is found. The result is always Valid and
// starts with Prefix(handle); it depends only on handle, upstream and the taken set.
func Unique(handle, upstream string, taken func(string) bool) string {
	name := Exposed(handle, upstream)
	for i := 1; taken(name) && i <= 1000; i++ {
		name = Exposed(handle, upstream+"\x00"+strconv.Itoa(i))
	}
	return name
}

func sanitize(s string) (string, bool) {
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
			changed = true
		}
	}
	return b.String(), changed
}
