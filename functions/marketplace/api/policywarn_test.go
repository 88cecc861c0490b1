package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestPolicyWarnsEmptyRole (issue 44): a document that leaves a role with no tool of the
// workspace at all is valid, but POST /api/policies/validate (which the console calls
// before saving) and the save's answer both warn, naming the role; a document that leaves
// every role a tool, and a workspace with no tools, get no warning.
func TestPolicyWarnsEmptyRole(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	st, b := w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{"workspaceId": w.wsA, "name": "Tracker", "url": fixture(t).URL})
	want(t, "create", st, http.StatusCreated, b)
	const base = "@id(\"base\") permit(principal, action, resource);\n"
	noMembers := base + "@id(\"no-members\") forbid(principal in Role::\"member\", action, resource is Tool);\n"
	noOne := base + "@id(\"no-tools\") forbid(principal, action == Action::\"list\", resource is Tool);\n"
	warnings := func(b map[string]any) string {
		var out []string
		for _, x := range asSlice(b["warnings"]) {
			out = append(out, x.(string))
		}
		return strings.Join(out, " | ")
	}
	for _, c := range []struct {
		name, ws, text string
		want, not      []string
	}{
		{"members without tools", w.wsA, noMembers, []string{"the member role can list no tool of this workspace", "tools/list will be empty"}, []string{"admin role"}},
		{"nobody has tools", w.wsA, noOne, []string{"the member role can list no tool", "the admin role can list no tool"}, nil},
		{"everyone has tools", w.wsA, base, nil, []string{"role"}},
		{"a workspace without tools", w.wsB, noMembers, nil, []string{"role"}},
	} {
		token := w.adminA
		if c.ws == w.wsB {
			token = w.adminB
		}
		for _, route := range []struct{ method, path string }{{"POST", "/api/policies/validate"}, {"PUT", "/api/policies"}} {
			st, b := w.do(t, route.method, route.path, token, map[string]any{"workspaceId": c.ws, "text": c.text})
			want(t, c.name+" "+route.path, st, http.StatusOK, b)
			got := warnings(b)
			for _, s := range c.want {
				if !strings.Contains(got, s) {
					t.Errorf("%s %s: warnings %q, want %q", c.name, route.path, got, s)
				}
			}
			for _, s := range c.not {
				if strings.Contains(got, s) {
					t.Errorf("%s %s: warnings %q, want none with %q", c.name, route.path, got, s)
				}
			}
		}
	}
	st, b = w.do(t, "GET", "/api/policies?workspaceId="+w.wsA, w.adminA, nil)
	if st != http.StatusOK || b["text"] != base {
		t.Fatalf("the last save (with no warning) is not what is stored: %d %v", st, b)
	}
}
