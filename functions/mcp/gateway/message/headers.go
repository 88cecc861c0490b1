package message

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrMcpNameEncoding is the answer to an Mcp-Name whose value is neither printable ASCII
// nor in the Base64 sentinel form with a valid payload (2026-07-28 transport, "Value
// Encoding": a value that is not plain ASCII MUST be sent as =?base64?{value}?=).
var ErrMcpNameEncoding = errors.New("the Mcp-Name header value must be printable ASCII or Base64-encoded as =?base64?{value}?=")

// NewEraResult adds the members a 2026-07-28 result must have (the gateway's reply, edge.go); a result that is
// not a JSON object is returned as it is.
func NewEraResult(method string, raw json.RawMessage) json.RawMessage {
	m, ok := jsonobj.Members(raw)
	if !ok {
		return raw
	}
	out := raw
	set := func(k, v string) {
		if o, err := jsonobj.SetMember(out, k, json.RawMessage(v)); err == nil {
			out = o
		}
	}
	if m["resultType"] == nil {
		set("resultType", `"complete"`)
	}
	if strings.HasSuffix(method, "/list") || method == "resources/read" {
		if string(m["cacheScope"]) != `"private"` {
			set("cacheScope", `"private"`)
		}
		if m["ttlMs"] == nil {
			set("ttlMs", `0`)
		}
	}
	return out
}

// VersionServed reports whether the edge may answer req itself as far as the protocol
// version goes: the MCP-Protocol-Version header, when present, names a revision go-sdk
// serves (mcp.SupportedProtocolVersions), and a protocol version in the request's _meta
// equals the header. Otherwise go-sdk answers, as the 2026-07-28 transport chapter
// requires ("Protocol Version Header"): 400 with HeaderMismatch (-32020) when header and
// _meta differ (also for a 2025-11-25 header), 400 with UnsupportedProtocolVersionError
// (-32022, data.supported) for a 2026-era version it does not implement, and its 400
// refusal for an unknown older one.
func VersionServed(r *http.Request, req *Request) bool {
	header := r.Header.Get("Mcp-Protocol-Version")
	if header != "" && !slices.Contains(mcp.SupportedProtocolVersions(), header) {
		return false
	}
	if len(req.Params) == 0 || !bytes.Contains(req.Params, []byte(mcp.MetaKeyProtocolVersion)) {
		return true
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return false // go-sdk's own decoding error is precise
	}
	raw, has := p.Meta[mcp.MetaKeyProtocolVersion]
	if !has {
		return true
	}
	var v string
	return json.Unmarshal(raw, &v) == nil && v == header
}

// HeadersMatch reports whether a 2026-07-28 request's Mcp-Method / Mcp-Name
// headers and its _meta protocol version agree with the body, as that revision requires;
// go-sdk answers the precise error when they do not. An Mcp-Name in the Base64 sentinel
// form (=?base64?…?=) is decoded before the comparison (2026-07-28 transport, "Value
// Encoding": servers MUST decode an encoded Mcp-Name before comparing it to the body).
func HeadersMatch(r *http.Request, req *Request) bool {
	if r.Header.Get("Mcp-Method") != req.Method {
		return false
	}
	var p struct {
		Name string         `json:"name"`
		URI  string         `json:"uri"`
		Meta map[string]any `json:"_meta"`
	}
	if len(req.Params) > 0 && json.Unmarshal(req.Params, &p) != nil {
		return false
	}
	if v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string); v != r.Header.Get("Mcp-Protocol-Version") {
		return false
	}
	var body string
	switch req.Method {
	case "tools/call", "prompts/get":
		body = p.Name
	case "resources/read":
		body = p.URI
	default:
		return true
	}
	raw := r.Header.Get("Mcp-Name")
	name, ok := mcpclient.DecodeHeaderValue(raw)
	if !ok || name != body {
		return false
	}
	if raw != name {
		// go-sdk compares the header as sent: it serves the request (a built-in, the
		// gateway's own resources and prompts) with the decoded value in its place.
		r.Header.Set("Mcp-Name", name)
	}
	return true
}

// RequestID returns the id of a body too large to decode, when it can be read from the
// first bytes (a top-level "id" member before "params"), or nil.
func RequestID(body []byte) json.RawMessage {
	id := ResponseID(body[:min(len(body), 4096)])
	if id != nil && !ValidID(id) {
		return nil
	}
	return id
}

// ResponseID returns the "id" member of a JSON-RPC response that starts in head (go-sdk
// writes {"jsonrpc":"2.0","id":…,"result":…}), or nil when it cannot be read from head.
func ResponseID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if k == "id" {
			if dec.Decode(&v) != nil {
				return nil
			}
			return v
		}
		if k == "result" || k == "error" || dec.Decode(&v) != nil {
			return nil // go-sdk writes the id first; do not scan a large result
		}
	}
	return nil
}
