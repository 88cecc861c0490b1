package api_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/identity"
)

// TestMembersREST: an admin of A invites, sees, promotes and removes a member of A over
// REST (every answer checked against openapi.json by stacktest); removal is what the
// person's next refresh sees (identity.Service.Memberships).
func TestMembersREST(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	people := &identity.Service{Pool: w.env.Pool}
	base := "/api/workspaces/" + w.wsA + "/members"

	st, b := w.do(t, "POST", base, w.adminA, map[string]any{"email": "Grace@Example.com", "role": "member"})
	want(t, "invite", st, http.StatusCreated, b)
	if b["status"] != "invited" || b["email"] != "grace@example.com" {
		t.Fatalf("invite: %v", b)
	}
	p, err := people.SignIn(t.Context(), identity.Claims{Issuer: "https://idp.example", Subject: "g", Email: "grace@example.com", EmailVerified: true, Name: "Grace"})
	if err != nil {
		t.Fatal(err)
	}
	st, b = w.do(t, "GET", base, w.adminA, nil)
	want(t, "list", st, http.StatusOK, b)
	ms := b["members"].([]any)
	if len(ms) != 1 || ms[0].(map[string]any)["personId"] != p.ID || ms[0].(map[string]any)["status"] != "active" {
		t.Fatalf("list: %v", ms)
	}
	st, b = w.do(t, "PUT", base+"/"+p.ID, w.adminA, map[string]any{"role": "admin"})
	want(t, "promote", st, http.StatusNoContent, b)
	if got, _ := people.Memberships(t.Context(), p.ID); len(got) != 1 || got[0].Role != auth.RoleAdmin {
		t.Fatalf("after promote: %v", got)
	}
	// Grace is the only admin by membership: the last admin stays.
	st, b = w.do(t, "DELETE", base+"/"+p.ID, w.adminA, nil)
	want(t, "remove the last admin", st, http.StatusConflict, b)
	st, b = w.do(t, "PUT", base+"/"+p.ID, w.adminA, map[string]any{"role": "member"})
	want(t, "demote the last admin", st, http.StatusConflict, b)
	st, b = w.do(t, "POST", base, w.adminA, map[string]any{"email": "ada@example.com", "role": "admin"})
	want(t, "invite ada", st, http.StatusCreated, b)
	ada, _ := people.SignIn(t.Context(), identity.Claims{Issuer: "https://idp.example", Subject: "a", Email: "ada@example.com", EmailVerified: true})
	st, b = w.do(t, "DELETE", base+"/"+p.ID, w.adminA, nil)
	want(t, "remove", st, http.StatusNoContent, b)
	if got, _ := people.Memberships(t.Context(), p.ID); len(got) != 0 {
		t.Fatalf("a removed member still has %v", got)
	}
	if got, _ := people.Memberships(t.Context(), ada.ID); len(got) != 1 {
		t.Fatalf("ada: %v", got)
	}
	st, b = w.do(t, "POST", base, w.adminA, map[string]any{"email": "zed@example.com", "role": "member"})
	want(t, "invite zed", st, http.StatusCreated, b)
	st, b = w.do(t, "DELETE", "/api/workspaces/"+w.wsA+"/invitations/"+url.PathEscape("zed@example.com"), w.adminA, nil)
	want(t, "revoke", st, http.StatusNoContent, b)
}

// TestMembersRESTRefusals: bad input is a precise 4xx that stores nothing; another
// workspace's admin and a member get 403; no token is 401.
func TestMembersRESTRefusals(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	baseA := "/api/workspaces/" + w.wsA + "/members"
	baseB := "/api/workspaces/" + w.wsB + "/members"
	for _, tc := range []struct {
		name, method, path, token string
		body                      any
		status                    int
		code                      string
	}{
		{"no token", "GET", baseA, "", nil, http.StatusUnauthorized, "UNAUTHENTICATED"},
		{"member lists", "GET", baseA, w.memberA, nil, http.StatusForbidden, "FORBIDDEN"},
		{"member invites", "POST", baseA, w.memberA, map[string]any{"email": "x@example.com", "role": "member"}, http.StatusForbidden, "FORBIDDEN"},
		{"admin of A lists B", "GET", baseB, w.adminA, nil, http.StatusForbidden, "FORBIDDEN"},
		{"admin of A invites into B", "POST", baseB, w.adminA, map[string]any{"email": "x@example.com", "role": "admin"}, http.StatusForbidden, "FORBIDDEN"},
		{"admin of A changes B", "PUT", baseB + "/00000000-0000-0000-0000-000000000001", w.adminA, map[string]any{"role": "admin"}, http.StatusForbidden, "FORBIDDEN"},
		{"admin of A removes from B", "DELETE", baseB + "/00000000-0000-0000-0000-000000000001", w.adminA, nil, http.StatusForbidden, "FORBIDDEN"},
		{"admin of A revokes in B", "DELETE", "/api/workspaces/" + w.wsB + "/invitations/x@example.com", w.adminA, nil, http.StatusForbidden, "FORBIDDEN"},
		{"bad email", "POST", baseA, w.adminA, map[string]any{"email": "nope", "role": "member"}, http.StatusBadRequest, "VALIDATION_ERROR"},
		{"bad role", "POST", baseA, w.adminA, map[string]any{"email": "x@example.com", "role": "superuser"}, http.StatusBadRequest, "VALIDATION_ERROR"},
		{"unknown field", "POST", baseA, w.adminA, map[string]any{"email": "x@example.com", "role": "member", "workspaceId": w.wsB}, http.StatusBadRequest, "VALIDATION_ERROR"},
		{"no body", "POST", baseA, w.adminA, nil, http.StatusBadRequest, "VALIDATION_ERROR"},
		{"role of a stranger", "PUT", baseA + "/00000000-0000-0000-0000-000000000001", w.adminA, map[string]any{"role": "admin"}, http.StatusNotFound, "NOT_FOUND"},
		{"remove a stranger", "DELETE", baseA + "/not-a-uuid", w.adminA, nil, http.StatusNotFound, "NOT_FOUND"},
		{"revoke nothing", "DELETE", "/api/workspaces/" + w.wsA + "/invitations/x@example.com", w.adminA, nil, http.StatusNotFound, "NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := w.do(t, tc.method, tc.path, tc.token, tc.body)
			if st != tc.status || errCode(b) != tc.code {
				t.Fatalf("%d %v, want %d %s", st, b, tc.status, tc.code)
			}
		})
	}
	if n := w.count(t, `SELECT (SELECT count(*) FROM invitations) + (SELECT count(*) FROM memberships)`); n != 0 {
		t.Fatalf("refusals stored %d rows", n)
	}
	// A superuser may manage any workspace.
	st, b := w.do(t, "GET", baseB, stacktest.Token(t, "root", auth.RoleSuperuser), nil)
	want(t, "superuser lists B", st, http.StatusOK, b)
}
