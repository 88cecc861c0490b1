package message

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/shared/jsonobj"
)

// FuzzForwardDecoder fuzzes the edge's decoder and the forwarding path's byte edits: for any
// body, Read never panics; a refusal is -32600 (id null) or -32602 carrying exactly
// the id the body sent; a request to route has a valid id taken from the body as sent; and
// the params edits made before forwarding (tool name, downstream _meta, task) keep a JSON
// object a JSON object, with the upstream name in it.
func FuzzForwardDecoder(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_a_b","arguments":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":"z","method":"tools/call","params":{"name":"n","arguments":[],"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`[]`, `[{"jsonrpc":"2.0"}]`, `{"id":true}`, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"x","name":"y"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","task":{"ttl":5},"_meta":{"io.modelcontextprotocol/x":1,"k":2}}}`,
		`{"a":1,"a":2}`, ` {"jsonrpc":"2.0","id":-0,"method":"x"} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, ref := Read(body)
		if ref != nil {
			switch ref.Code {
			case -32600:
				if ref.ID != nil {
					t.Fatalf("-32600 with an id: %q", body)
				}
			case -32602:
				m, ok := jsonobj.Members(bytes.TrimSpace(body))
				if !ok || !bytes.Equal(m["id"], ref.ID) || !ValidID(ref.ID) {
					t.Fatalf("-32602 with id %s for %q", ref.ID, body)
				}
			default:
				t.Fatalf("refusal code %d for %q", ref.Code, body)
			}
			return
		}
		if req == nil {
			return
		}
		if !ValidID(req.ID) || !bytes.Contains(body, req.ID) {
			t.Fatalf("routed with id %s not as sent in %q", req.ID, body)
		}
		p, ok := jsonobj.Members(req.Params)
		if !ok {
			return
		}
		up, err := forward.UpstreamParams(req.Params, "upstream_tool")
		if err != nil {
			return
		}
		var got map[string]json.RawMessage
		if json.Unmarshal(up, &got) != nil || string(got["name"]) != `"upstream_tool"` {
			t.Fatalf("upstream params %s from %s", up, req.Params)
		}
		if _, err := jsonobj.DeleteMember(forward.PlainParams(up), "task"); err != nil {
			t.Fatalf("DeleteMember failed on %s: %v", up, err)
		}
		_ = p
	})
}
