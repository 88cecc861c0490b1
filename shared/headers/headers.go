// Package headers validates and redacts the HTTP headers an admin declares on an upstream MCP
// connection (docs/DESIGN.md §9, decision D-12). Validate runs on write (REST)
// and again on read, right before the upstream client connects (docs/DESIGN.md §6), so a row edited
// behind the API's back cannot smuggle a header either.
//
// What is refused, and why:
//
//   - names that are not RFC 9110 tokens (§5.1: tchar only), longer than MaxNameBytes, or
//     duplicated case-insensitively (HTTP merges them, so the upstream would see something
//     other than what the admin declared);
//   - hop-by-hop and connection-management names (RFC 9110 §7.6.1, §7.8, RFC 9112 §6-7):
//     Connection, Keep-Alive, Proxy-* (incl. Proxy-Authorization, Proxy-Authenticate,
//     Proxy-Connection), TE, Trailer, Transfer-Encoding, Upgrade, Expect;
//   - names the gateway or its HTTP/MCP transport own: Host, Content-* (Content-Length,
//     Content-Type, Content-Encoding, ...), Accept, Accept-Encoding (Go only decompresses
//     what it asked for), Range, Mcp-* (Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method,
//     Mcp-Name and future ones: the go-sdk transport sets them), Last-Event-ID (SSE
//     resumption);
//   - names that claim to describe the client's network path, which only proxies may set:
//     Forwarded, X-Forwarded-*, X-Real-IP, Via, and X-GoLambdaProxy-* (the Lambda adapter's
//     request-context channel, see docs/DESIGN.md §13);
//   - values with any control character other than horizontal tab (CR, LF and NUL would
//     split or truncate the header block: request smuggling), or with leading / trailing
//     whitespace (HTTP parsers strip it, so the upstream would see a different value);
//   - more than MaxHeaders headers, a value over MaxValueBytes, or a total over MaxTotalBytes.
//
// Cookie is allowed: it is an ordinary end-to-end request header, and some self-hosted MCP
// servers sit behind SSO proxies that authenticate by session cookie. Authorization is
// allowed too: it is the usual way to give an upstream its API key. Both are secrets, like
// every value here: use Redact before returning or logging a header map.
//
// Error messages name the offending header (quoted, truncated) and never contain a value.
package headers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
	"golang.org/x/net/http/httpguts"
)

// Limits on a connection's declared headers (docs/DESIGN.md §9). Sizes are in bytes.
const (
	// MaxHeaders is the largest number of headers a connection may declare.
	MaxHeaders = 32
	// MaxNameBytes is the longest header name, in bytes.
	MaxNameBytes = 256
	// MaxValueBytes is the longest header value, in bytes (8 KiB).
	MaxValueBytes = 8 << 10
	// MaxTotalBytes bounds the sum of len(name)+len(value) over all headers (32 KiB).
	MaxTotalBytes = 32 << 10
)

// RedactedValue replaces every header value in Redact's output.
const RedactedValue = "[REDACTED]"

// reservedNames are refused exactly (compared in lower case).
var reservedNames = map[string]string{
	"connection":          "hop-by-hop",
	"keep-alive":          "hop-by-hop",
	"te":                  "hop-by-hop",
	"trailer":             "hop-by-hop",
	"transfer-encoding":   "hop-by-hop",
	"upgrade":             "hop-by-hop",
	"expect":              "hop-by-hop",
	"host":                "set by the gateway",
	"accept":              "set by the MCP transport",
	"accept-encoding":     "set by the gateway",
	"range":               "set by the gateway",
	"last-event-id":       "set by the MCP transport",
	"forwarded":           "set by proxies only",
	"x-real-ip":           "set by proxies only",
	"via":                 "set by proxies only",
	"proxy-authorization": "hop-by-hop",
}

// reservedPrefixes are refused as name prefixes (compared in lower case).
var reservedPrefixes = []struct{ prefix, why string }{
	{"proxy-", "hop-by-hop"},
	{"content-", "set by the MCP transport"},
	{"mcp-", "set by the MCP transport"},
	{"x-forwarded-", "set by proxies only"},
	{"x-golambdaproxy-", "reserved by the Lambda adapter"},
}

// Reserved reports whether name (any case) is a header that a connection may not declare,
// and why ("hop-by-hop", "set by the MCP transport", ...). It does not check the token
// syntax; Validate does.
func Reserved(name string) (why string, reserved bool) {
	lower := strings.ToLower(name)
	if why, ok := reservedNames[lower]; ok {
		return why, true
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(lower, p.prefix) {
			return p.why, true
		}
	}
	return "", false
}

// Validate checks a connection's declared headers (name → value) against the rules in the
// package doc (docs/DESIGN.md §9, D-12, RFC 9110 §5). A nil or empty map is valid.
//
// It returns nil, or an *apperr.Error with code VALIDATION_ERROR that names every
// offending header (in sorted order, never a value): the message holds each problem, and
// Details is {"header": the first offending name, "headers": [{"header": name, "message":
// its problem}, …]} — one entry per offending header, so a client can mark every bad entry
// of a form at once (issue 34). A map over MaxHeaders or MaxTotalBytes is refused as a
// whole, without details. It never panics.
func Validate(h map[string]string) error {
	if len(h) == 0 {
		return nil
	}
	if len(h) > MaxHeaders {
		return apperr.New(apperr.Validation, "headers: %d headers declared, at most %d allowed", len(h), MaxHeaders).
			WithHint("remove headers the upstream does not need")
	}
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)

	type problem struct {
		Header  string `json:"header"`
		Message string `json:"message"`
	}
	var problems []problem
	seen := make(map[string]string, len(h))
	total := 0
	for _, name := range names {
		value := h[name]
		total += len(name) + len(value)
		msg := checkName(name)
		if msg == "" {
			lower := strings.ToLower(name)
			if other, dup := seen[lower]; dup {
				msg = fmt.Sprintf("%s is declared twice (as %s too; header names are case-insensitive)", show(name), show(other))
			}
			seen[lower] = name
		}
		if msg == "" {
			msg = checkValue(name, value)
		}
		if msg != "" {
			problems = append(problems, problem{Header: text.Clip(name, 64), Message: msg})
		}
	}
	if len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.Message
		}
		prefix := "headers: "
		if len(problems) > 1 {
			prefix = fmt.Sprintf("headers: %d headers are invalid: ", len(problems))
		}
		return apperr.New(apperr.Validation, "%s%s", prefix, strings.Join(msgs, "; ")).
			WithDetails(map[string]any{"header": problems[0].Header, "headers": problems})
	}
	if total > MaxTotalBytes {
		return apperr.New(apperr.Validation, "headers: total size %d bytes is over the limit of %d bytes", total, MaxTotalBytes)
	}
	return nil
}

// checkName returns what is wrong with header name name ("" when nothing is).
func checkName(name string) string {
	if name == "" {
		return "a header name is empty"
	}
	if len(name) > MaxNameBytes {
		return fmt.Sprintf("header name %s is %d bytes long, at most %d allowed", show(name), len(name), MaxNameBytes)
	}
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Sprintf("header name %s is not a valid HTTP field name (RFC 9110 token: letters, digits and !#$%%&'*+-.^_`|~ only)", show(name))
	}
	if why, ok := Reserved(name); ok {
		return fmt.Sprintf("header %s may not be set on a connection (%s)", show(name), why)
	}
	return ""
}

// checkValue returns what is wrong with header name's value ("" when nothing is).
func checkValue(name, value string) string {
	if len(value) > MaxValueBytes {
		return fmt.Sprintf("value of header %s is %d bytes long, at most %d allowed", show(name), len(value), MaxValueBytes)
	}
	// httpguts refuses every control character but horizontal tab (RFC 9110 §5.5: CTL
	// other than HTAB is not field content); obs-text (0x80-0xff) passes, as in net/http.
	if !httpguts.ValidHeaderFieldValue(value) {
		return fmt.Sprintf("value of header %s contains a control character (CR, LF, NUL or other)", show(name))
	}
	if value != "" && (isSpace(value[0]) || isSpace(value[len(value)-1])) {
		return fmt.Sprintf("value of header %s has leading or trailing whitespace", show(name))
	}
	return ""
}

// show quotes a (possibly hostile) header name for a message: Go-quoted, so control bytes
// are escaped, and clipped to 64 bytes.
func show(name string) string { return fmt.Sprintf("%q", text.Clip(name, 64)) }

func isSpace(b byte) bool { return b == ' ' || b == '\t' }

// Redact returns a copy of h with the same names and every value replaced by RedactedValue,
// for API answers and logs (docs/DESIGN.md §9: header values are secrets). It never
// returns nil: no headers show as {} in every answer and event payload.
func Redact(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for name := range h {
		out[name] = RedactedValue
	}
	return out
}
