package mcpclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/text"
)

// Request metadata headers of the 2026-07-28 Streamable HTTP transport ("Request
// Metadata": Standard Request Headers, Custom Headers from Tool Parameters, Value
// Encoding). The gateway is both a server of these headers (its edge validates what its
// clients send) and a client (the upstream hop sends them): both sides are here.

// ParamHeaderPrefix starts the header a tool parameter marked x-mcp-header is mirrored
// into: Mcp-Param-{Name}.
const ParamHeaderPrefix = "Mcp-Param-"

const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// EncodeHeaderValue returns s as an Mcp-Name or Mcp-Param-* header value: s itself when it
// is plain printable ASCII (0x20–0x7E) without leading or trailing space or tab and does
// not look like the sentinel form, else "=?base64?{standard Base64 of the UTF-8 bytes}?="
// (2026-07-28 transport, "Value Encoding").
func EncodeHeaderValue(s string) string {
	if !needsBase64(s) {
		return s
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
}

func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, base64Prefix) && strings.HasSuffix(s, base64Suffix)
}

// DecodeHeaderValue returns the value an Mcp-Name or Mcp-Param-* header carries: the
// decoded bytes of the sentinel form "=?base64?…?=" (markers case-sensitive, standard
// Base64), or v itself. ok is false when v has the sentinel form but its payload is not
// valid Base64 or not UTF-8, and when v is not in that form but holds a byte outside
// printable ASCII (0x20–0x7E): the revision requires such a value to be sent Base64-encoded
// ("Value Encoding": a client MUST encode a value that is not plain ASCII), so a raw one is
// malformed. Such a header matches no body value.
func DecodeHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, base64Prefix)
	if !ok || len(inner) < len(base64Suffix) {
		return v, plainASCII(v)
	}
	inner, ok = strings.CutSuffix(inner, base64Suffix)
	if !ok {
		return v, plainASCII(v)
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// plainASCII reports whether every byte of v is printable ASCII (0x20–0x7E).
func plainASCII(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// HeaderBinding is one tool parameter marked x-mcp-header: the chain of "properties" keys
// from the input schema's root to it, and the header name part (Mcp-Param-{Header}).
type HeaderBinding struct {
	Path   []string
	Header string
}

// HeaderBindings returns the x-mcp-header bindings of a tool's input schema: every
// property reachable from the root through "properties" keys only whose x-mcp-header is a
// non-empty HTTP token (RFC 9110 §5.6.2) and, compared case-insensitively, the first of
// its name. Annotations the transport chapter does not allow (not a token, duplicates,
// under items/oneOf/$ref…) bind nothing. nil for a schema without any.
func HeaderBindings(inputSchema json.RawMessage) []HeaderBinding {
	if !bytes.Contains(inputSchema, []byte("x-mcp-header")) {
		return nil
	}
	type node struct {
		XMCPHeader json.RawMessage `json:"x-mcp-header"`
		Properties map[string]json.RawMessage
	}
	var out []HeaderBinding
	seen := map[string]bool{}
	var walk func(raw json.RawMessage, path []string, depth int)
	walk = func(raw json.RawMessage, path []string, depth int) {
		var n node
		if depth > 32 || json.Unmarshal(raw, &n) != nil {
			return
		}
		var name string
		if len(path) > 0 && json.Unmarshal(n.XMCPHeader, &name) == nil && isToken(name) && !seen[strings.ToLower(name)] {
			seen[strings.ToLower(name)] = true
			out = append(out, HeaderBinding{Path: path, Header: name})
		}
		keys := make([]string, 0, len(n.Properties))
		for k := range n.Properties {
			keys = append(keys, k)
		}
		slices.Sort(keys) // a stable order: the first of two equal names wins every time
		for _, k := range keys {
			walk(n.Properties[k], append(path[:len(path):len(path)], k), depth+1)
		}
	}
	walk(inputSchema, nil, 0)
	return out
}

// isToken reports whether s is an HTTP field-name token (1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// argumentAt returns the value at path in a tools/call arguments object, or nil when
// absent or null.
func argumentAt(args json.RawMessage, path []string) json.RawMessage {
	cur := args
	for _, k := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(cur, &m) != nil {
			return nil
		}
		if cur = m[k]; cur == nil {
			return nil
		}
	}
	if string(bytes.TrimSpace(cur)) == "null" {
		return nil
	}
	return cur
}

// maxSafeInteger bounds the integers a header may carry (JavaScript's safe range, as the
// transport chapter requires).
const maxSafeInteger = 1<<53 - 1

// primitiveString is the header form of a JSON string, boolean or integer (within the
// safe range; 42.0 counts as 42) — "Type conversion" of the transport chapter — and
// whether raw is one. isInt tells an integer, whose comparison is numeric.
func primitiveString(raw json.RawMessage) (s string, isInt, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false, false
	}
	switch x := v.(type) {
	case string:
		return x, false, true
	case bool:
		return strconv.FormatBool(x), false, true
	case json.Number:
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
			return "", false, false
		}
		return strconv.FormatInt(int64(f), 10), true, true
	}
	return "", false, false
}

// ParamHeaders returns the Mcp-Param-{Name} headers a client sends with a tools/call of a
// tool with inputSchema and the call's arguments: for each binding (HeaderBindings) whose
// argument is present, not null and a string, boolean or safe integer, its value encoded
// with EncodeHeaderValue. nil when there are none.
func ParamHeaders(inputSchema, args json.RawMessage) map[string]string {
	var out map[string]string
	for _, b := range HeaderBindings(inputSchema) {
		raw := argumentAt(args, b.Path)
		if raw == nil {
			continue
		}
		s, _, ok := primitiveString(raw)
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[ParamHeaderPrefix+b.Header] = EncodeHeaderValue(s)
	}
	return out
}

// CheckParamHeaders validates a tools/call's Mcp-Param-* headers h against its arguments,
// for a tool with inputSchema, as a server must (transport chapter, "Server Behavior for
// Custom Headers"): a bound argument that is present and not null needs its header, whose
// value — decoded when Base64 — equals the argument (integers compared numerically); an
// absent or null argument must have no header. The error says which header failed, for a
// HeaderMismatch (-32020) answer; it never quotes a header value.
func CheckParamHeaders(h http.Header, inputSchema, args json.RawMessage) error {
	for _, b := range HeaderBindings(inputSchema) {
		name := ParamHeaderPrefix + b.Header
		vals := h.Values(name)
		raw := argumentAt(args, b.Path)
		if raw == nil {
			if len(vals) > 0 {
				return fmt.Errorf("unexpected %s header for absent or null parameter %q", name, strings.Join(b.Path, "."))
			}
			continue
		}
		if len(vals) != 1 {
			return fmt.Errorf("missing %s header for parameter %q", name, strings.Join(b.Path, "."))
		}
		got, ok := DecodeHeaderValue(vals[0])
		if !ok {
			return fmt.Errorf("%s header has an invalid Base64 value", name)
		}
		want, isInt, ok := primitiveString(raw)
		if !ok {
			return fmt.Errorf("%s header given but parameter %q is not a string, boolean or safe integer", name, strings.Join(b.Path, "."))
		}
		if isInt {
			f, err := strconv.ParseFloat(got, 64)
			if err == nil && f == math.Trunc(f) && math.Abs(f) <= maxSafeInteger && strconv.FormatInt(int64(f), 10) == want {
				continue
			}
		} else if got == want {
			continue
		}
		return fmt.Errorf("%s header does not match parameter %q", name, strings.Join(b.Path, "."))
	}
	return nil
}

type inputSchemaKey struct{}

// WithInputSchema returns ctx carrying the input schema of the tool a Forward of
// tools/call under it calls, so that the upstream hop mirrors its x-mcp-header parameters
// into Mcp-Param-* headers (ParamHeaders) when the upstream speaks 2026-07-28 or later.
func WithInputSchema(ctx context.Context, inputSchema json.RawMessage) context.Context {
	if len(inputSchema) == 0 {
		return ctx
	}
	return context.WithValue(ctx, inputSchemaKey{}, inputSchema)
}

func inputSchemaFrom(ctx context.Context) json.RawMessage {
	s, _ := ctx.Value(inputSchemaKey{}).(json.RawMessage)
	return s
}

// headerTypes are the JSON Schema types a parameter marked x-mcp-header may have (MCP
// 2026-07-28 transport, "Custom Headers from Tool Parameters", SEP-2243): string, integer
// and boolean, whose header form is one text. number is forbidden (1, 1.0 and 1e0 are one
// value and three texts, so a server cannot compare the header with the body), as are
// object and array; null may sit beside an allowed type (a null argument sends no header).
var headerTypes = map[string]bool{"string": true, "integer": true, "boolean": true}

// forbiddenHeaderType reports whether a property's "type" (raw JSON; nil when absent) rules
// the x-mcp-header annotation out: a type other than string, integer or boolean, or a list
// naming one (null aside). An absent type declares nothing to contradict and is allowed.
func forbiddenHeaderType(typ json.RawMessage) (string, bool) {
	if len(typ) == 0 {
		return "", false
	}
	var one string
	if json.Unmarshal(typ, &one) == nil {
		return one, !headerTypes[one]
	}
	var list []string
	if json.Unmarshal(typ, &list) != nil {
		return string(typ), true
	}
	for _, t := range list {
		if t != "null" && !headerTypes[t] {
			return t, true
		}
	}
	return "", false
}

// StripForbiddenHeaderAnnotations returns inputSchema without the x-mcp-header annotations
// the transport chapter forbids (a parameter of type number, object or array:
// forbiddenHeaderType), on the parameters HeaderBindings reads (reachable from the root
// through "properties" only), with every other byte as it was; and what it removed, one
// line per parameter ("amount" (number)). A conformant client excludes a tool with such an
// annotation, and one that mirrors it sends a header the upstream cannot compare: without
// it the tool is still listed and called, its value travelling in the body only
// (docs/ARCHITECTURE.md, MCP request headers). inputSchema itself (same bytes)
// and nil when there is nothing to remove or it is not a JSON object.
func StripForbiddenHeaderAnnotations(inputSchema json.RawMessage) (json.RawMessage, []string) {
	if !bytes.Contains(inputSchema, []byte("x-mcp-header")) {
		return inputSchema, nil
	}
	var removed []string
	var walk func(raw json.RawMessage, path []string, depth int) json.RawMessage
	walk = func(raw json.RawMessage, path []string, depth int) json.RawMessage {
		m, ok := jsonobj.Members(raw)
		if !ok || depth > 32 {
			return raw
		}
		out := raw
		if _, has := m["x-mcp-header"]; has && len(path) > 0 {
			if typ, bad := forbiddenHeaderType(m["type"]); bad {
				if d, err := jsonobj.DeleteMember(out, "x-mcp-header"); err == nil {
					out = d
					removed = append(removed, fmt.Sprintf("%q (%s)", strings.Join(path, "."), text.Clip(typ, 32)))
				}
			}
		}
		props, ok := jsonobj.Members(m["properties"])
		if !ok || !bytes.Contains(m["properties"], []byte("x-mcp-header")) {
			return out
		}
		keys := slices.Sorted(maps.Keys(props))
		newProps := m["properties"]
		for _, k := range keys {
			if v := walk(props[k], append(path[:len(path):len(path)], k), depth+1); !bytes.Equal(v, props[k]) {
				if p, err := jsonobj.SetMember(newProps, k, v); err == nil {
					newProps = p
				}
			}
		}
		if !bytes.Equal(newProps, m["properties"]) {
			if d, err := jsonobj.SetMember(out, "properties", newProps); err == nil {
				out = d
			}
		}
		return out
	}
	out := walk(inputSchema, nil, 0)
	return out, removed
}
