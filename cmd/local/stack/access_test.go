package stack_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// accessLines returns the access lines of the captured logs.
func accessLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "access" {
			out = append(out, m)
		}
	}
	return out
}

// TestAccessLinePerRequest (issue 17): through the composed stack (wrapped as in Lambda),
// one proxied MCP call and one REST call each write exactly one access line, with the
// gateway's route pattern, status, bytes and duration, and a request_id equal to the
// X-Request-Id the client got and to the request id of the call's audit row; the REST
// line carries the principal and the workspace.
func TestAccessLinePerRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	a := w.ws["A"]
	before := len(accessLines(t, w.env.Logs.String()))
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp_%s_echo","arguments":{"message":"hi"}}}`, a.handle)
	resp, out := w.env.RPC(t, "/mcp/"+a.id, a.admin, body, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(out), "hi") {
		t.Fatalf("echo: %d %s", resp.StatusCode, out)
	}
	lines := accessLines(t, w.env.Logs.String())[before:]
	if len(lines) != 1 {
		t.Fatalf("%d access lines for one MCP request: %v", len(lines), lines)
	}
	l := lines[0]
	id := resp.Header.Get("X-Request-Id")
	if l["route"] != "/mcp/{workspaceId}" || l["method"] != "POST" || l["status"] != 200.0 ||
		l["request_id"] != id || id == "" || l["bytes"].(float64) < float64(len("hi")) {
		t.Errorf("access line %v (X-Request-Id %q)", l, id)
	}
	if _, ok := l["duration_ms"].(float64); !ok {
		t.Errorf("no duration_ms: %v", l)
	}
	if n := w.count(t, `SELECT count(*) FROM audit_events WHERE request_id = $1 AND workspace_id = $2`, id, a.id); n != 1 {
		t.Errorf("%d audit rows with the access line's request id", n)
	}

	before = len(accessLines(t, w.env.Logs.String()))
	st, _ := w.do(t, "GET", "/api/mcp-connections/"+a.conn, a.admin, nil)
	lines = accessLines(t, w.env.Logs.String())[before:]
	if st != 200 || len(lines) != 1 {
		t.Fatalf("REST: %d, %d access lines", st, len(lines))
	}
	l = lines[0]
	if l["route"] != "GET /api/mcp-connections/{id}" || l["principal"] != "admin-A" || l["workspace"] != a.id || l["status"] != 200.0 {
		t.Errorf("REST access line %v", l)
	}
}
