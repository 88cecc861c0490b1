// Package names builds and checks the tool names the gateway exposes to MCP clients
// (DESIGN §4): every name matches ^[A-Za-z0-9_-]{1,64}$ (what Claude and OpenAI accept),
// proxied tools are named mcp_<handle>_<tool> after the seed's mcp_<connection>_<tool>,
// and names that would pass 64 characters are shortened deterministically with a hash
// suffix. Connection handles are [a-z0-9]{1,16} and unique, so the prefix mcp_<handle>_
// can never be shared by two connections.
package names

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
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
