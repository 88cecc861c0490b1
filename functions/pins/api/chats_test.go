package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
)

// TestChatsREST walks every status of GET/POST /api/chats through the local stack (real
// Postgres): the workspace default, member reads, admin writes, other workspaces as 404,
// validation, paging, and the event_log row of a creation.
func TestChatsREST(t *testing.T) {
	env := stacktest.New(t, nil)
	wsA, _, seeded := env.Workspace(t, "A")
	wsB, _, _ := env.Workspace(t, "B")
	admin := stacktest.Token(t, "alice", auth.RoleAdmin, wsA)
	member := stacktest.Token(t, "mallory", auth.RoleMember, wsA)
	adminAB := stacktest.Token(t, "ab", auth.RoleAdmin, wsA, wsB)
	outsider := stacktest.Token(t, "eve", auth.RoleAdmin, wsB)
	ghost := "00000000-0000-4000-8000-000000000000"
	super := stacktest.Token(t, "root", auth.RoleSuperuser)

	// Create: admin, workspace defaulted from the token; title trimmed.
	status, body := env.Do(t, "POST", "/api/chats", admin, map[string]any{"title": "  Release planning "})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var chat struct{ ID, WorkspaceID, Title, CreatedAt string }
	_ = json.Unmarshal(body, &chat)
	if chat.WorkspaceID != wsA || chat.Title != "Release planning" || chat.ID == "" || chat.CreatedAt == "" {
		t.Fatalf("created chat = %+v", chat)
	}
	if n := count(t, env, `SELECT count(*) FROM event_log WHERE action = 'chat.created' AND entity_id = $1 AND actor = 'alice'`, chat.ID); n != 1 {
		t.Fatalf("chat.created events = %d", n)
	}
	// The new chat is usable by the pins routes at once (it was 404 "no such chat" before).
	if status, body := env.Do(t, "GET", "/api/chats/"+chat.ID+"/pins", member, nil); status != http.StatusOK {
		t.Fatalf("pins of the new chat: %d %s", status, body)
	}

	// List: a member of A sees both chats of A, newest first; the default workspace applies.
	for _, path := range []string{"/api/chats", "/api/chats?workspaceId=" + wsA} {
		status, body = env.Do(t, "GET", path, member, nil)
		var out struct {
			Chats   []struct{ ID, Title string }
			HasMore bool
		}
		_ = json.Unmarshal(body, &out)
		if status != http.StatusOK || len(out.Chats) != 2 || out.Chats[0].ID != chat.ID || out.Chats[1].ID != seeded || out.HasMore {
			t.Fatalf("list %s: %d %s", path, status, body)
		}
	}
	// Paging: limit=1 says there is more.
	status, body = env.Do(t, "GET", "/api/chats?limit=1", member, nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"hasMore":true`) || strings.Contains(string(body), seeded) {
		t.Fatalf("limit=1: %d %s", status, body)
	}
	// A superuser may read any workspace but must name it.
	if status, body := env.Do(t, "GET", "/api/chats?workspaceId="+wsB, super, nil); status != http.StatusOK {
		t.Fatalf("superuser list: %d %s", status, body)
	}

	before := count(t, env, `SELECT count(*) FROM chats`)
	cases := []struct {
		name, method, path, token string
		body                      any
		status                    int
		code                      string
	}{
		{"no token list", "GET", "/api/chats", "", nil, 401, "UNAUTHENTICATED"},
		{"no token create", "POST", "/api/chats", "", map[string]any{}, 401, "UNAUTHENTICATED"},
		{"bad token", "GET", "/api/chats", "nope", nil, 401, "UNAUTHENTICATED"},
		{"member cannot create", "POST", "/api/chats", member, map[string]any{"title": "x"}, 403, "FORBIDDEN"},
		{"other workspace list", "GET", "/api/chats?workspaceId=" + wsB, admin, nil, 404, "NOT_FOUND"},
		{"other workspace create", "POST", "/api/chats", outsider, map[string]any{"workspaceId": wsA}, 404, "NOT_FOUND"},
		{"unknown workspace", "GET", "/api/chats?workspaceId=" + ghost, adminAB, nil, 404, "NOT_FOUND"},
		{"malformed workspace", "GET", "/api/chats?workspaceId=abc", admin, nil, 404, "NOT_FOUND"},
		{"superuser unknown workspace create", "POST", "/api/chats", super, map[string]any{"workspaceId": ghost}, 404, "NOT_FOUND"},
		{"ambiguous workspace list", "GET", "/api/chats", adminAB, nil, 400, "VALIDATION_ERROR"},
		{"ambiguous workspace create", "POST", "/api/chats", adminAB, map[string]any{"title": "x"}, 400, "VALIDATION_ERROR"},
		{"bad limit", "GET", "/api/chats?limit=0", admin, nil, 400, "VALIDATION_ERROR"},
		{"limit not a number", "GET", "/api/chats?limit=ten", admin, nil, 400, "VALIDATION_ERROR"},
		{"title too long", "POST", "/api/chats", admin, map[string]any{"title": strings.Repeat("é", 201)}, 400, "VALIDATION_ERROR"},
		{"empty title", "POST", "/api/chats", admin, map[string]any{"title": ""}, 400, "VALIDATION_ERROR"},
		{"blank title", "POST", "/api/chats", admin, map[string]any{"title": " \t "}, 400, "VALIDATION_ERROR"},
		{"unknown field", "POST", "/api/chats", admin, map[string]any{"name": "x"}, 400, "VALIDATION_ERROR"},
		{"malformed body", "POST", "/api/chats", admin, `{"title":`, 400, "VALIDATION_ERROR"},
		{"empty body", "POST", "/api/chats", admin, "", 400, "VALIDATION_ERROR"},
		{"title not a string", "POST", "/api/chats", admin, map[string]any{"title": 3}, 400, "VALIDATION_ERROR"},
		{"oversized body", "POST", "/api/chats", admin, `{"title":"` + strings.Repeat("a", 1<<20+10) + `"}`, 413, "PAYLOAD_TOO_LARGE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := env.Do(t, tc.method, tc.path, tc.token, tc.body)
			if status != tc.status || errCode(t, body) != tc.code {
				t.Fatalf("%s %s: %d %s, want %d %s", tc.method, tc.path, status, body, tc.status, tc.code)
			}
		})
	}
	if after := count(t, env, `SELECT count(*) FROM chats`); after != before {
		t.Fatalf("refused requests wrote chats: %d -> %d", before, after)
	}
	// A title left out is allowed: an untitled chat (an empty one is refused above).
	if status, body := env.Do(t, "POST", "/api/chats", adminAB, map[string]any{"workspaceId": wsB}); status != http.StatusCreated {
		t.Fatalf("untitled: %d %s", status, body)
	}
}
