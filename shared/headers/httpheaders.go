package headers

import (
	"net/http"
	"strings"
)

// secretHTTPNames are the HTTP header names (lower case) whose values are credentials:
// RFC 9110 §11.6.2 Authorization and §11.7.2 Proxy-Authorization, RFC 6265 Cookie and
// Set-Cookie, the common X-Api-Key, AWS's X-Amz-Security-Token, and MCP's Mcp-Session-Id —
// a session id lets whoever holds it act in that session (MCP 2025-11-25 "Security Best
// Practices", session hijacking), and logs join requests by request id, never by it.
var secretHTTPNames = map[string]bool{
	"authorization":        true,
	"proxy-authorization":  true,
	"cookie":               true,
	"set-cookie":           true,
	"x-api-key":            true,
	"x-amz-security-token": true,
	"mcp-session-id":       true,
}

// secretHTTPParts mark any other name as secret-bearing when it contains one of them
// (lower case): X-Auth-Token, X-Upstream-Secret, Private-Token, X-Goog-Api-Key, ...
var secretHTTPParts = []string{"auth", "token", "secret", "password", "passwd", "api-key", "apikey",
	"session", "cookie", "credential", "signature"}

// SecretHTTPHeader reports whether the HTTP header name (any case) carries a credential:
// one of Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key,
// X-Amz-Security-Token, Mcp-Session-Id, or a name containing auth, token, secret,
// password, passwd, api-key, apikey, session, cookie, credential or signature.
func SecretHTTPHeader(name string) bool {
	lower := strings.ToLower(name)
	if secretHTTPNames[lower] {
		return true
	}
	for _, p := range secretHTTPParts {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}

// ScrubHTTP returns a copy of h (nil for nil) in which every value of a secret-bearing
// header (SecretHTTPHeader) is RedactedValue; the names, the number of values and every
// other header stay, so that a log line still shows that a credential was sent. It is the
// one scrubber for HTTP headers: shared/logx applies it to every http.Header it logs.
// A connection's declared headers are all secret: use Redact for those.
func ScrubHTTP(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for name, vs := range h {
		if !SecretHTTPHeader(name) {
			out[name] = append([]string(nil), vs...)
			continue
		}
		red := make([]string, len(vs))
		for i := range red {
			red[i] = RedactedValue
		}
		out[name] = red
	}
	return out
}
