package stack_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
)

// world is the cross-cutting test world: the whole stack, two workspaces each with a
// member and an admin, a superuser, one catalog entry (a loopback fixture upstream)
// installed in both workspaces, and a pin in each workspace's chat.
type world struct {
	env *stacktest.Env
	fx  *testpeer.Fixture
	ws  map[string]*tenant // "A", "B"
	su  string
	// entry is the catalog entry both workspaces installed.
	entry string
}

// tenant is one workspace and its objects.
type tenant struct {
	id, project, chat string
	member, admin     string
	conn, handle      string // the install of entry
	pin               string
}

// secretHeader is planted in every connection's headers; no log line, audit row, API
// answer or catalog document may ever contain it.
const secretHeader = "planted-secret-7f3a9c"

func newWorld(t *testing.T, o *stacktest.Options) *world {
	t.Helper()
	env := stacktest.New(t, o)
	w := &world{env: env, ws: map[string]*tenant{}}
	w.fx = testpeer.NewFixture(t, nil)
	w.su = stacktest.Token(t, "root", auth.RoleSuperuser)
	st, b := w.do(t, "POST", "/api/mcp-marketplace", w.su, map[string]any{
		"name": "Shared Fixture", "url": w.fx.URL, "transportType": "streamable-http", "category": "testing",
		"headers": map[string]string{"X-Api-Key": "{{API_KEY}}"},
	})
	mustStatus(t, "create entry", st, http.StatusCreated, b)
	w.entry = b["id"].(string)
	for _, name := range []string{"A", "B"} {
		tn := &tenant{}
		tn.id, tn.project, tn.chat = env.Workspace(t, name)
		tn.member = stacktest.Token(t, "member-"+name, auth.RoleMember, tn.id)
		tn.admin = stacktest.Token(t, "admin-"+name, auth.RoleAdmin, tn.id)
		st, b := w.do(t, "POST", "/api/mcp-marketplace/"+w.entry+"/install", tn.admin, map[string]any{
			"workspaceId": tn.id, "headers": map[string]string{"X-Api-Key": secretHeader}})
		mustStatus(t, "install in "+name, st, http.StatusCreated, b)
		tn.conn, tn.handle = b["id"].(string), b["handle"].(string)
		st, b = w.do(t, "POST", "/api/chats/"+tn.chat+"/pins", tn.admin, map[string]any{"connectionId": tn.conn})
		mustStatus(t, "pin in "+name, st, http.StatusCreated, b)
		tn.pin = b["id"].(string)
		w.ws[name] = tn
	}
	return w
}

// do sends a REST call and returns the status and the decoded body (nil when empty).
func (w *world) do(t testing.TB, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	st, raw := w.env.Do(t, method, path, token, body)
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: answer is not a JSON object: %v: %s", method, path, err, raw)
		}
	}
	return st, m
}

// rpc posts one JSON-RPC request and returns the HTTP status and the decoded answer.
func (w *world) rpc(t testing.TB, path, token, method string, params any, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	body := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		body["params"] = params
	}
	j, _ := json.Marshal(body)
	if hdr == nil {
		hdr = map[string]string{}
	}
	if hdr["Mcp-Protocol-Version"] == "" {
		hdr["Mcp-Protocol-Version"] = "2025-06-18"
	}
	resp, raw := w.env.RPC(t, path, token, string(j), hdr)
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: not JSON: %v: %s", path, method, err, raw)
		}
	}
	return resp.StatusCode, m
}

// call is tools/call of name with args on path; it returns the status, the answer, and a
// short outcome: "ok", the envelope error code (built-ins), "upstream-error" (a proxied
// result with isError), or "rpc: <message>" for a JSON-RPC error.
func (w *world) call(t testing.TB, path, token, name string, args map[string]any, hdr map[string]string) (int, map[string]any, string) {
	t.Helper()
	st, m := w.rpc(t, path, token, "tools/call", map[string]any{"name": name, "arguments": args}, hdr)
	return st, m, outcome(m)
}

func outcome(m map[string]any) string {
	if e, ok := m["error"].(map[string]any); ok {
		return fmt.Sprintf("rpc: %v", e["message"])
	}
	r, _ := m["result"].(map[string]any)
	if sc, ok := r["structuredContent"].(map[string]any); ok {
		if okv, _ := sc["ok"].(bool); okv {
			return "ok"
		}
		if e, ok := sc["error"].(map[string]any); ok {
			return fmt.Sprint(e["code"])
		}
	}
	if isErr, _ := r["isError"].(bool); isErr {
		return "upstream-error"
	}
	if r != nil {
		return "ok"
	}
	return "no result"
}

// toolNames lists the tools of a tools/list answer.
func toolNames(m map[string]any) []string {
	r, _ := m["result"].(map[string]any)
	ts, _ := r["tools"].([]any)
	var out []string
	for _, x := range ts {
		out = append(out, x.(map[string]any)["name"].(string))
	}
	return out
}

func (w *world) count(t testing.TB, sql string, args ...any) int {
	t.Helper()
	if strings.Contains(sql, "audit_events") {
		w.env.FlushAudit(t)
	}
	var n int
	if err := w.env.Pool.QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func mustStatus(t testing.TB, what string, got, want int, body map[string]any) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: status %d, want %d: %v", what, got, want, body)
	}
}

// hasPrefix reports whether any name starts with prefix.
func hasPrefix(names []string, prefix string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

// crossRows counts rows that tie one workspace's object to another workspace: audit rows
// naming a connection of another workspace, pins of a chat to another workspace's
// connection, events about a connection logged under another workspace. The answer must
// always be 0.
func (w *world) crossRows(t testing.TB) int {
	t.Helper()
	w.env.FlushAudit(t)
	return w.count(t, `SELECT
	 (SELECT count(*) FROM audit_events a JOIN mcp_connections c ON c.id = a.connection_id
	   WHERE c.workspace_id IS NOT NULL AND a.workspace_id IS DISTINCT FROM c.workspace_id)
	+(SELECT count(*) FROM chat_mcp_pins p JOIN chats ch ON ch.id = p.chat_id JOIN mcp_connections c ON c.id = p.connection_id
	   WHERE c.workspace_id IS NOT NULL AND c.workspace_id <> ch.workspace_id)
	+(SELECT count(*) FROM event_log e JOIN mcp_connections c ON c.id::text = e.entity_id
	   WHERE e.workspace_id IS NOT NULL AND c.workspace_id IS NOT NULL AND e.workspace_id <> c.workspace_id)`)
}
