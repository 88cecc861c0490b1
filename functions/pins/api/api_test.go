package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/google/uuid"
)

func count(t *testing.T, env *stacktest.Env, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := env.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func errCode(t *testing.T, body []byte) string {
	t.Helper()
	var e struct{ Error struct{ Code string } }
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("not an error body: %s", body)
	}
	return e.Error.Code
}

// TestPinsREST walks every route and status of the pins function through the local
// stack (real Postgres, a real loopback upstream).
func TestPinsREST(t *testing.T) {
	env := stacktest.New(t, nil)
	wsA, projA, chatA := env.Workspace(t, "A")
	wsB, _, chatB := env.Workspace(t, "B")
	admin := stacktest.Token(t, "alice", auth.RoleAdmin, wsA)
	member := stacktest.Token(t, "mallory", auth.RoleMember, wsA)
	adminAB := stacktest.Token(t, "ab", auth.RoleAdmin, wsA, wsB)
	up := testpeer.NewFixture(t, nil)
	create := func(name string, body map[string]any, token string) string {
		body["name"], body["url"] = name, up.URL
		status, out := env.Do(t, "POST", "/api/mcp-connections", token, body)
		if status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", name, status, out)
		}
		var c struct{ ID string }
		_ = json.Unmarshal(out, &c)
		return c.ID
	}
	connA := create("Alpha", map[string]any{"workspaceId": wsA}, admin)
	connProj := create("Proj", map[string]any{"workspaceId": wsA, "projectId": projA}, admin)
	connB := create("Bravo", map[string]any{"workspaceId": wsB}, adminAB)
	pinsPath := "/api/chats/" + chatA + "/pins"
	events := func() int {
		return count(t, env, `SELECT count(*) FROM event_log WHERE action IN ('mcp.pinned', 'mcp.unpinned')`)
	}

	// Authentication.
	if status, body := env.Do(t, "GET", pinsPath, "", nil); status != http.StatusUnauthorized || errCode(t, body) != "UNAUTHENTICATED" {
		t.Fatalf("no token: %d %s", status, body)
	}
	// Empty list for a member.
	status, body := env.Do(t, "GET", pinsPath, member, nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"pins":[]`) {
		t.Fatalf("list: %d %s", status, body)
	}

	refusals := []struct {
		name   string
		token  string
		path   string
		body   any
		status int
		code   string
	}{
		{"member cannot pin", member, pinsPath, map[string]any{"connectionId": connA}, 403, "FORBIDDEN"},
		{"unknown chat", admin, "/api/chats/" + uuid.NewString() + "/pins", map[string]any{"connectionId": connA}, 404, "NOT_FOUND"},
		{"chat of another workspace", admin, "/api/chats/" + chatB + "/pins", map[string]any{"connectionId": connA}, 404, "NOT_FOUND"},
		{"unknown connection", admin, pinsPath, map[string]any{"connectionId": uuid.NewString()}, 404, "NOT_FOUND"},
		{"connection of a workspace the caller cannot see", admin, pinsPath, map[string]any{"connectionId": connB}, 404, "NOT_FOUND"},
		{"connection of another workspace", adminAB, pinsPath, map[string]any{"connectionId": connB}, 422, "INVALID_REFERENCE"},
		{"project-scoped connection", admin, pinsPath, map[string]any{"connectionId": connProj}, 422, "INVALID_REFERENCE"},
		{"malformed JSON", admin, pinsPath, `{"connectionId":`, 400, "VALIDATION_ERROR"},
		{"empty body", admin, pinsPath, "", 400, "VALIDATION_ERROR"},
		{"unknown field", admin, pinsPath, map[string]any{"connectionId": connA, "extra": 1}, 400, "VALIDATION_ERROR"},
		{"missing connectionId", admin, pinsPath, map[string]any{}, 400, "VALIDATION_ERROR"},
		{"connectionId not a UUID", admin, pinsPath, map[string]any{"connectionId": "x"}, 400, "VALIDATION_ERROR"},
		{"connectionId of the wrong type", admin, pinsPath, map[string]any{"connectionId": 7}, 400, "VALIDATION_ERROR"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			status, body := env.Do(t, "POST", tc.path, tc.token, tc.body)
			if status != tc.status || errCode(t, body) != tc.code {
				t.Fatalf("%d %s, want %d %s", status, body, tc.status, tc.code)
			}
		})
	}
	if n := count(t, env, `SELECT count(*) FROM chat_mcp_pins`); n != 0 || events() != 0 {
		t.Fatalf("refusals wrote %d pins, %d events", n, events())
	}

	// Create, duplicate, list.
	status, body = env.Do(t, "POST", pinsPath, admin, map[string]any{"connectionId": connA})
	if status != http.StatusCreated {
		t.Fatalf("pin: %d %s", status, body)
	}
	var pin struct {
		ID, ConnectionID, ConnectionName, Scope string
		Usable                                  bool
	}
	_ = json.Unmarshal(body, &pin)
	if pin.ConnectionID != connA || pin.ConnectionName != "Alpha" || pin.Scope != "workspace" || !pin.Usable {
		t.Fatalf("pin = %s", body)
	}
	if status, body := env.Do(t, "POST", pinsPath, admin, map[string]any{"connectionId": connA}); status != http.StatusConflict || errCode(t, body) != "CONFLICT" {
		t.Fatalf("duplicate: %d %s", status, body)
	}
	status, body = env.Do(t, "GET", pinsPath, member, nil)
	if status != http.StatusOK || !strings.Contains(string(body), pin.ID) {
		t.Fatalf("list: %d %s", status, body)
	}
	if status, _ := env.Do(t, "GET", "/api/chats/"+chatB+"/pins", admin, nil); status != http.StatusNotFound {
		t.Fatalf("list of another workspace's chat: %d", status)
	}

	// Resolved tools with their source names.
	status, body = env.Do(t, "GET", "/api/chats/"+chatA+"/tools", member, nil)
	if status != http.StatusOK {
		t.Fatalf("tools: %d %s", status, body)
	}
	var ts struct {
		Pinned bool
		Tools  []struct{ Name, Source, Kind, ConnectionID string }
	}
	_ = json.Unmarshal(body, &ts)
	if !ts.Pinned || len(ts.Tools) == 0 {
		t.Fatalf("tools = %s", body)
	}
	for _, tl := range ts.Tools {
		if tl.Source != "Alpha" || tl.ConnectionID != connA || tl.Kind != "proxied" {
			t.Fatalf("tool %+v", tl)
		}
	}
	if status, _ := env.Do(t, "GET", "/api/chats/"+chatB+"/tools", admin, nil); status != http.StatusNotFound {
		t.Fatalf("tools of another workspace's chat: %d", status)
	}

	// Delete: member 403, unknown 404, ok 204, again 404; wrong method 405.
	del := pinsPath + "/" + pin.ID
	if status, _ := env.Do(t, "DELETE", del, member, nil); status != http.StatusForbidden {
		t.Fatalf("member delete: %d", status)
	}
	if status, _ := env.Do(t, "DELETE", pinsPath+"/"+uuid.NewString(), admin, nil); status != http.StatusNotFound {
		t.Fatalf("unknown pin: %d", status)
	}
	if status, body := env.Do(t, "DELETE", del, admin, nil); status != http.StatusNoContent || len(body) != 0 {
		t.Fatalf("delete: %d %s", status, body)
	}
	if status, _ := env.Do(t, "DELETE", del, admin, nil); status != http.StatusNotFound {
		t.Fatalf("second delete: %d", status)
	}
	if status, _ := env.Do(t, "PUT", pinsPath, admin, nil); status != http.StatusMethodNotAllowed {
		t.Fatalf("PUT: %d", status)
	}
	if n := count(t, env, `SELECT count(*) FROM chat_mcp_pins`); n != 0 {
		t.Fatalf("pins left: %d", n)
	}
	if got := events(); got != 2 {
		t.Fatalf("events = %d, want 2 (pinned, unpinned)", got)
	}
	if n := count(t, env, `SELECT count(*) FROM event_log WHERE action = 'mcp.unpinned' AND entity_id = $1 AND actor = 'alice'`, connA); n != 1 {
		t.Fatalf("unpinned event missing")
	}
}

// TestChatListNamesWorkspace (issue 25): GET /api/chats names the listed workspace, so the
// console shows "Demo workspace" rather than an id prefix; a member sees it too, with or
// without workspaceId (a one-workspace token), and another workspace stays NOT_FOUND.
func TestChatListNamesWorkspace(t *testing.T) {
	env := stacktest.New(t, nil)
	wsA, _, _ := env.Workspace(t, "Named")
	wsB, _, _ := env.Workspace(t, "Other")
	member := stacktest.Token(t, "m", auth.RoleMember, wsA)
	for _, path := range []string{"/api/chats", "/api/chats?workspaceId=" + wsA} {
		st, b := env.Do(t, "GET", path, member, nil)
		var out struct{ Workspace struct{ ID, Name string } }
		if err := json.Unmarshal(b, &out); st != http.StatusOK || err != nil || out.Workspace.ID != wsA || !strings.Contains(out.Workspace.Name, "Named") {
			t.Fatalf("%s: %d %s", path, st, b)
		}
	}
	if st, b := env.Do(t, "GET", "/api/chats?workspaceId="+wsB, member, nil); st != http.StatusNotFound || strings.Contains(string(b), "Other") {
		t.Fatalf("other workspace: %d %s", st, b)
	}
}
