package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/identity"
)

// TestWorkspaceCreateREST: a superuser creates a workspace over REST (checked against
// openapi.json by stacktest): a person who signed in becomes its admin and can add members
// at once; a superuser token whose subject is no person creates one without an admin.
// Admins, members, bad names and no token are refused and write nothing.
func TestWorkspaceCreateREST(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	ctx := t.Context()
	people := &identity.Service{Pool: w.env.Pool}
	p, err := people.SignIn(ctx, identity.Claims{Issuer: "https://idp.example", Subject: "root", Email: "root@example.com", EmailVerified: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PersonSetSuperuser(ctx, w.env.Pool, p.ID, true); err != nil {
		t.Fatal(err)
	}
	suPerson := stacktest.Token(t, p.ID, auth.RoleSuperuser)

	count := func() int {
		all, err := db.WorkspaceList(ctx, w.env.Pool)
		if err != nil {
			t.Fatal(err)
		}
		return len(all)
	}
	before := count()
	for _, tc := range []struct {
		name, token string
		body        any
		status      int
		code        string
	}{
		{"no token", "", map[string]any{"name": "X"}, http.StatusUnauthorized, "UNAUTHENTICATED"},
		{"admin", w.adminA, map[string]any{"name": "X"}, http.StatusForbidden, "FORBIDDEN"},
		{"member", w.memberA, map[string]any{"name": "X"}, http.StatusForbidden, "FORBIDDEN"},
		{"empty name", suPerson, map[string]any{"name": "  "}, http.StatusBadRequest, "VALIDATION_ERROR"},
		{"long name", suPerson, map[string]any{"name": strings.Repeat("n", 201)}, http.StatusBadRequest, "VALIDATION_ERROR"},
		{"unknown field", suPerson, map[string]any{"name": "X", "owner": "me"}, http.StatusBadRequest, "VALIDATION_ERROR"},
	} {
		st, b := w.do(t, "POST", "/api/workspaces", tc.token, tc.body)
		if st != tc.status || errCode(b) != tc.code {
			t.Errorf("%s: %d %v, want %d %s", tc.name, st, b, tc.status, tc.code)
		}
	}
	if n := count(); n != before {
		t.Fatalf("refused calls wrote workspaces: %d → %d", before, n)
	}

	st, b := w.do(t, "POST", "/api/workspaces", suPerson, map[string]any{"name": " Platform "})
	want(t, "create", st, http.StatusCreated, b)
	id, _ := b["id"].(string)
	if b["name"] != "Platform" || b["creatorIsAdmin"] != true || b["defaultProjectId"] == "" {
		t.Fatalf("create: %v", b)
	}
	if role, err := db.MembershipGet(ctx, w.env.Pool, id, p.ID); err != nil || role != auth.RoleAdmin {
		t.Errorf("creator's role %q %v, want admin", role, err)
	}
	st, b = w.do(t, "POST", "/api/workspaces/"+id+"/members", suPerson, map[string]any{"email": "dev@example.com", "role": "member"})
	want(t, "invite into the new workspace", st, http.StatusCreated, b)

	st, b = w.do(t, "POST", "/api/workspaces", w.su, map[string]any{"name": "Ops"})
	want(t, "create without a person", st, http.StatusCreated, b)
	if b["creatorIsAdmin"] != false {
		t.Errorf("a token with no person became an admin: %v", b)
	}
	if n := count(); n != before+2 {
		t.Errorf("workspaces %d, want %d", n, before+2)
	}
}
