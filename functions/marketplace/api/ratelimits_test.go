package api_test

import (
	"net/http"
	"testing"
)

// TestRateLimitREST (issue 24 item 2): set answers 201 then 200 for the same scope, list
// shows the limit with its (empty) usage, delete answers 204; every error path: a bad
// body is 400 with the field, a member is 403, another workspace (its limits, its
// connection) is 404, and an unknown id is 404. Each write is an event_log entry.
func TestRateLimitREST(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	st, b := w.do(t, "POST", "/api/mcp-connections", w.adminB, map[string]any{"name": "B's", "url": "http://127.0.0.1:1/mcp", "workspaceId": w.wsB})
	want(t, "connection of B", st, http.StatusCreated, b)
	connB := b["id"].(string)

	st, b = w.do(t, "POST", "/api/rate-limits", w.adminA, map[string]any{"workspaceId": w.wsA, "tool": "mcp_x_echo", "perMinute": 5})
	want(t, "create", st, http.StatusCreated, b)
	id := b["id"].(string)
	if b["perMinute"] != float64(5) || b["perDay"] != nil || b["principal"] != "" || b["tool"] != "mcp_x_echo" {
		t.Errorf("created: %v", b)
	}
	st, b = w.do(t, "POST", "/api/rate-limits", w.adminA, map[string]any{"workspaceId": w.wsA, "tool": "mcp_x_echo", "perMinute": 7, "perDay": 100})
	want(t, "replace", st, http.StatusOK, b)
	if b["id"] != id || b["perMinute"] != float64(7) || b["perDay"] != float64(100) {
		t.Errorf("replaced: %v", b)
	}
	st, b = w.do(t, "GET", "/api/rate-limits?workspaceId="+w.wsA, w.adminA, nil)
	want(t, "list", st, http.StatusOK, b)
	if l := b["limits"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != id || len(l[0].(map[string]any)["usage"].([]any)) != 0 {
		t.Errorf("list: %v", b)
	}

	for _, tt := range []struct {
		name   string
		method string
		path   string
		token  string
		body   any
		status int
		field  string
	}{
		{"no values", "POST", "/api/rate-limits", w.adminA, map[string]any{"workspaceId": w.wsA}, 400, "perMinute"},
		{"zero", "POST", "/api/rate-limits", w.adminA, map[string]any{"workspaceId": w.wsA, "perMinute": 0}, 400, "perMinute"},
		{"too large", "POST", "/api/rate-limits", w.adminA, map[string]any{"workspaceId": w.wsA, "perDay": 1 << 40}, 400, "perDay"},
		{"wrong type", "POST", "/api/rate-limits", w.adminA, `{"workspaceId":"` + w.wsA + `","perMinute":"ten"}`, 400, ""},
		{"unknown member", "POST", "/api/rate-limits", w.adminA, map[string]any{"workspaceId": w.wsA, "perMinute": 1, "burst": 3}, 400, ""},
		{"tool and connection", "POST", "/api/rate-limits", w.adminA, map[string]any{"workspaceId": w.wsA, "perMinute": 1, "tool": "t", "connectionId": connB}, 400, "tool"},
		{"bad tool name", "POST", "/api/rate-limits", w.adminA, map[string]any{"workspaceId": w.wsA, "perMinute": 1, "tool": "a b"}, 400, "tool"},
		{"bad connection id", "POST", "/api/rate-limits", w.adminA, map[string]any{"workspaceId": w.wsA, "perMinute": 1, "connectionId": "x"}, 400, "connectionId"},
		{"bad principal", "POST", "/api/rate-limits", w.adminA, map[string]any{"workspaceId": w.wsA, "perMinute": 1, "principal": " bob"}, 400, "principal"},
		{"member sets", "POST", "/api/rate-limits", w.memberA, map[string]any{"workspaceId": w.wsA, "perMinute": 1}, 403, ""},
		{"member lists", "GET", "/api/rate-limits?workspaceId=" + w.wsA, w.memberA, nil, 403, ""},
		{"member deletes", "DELETE", "/api/rate-limits/" + id + "?workspaceId=" + w.wsA, w.memberA, nil, 403, ""},
		{"other workspace sets", "POST", "/api/rate-limits", w.adminB, map[string]any{"workspaceId": w.wsA, "perMinute": 1}, 404, ""},
		{"other workspace lists", "GET", "/api/rate-limits?workspaceId=" + w.wsA, w.adminB, nil, 404, ""},
		{"other workspace deletes", "DELETE", "/api/rate-limits/" + id + "?workspaceId=" + w.wsA, w.adminB, nil, 404, ""},
		{"delete through own workspace", "DELETE", "/api/rate-limits/" + id + "?workspaceId=" + w.wsB, w.adminB, nil, 404, ""},
		{"other workspace's connection", "POST", "/api/rate-limits", w.adminA, map[string]any{"workspaceId": w.wsA, "perMinute": 1, "connectionId": connB}, 404, "connectionId"},
		{"unknown id", "DELETE", "/api/rate-limits/00000000-0000-0000-0000-000000000000?workspaceId=" + w.wsA, w.adminA, nil, 404, ""},
		{"malformed id", "DELETE", "/api/rate-limits/nope?workspaceId=" + w.wsA, w.adminA, nil, 404, ""},
		{"no workspace", "GET", "/api/rate-limits", w.su, nil, 400, "workspaceId"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, b := w.do(t, tt.method, tt.path, tt.token, tt.body)
			want(t, tt.name, st, tt.status, b)
			if tt.field != "" {
				d, _ := b["error"].(map[string]any)["details"].(map[string]any)
				if d["field"] != tt.field {
					t.Errorf("details %v, want field %s", d, tt.field)
				}
			}
		})
	}
	st, b = w.do(t, "DELETE", "/api/rate-limits/"+id+"?workspaceId="+w.wsA, w.adminA, nil)
	want(t, "delete", st, http.StatusNoContent, b)
	if got := w.events(t, id); len(got) != 3 || got[0] != "rate_limit.set" || got[2] != "rate_limit.deleted" {
		t.Errorf("events %v", got)
	}
	if n := w.count(t, `SELECT count(*) FROM rate_limits`); n != 0 {
		t.Errorf("%d limits left", n)
	}
}
