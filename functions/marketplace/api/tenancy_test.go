package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
)

// TestTenancyMatrix (docs/DESIGN.md §8): an admin or a member of workspace A can neither read,
// change, test nor install anything in workspace B. B's objects answer 404 to A's admin
// (their existence does not leak) and 403 to A's member (writes need admin first);
// nothing of B changes.
func TestTenancyMatrix(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	fx := fixture(t)
	entry := w.entry(t, "Shared Entry", fx.URL, "streamable-http")
	st, b := w.install(t, entry, w.wsB, w.adminB, map[string]any{"headers": map[string]string{"X-B": "b-secret"}})
	want(t, "B installs", st, http.StatusCreated, b)
	connB := b["id"].(string)
	memberB := stacktest.Token(t, "bea", auth.RoleMember, w.wsB)
	if got := w.gatewayTools(t, w.wsB, memberB); len(proxied(got, b["handle"].(string))) != 5 {
		t.Fatalf("B's gateway: %v", got)
	}
	before := w.count(t, `SELECT count(*) FROM event_log`)
	var beforeRow string
	_ = w.env.Pool.QueryRow(t.Context(), `SELECT row_to_json(c)::text FROM mcp_connections c WHERE id = $1`, connB).Scan(&beforeRow)

	type req struct {
		name, method, path string
		body               any
	}
	reqs := []req{
		{"get", "GET", "/api/mcp-connections/" + connB, nil},
		{"tools", "GET", "/api/mcp-connections/" + connB + "/tools", nil},
		{"list B", "GET", "/api/mcp-connections?workspaceId=" + w.wsB, nil},
		{"statuses B", "GET", "/api/mcp-connections/statuses?workspaceId=" + w.wsB, nil},
		{"catalog badge for B", "GET", "/api/mcp-marketplace?workspaceId=" + w.wsB, nil},
		{"update", "PUT", "/api/mcp-connections/" + connB, map[string]any{"name": "pwned"}},
		{"update url", "PUT", "/api/mcp-connections/" + connB, map[string]any{"url": "https://evil.example.com/mcp"}},
		{"delete", "DELETE", "/api/mcp-connections/" + connB, nil},
		{"toggle", "POST", "/api/mcp-connections/" + connB + "/toggle", nil},
		{"test", "POST", "/api/mcp-connections/" + connB + "/test", nil},
		{"refresh", "POST", "/api/mcp-connections/" + connB + "/refresh", nil},
		{"approve", "POST", "/api/mcp-connections/" + connB + "/tools/echo/approve", nil},
		{"install into B", "POST", "/api/mcp-marketplace/" + entry + "/install", map[string]any{"workspaceId": w.wsB}},
		{"uninstall from B", "DELETE", "/api/mcp-marketplace/" + entry + "/install?workspaceId=" + w.wsB, nil},
		{"create in B", "POST", "/api/mcp-connections", map[string]any{"name": "x", "url": fx.URL, "workspaceId": w.wsB}},
	}
	readOnly := map[string]bool{"catalog badge for B": true}
	for _, who := range []struct {
		name, token string
	}{{"admin of A", w.adminA}, {"member of A", w.memberA}} {
		for _, r := range reqs {
			t.Run(who.name+"/"+r.name, func(t *testing.T) {
				st, b := w.do(t, r.method, r.path, who.token, r.body)
				wantCode := http.StatusNotFound
				if who.token == w.memberA && !readOnly[r.name] {
					wantCode = http.StatusForbidden
				}
				if st != wantCode {
					t.Errorf("%d %v, want %d", st, b, wantCode)
				}
				if strings.Contains(errMessage(b), "Shared Entry") || strings.Contains(errMessage(b), connB) {
					t.Errorf("the refusal names B's object: %v", b)
				}
			})
		}
	}

	// Lists without a filter never show B's objects.
	for _, tok := range []string{w.adminA} {
		for _, p := range []string{"/api/mcp-connections", "/api/mcp-connections/statuses"} {
			_, raw := w.env.Do(t, "GET", p, tok, nil)
			if strings.Contains(string(raw), connB) {
				t.Errorf("%s shows B's connection to A", p)
			}
		}
	}
	// A's gateway does not list B's tools.
	if got := w.gatewayTools(t, w.wsA, w.adminA); slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "mcp_") }) {
		t.Errorf("A's gateway lists proxied tools: %v", got)
	}
	// Nothing of B changed, nothing was logged.
	var afterRow string
	_ = w.env.Pool.QueryRow(t.Context(), `SELECT row_to_json(c)::text FROM mcp_connections c WHERE id = $1`, connB).Scan(&afterRow)
	if afterRow != beforeRow {
		t.Errorf("B's connection changed:\n%s\n%s", beforeRow, afterRow)
	}
	if n := w.count(t, `SELECT count(*) FROM event_log`); n != before {
		t.Errorf("%d events logged by refused requests", n-before)
	}
	if n := w.count(t, `SELECT count(*) FROM mcp_connections WHERE workspace_id = $1`, w.wsB); n != 1 {
		t.Errorf("B has %d connections", n)
	}
	// B's own admin still can.
	st, b = w.do(t, "POST", "/api/mcp-connections/"+connB+"/test", w.adminB, nil)
	want(t, "B tests its own", st, http.StatusOK, b)
}
