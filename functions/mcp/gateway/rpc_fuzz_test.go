package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
)

// FuzzGatewayRPC drives the gateway's JSON-RPC request path through the full HTTP handler
// of the local stack (auth, workspace resolution, protocol guard, go-sdk, dispatch, the
// response limiter) with fuzzed bodies, protocol-version headers and endpoints. The caller
// is a member (no writes reach the database or an upstream). Whatever the input: no panic,
// never a 5xx (every input here is a client's mistake), and a non-empty JSON answer is
// valid JSON.
func FuzzGatewayRPC(f *testing.F) {
	env := stacktest.New(f, nil)
	ws, _, chat := env.Workspace(f, "F")
	other, _, _ := env.Workspace(f, "G")
	member := stacktest.Token(f, "fuzz", auth.RoleMember, ws)
	paths := []string{"/mcp", "/mcp/" + ws, "/mcp/" + other, "/mcp/" + ws + "/servers/nope", "/mcp/not-a-uuid",
		"/mcp?chat=" + chat, "/mcp?toolsets=catalog,,meta", "/mcp?chat=not-a-uuid"}
	for _, s := range []struct {
		body, version string
		path          uint8
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`, "", 0},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "2025-06-18", 1},
		{`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"agentpack_catalog_list","arguments":{"limit":3}}}`, "2025-06-18", 0},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agentpack_catalog_install","arguments":{"entryId":"00000000-0000-0000-0000-000000000000"}}}`, "2025-06-18", 1},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agentpack_tools_search","arguments":{"query":"\u0000"}}}`, "2025-06-18", 5},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mcp_nope_echo","arguments":[]}}`, "", 6},
		{`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"agentpack://catalog"}}`, "", 0},
		{`{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"x","arguments":{"a":1}}}`, "", 0},
		{`{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "2026-07-28", 0},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", 0},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, "", 0},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, "", 2},
		{`{"jsonrpc":"1.0","id":{},"method":7}`, "", 3},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentpack_catalog_get","arguments":{"entryId":"` + strings.Repeat("9", 40) + `"}}}`, "9999-99-99", 4},
		{`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, "", 7},
		{`{`, "", 0},
		{``, "", 0},
	} {
		f.Add([]byte(s.body), s.version, s.path)
	}
	h := env.Stack.Handler
	f.Fuzz(func(t *testing.T, body []byte, version string, path uint8) {
		if strings.ContainsAny(version, "\r\n\x00") || len(body) > 64<<10 {
			return
		}
		req := httptest.NewRequest(http.MethodPost, paths[int(path)%len(paths)], strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+member)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("status %d for a client's input %q (version %q): %s", rec.Code, body, version, rec.Body.String())
		}
		if ct := rec.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") && rec.Body.Len() > 0 && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("invalid JSON answer (%d) to %q: %s", rec.Code, body, rec.Body.String())
		}
		if strings.Contains(rec.Body.String(), `"errorId"`) && strings.Contains(rec.Body.String(), "-32603") {
			t.Fatalf("internal error for a client's input %q: %s", body, rec.Body.String())
		}
	})
}
