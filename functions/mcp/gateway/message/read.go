// Package message reads one MCP POST body as the gateway's edge routes it: the JSON-RPC
// request envelope ([Read]: the id exactly as sent, the method, the params, a tools/call's
// members), the ids JSON-RPC 2.0 and MCP allow ([ValidID]), the id of a body or response
// too large to decode ([RequestID], [ResponseID]), a client's notifications/cancelled
// ([CancelledID]), and the checks and additions of the 2026-07-28 revision: the protocol
// version header against the body ([VersionServed]), the Mcp-Method / Mcp-Name headers
// ([HeadersMatch]) and the members every result must carry ([NewEraResult]). It holds no
// state and writes no answer: the edge (package gateway) answers.
package message

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Request is one JSON-RPC request as the edge reads it.
type Request struct {
	ID     json.RawMessage // exactly as sent
	Method string
	Params json.RawMessage // nil when absent
	// Call holds a tools/call's params members, decoded once by Read.
	Call map[string]json.RawMessage
}

// Refusal is a JSON-RPC error the edge answers without going further: Code is -32600
// (answered with HTTP 400) or -32602, Msg the error's message.
type Refusal struct {
	ID   json.RawMessage // nil: answered with id null
	Code int
	Msg  string
}

// Read decodes body when it is one JSON-RPC request object that the edge can route.
// It returns (nil, nil) when go-sdk should serve the body as it is (notifications,
// batches, unparsable JSON, missing members: go-sdk's own errors are precise), and a
// refusal for the inputs JSON-RPC 2.0 §4–§5 and MCP rule out that go-sdk would answer
// wrongly: an empty batch ("[]": -32600, id null), an id that is not a string or an
// integer (true, {}, [1], 1.5, 1e3, null: -32600, id null — the id is never guessed), and a
// tools/call whose arguments are not an object (-32602, MCP "tools/call": arguments is an
// object; absent means {}).
func Read(body []byte) (*Request, *Refusal) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) == nil && len(batch) == 0 {
			return nil, &Refusal{Code: jsonrpc.CodeInvalidRequest, Msg: "invalid request: empty batch"}
		}
		return nil, nil
	}
	if !utf8.Valid(trimmed) {
		return nil, nil
	}
	m, ok := jsonobj.Members(trimmed)
	if !ok {
		return nil, nil
	}
	id, hasID := m["id"]
	if hasID && !ValidID(id) {
		return nil, &Refusal{Code: jsonrpc.CodeInvalidRequest,
			Msg: "invalid request: id must be a string or an integer"}
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil || !hasID || string(m["jsonrpc"]) != `"2.0"` {
		return nil, nil // a notification, or not a request go-sdk would accept either
	}
	req := &Request{ID: id, Method: method, Params: m["params"]}
	if method == "tools/call" {
		p, ok := jsonobj.Members(req.Params)
		if !ok {
			return nil, nil
		}
		for k := range p {
			if k != "name" && k != "arguments" && (strings.EqualFold(k, "name") || strings.EqualFold(k, "arguments")) {
				// A case-insensitive decoder upstream could take this one instead of the
				// member the gateway checked.
				return nil, &Refusal{ID: id, Code: jsonrpc.CodeInvalidParams,
					Msg: "invalid params: member " + strconv.Quote(k) + " differs from \"name\"/\"arguments\" only in case"}
			}
		}
		if a, has := p["arguments"]; has && (len(a) == 0 || a[0] != '{') {
			return nil, &Refusal{ID: id, Code: jsonrpc.CodeInvalidParams,
				Msg: "invalid params: tools/call arguments must be an object"}
		}
		req.Call = p
	}
	return req, nil
}

// ValidID reports whether raw is a JSON string or an integer (no fraction, no exponent):
// the ids MCP allows (JSON-RPC 2.0 §4: numbers should not have fractional parts; MCP: not
// null). Such an id is echoed byte for byte, so any length of integer round-trips.
func ValidID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case c == '-' || (c >= '0' && c <= '9'):
		digits := raw
		if c == '-' {
			digits = raw[1:]
		}
		if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
			return false
		}
		for _, d := range digits {
			if d < '0' || d > '9' {
				return false
			}
		}
		return true
	}
	return false
}

// CancelledID returns the requestId of body when body is one notifications/cancelled
// notification (MCP "Cancellation": no id of its own) naming a valid id; ok is false for
// anything else, which the edge then serves as it would any body.
func CancelledID(body []byte) (requestID json.RawMessage, ok bool) {
	if !bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
		return nil, false
	}
	m, ok := jsonobj.Members(bytes.TrimSpace(body))
	if !ok || string(m["method"]) != `"notifications/cancelled"` || m["id"] != nil {
		return nil, false
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m["params"], &p) != nil || !ValidID(p.RequestID) {
		return nil, false
	}
	return p.RequestID, true
}
