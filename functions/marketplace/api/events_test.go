package api_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
)

// TestEventList checks GET /api/events: an admin reads the workspace's event_log newest
// first, filtered by entity type and action, paged by before; every refusal has its status.
func TestEventList(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	up := testpeer.NewFixture(t, nil)
	connID, _ := w.connection(t, "Alpha", up.URL, w.wsA, nil)
	st, b := w.do(t, "POST", "/api/mcp-connections/"+connID+"/toggle", w.adminA, nil)
	want(t, "toggle", st, http.StatusOK, b)
	st, b = w.do(t, "POST", "/api/chats", w.adminA, map[string]any{"title": "c"})
	want(t, "chat", st, http.StatusCreated, b)

	st, b = w.do(t, "GET", "/api/events", w.adminA, nil)
	want(t, "list", st, http.StatusOK, b)
	evs := b["events"].([]any)
	if len(evs) < 3 || b["hasMore"] != false {
		t.Fatalf("events: %v", b)
	}
	first := evs[0].(map[string]any)
	if first["action"] != "chat.created" || first["actor"] != "alice" || first["entityType"] != "chat" {
		t.Fatalf("newest event = %v", first)
	}
	// Filter by entity type and by action.
	st, b = w.do(t, "GET", "/api/events?workspaceId="+w.wsA+"&entityType=mcp_connection", w.adminA, nil)
	want(t, "filter entity", st, http.StatusOK, b)
	for _, e := range b["events"].([]any) {
		if e.(map[string]any)["entityType"] != "mcp_connection" || e.(map[string]any)["entityId"] != connID {
			t.Fatalf("entity filter let through %v", e)
		}
	}
	for _, et := range db.EventEntityTypes {
		st, b := w.do(t, "GET", "/api/events?entityType="+et, w.adminA, nil)
		want(t, "entity type "+et, st, http.StatusOK, b)
	}
	st, b = w.do(t, "GET", "/api/events?entityType=bogus", w.adminA, nil)
	if e, _ := b["error"].(map[string]any); st != http.StatusBadRequest || !strings.Contains(fmt.Sprint(e["message"]), "mcp_connection") {
		t.Fatalf("bogus entity type: %d %v", st, b)
	}
	st, b = w.do(t, "GET", "/api/events?action=chat.created", w.adminA, nil)
	want(t, "filter action", st, http.StatusOK, b)
	if n := len(b["events"].([]any)); n != 1 {
		t.Fatalf("action filter: %d events", n)
	}
	// Paging.
	st, b = w.do(t, "GET", "/api/events?limit=1", w.adminA, nil)
	want(t, "page 1", st, http.StatusOK, b)
	next, ok := b["nextBefore"].(float64)
	if !ok || b["hasMore"] != true {
		t.Fatalf("page 1: %v", b)
	}
	st, b = w.do(t, "GET", "/api/events?limit=1&before="+strconv.Itoa(int(next)), w.adminA, nil)
	want(t, "page 2", st, http.StatusOK, b)
	if id := b["events"].([]any)[0].(map[string]any)["id"].(float64); id >= next {
		t.Fatalf("page 2 starts at %v, not before %v", id, next)
	}
	// Workspace B sees none of A's events.
	st, b = w.do(t, "GET", "/api/events", w.adminB, nil)
	want(t, "B", st, http.StatusOK, b)
	if n := len(b["events"].([]any)); n != 0 {
		t.Fatalf("B sees %d events of A", n)
	}

	adminAB := stacktest.Token(t, "ab", auth.RoleAdmin, w.wsA, w.wsB)
	for _, tc := range []struct {
		name, path, token string
		status            int
		code              string
	}{
		{"no token", "/api/events", "", 401, "UNAUTHENTICATED"},
		{"member", "/api/events", w.memberA, 403, "FORBIDDEN"},
		{"other workspace", "/api/events?workspaceId=" + w.wsB, w.adminA, 404, "NOT_FOUND"},
		{"ambiguous", "/api/events", adminAB, 400, "VALIDATION_ERROR"},
		{"superuser must name one", "/api/events", w.su, 400, "VALIDATION_ERROR"},
		{"bad before", "/api/events?before=-1", w.adminA, 400, "VALIDATION_ERROR"},
		{"bad limit", "/api/events?limit=201", w.adminA, 400, "VALIDATION_ERROR"},
		{"unknown entity type", "/api/events?entityType=bogus", w.adminA, 400, "VALIDATION_ERROR"},
		{"entity type in another case", "/api/events?entityType=CHAT", w.adminA, 400, "VALIDATION_ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := w.do(t, "GET", tc.path, tc.token, nil)
			if st != tc.status || errCode(b) != tc.code {
				t.Fatalf("%d %v, want %d %s", st, b, tc.status, tc.code)
			}
		})
	}
}
