package identity

import (
	"sync"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/google/uuid"
)

func adminOf(ws ...string) *auth.Principal {
	return &auth.Principal{Subject: "tok-admin", Role: auth.RoleAdmin, Workspaces: ws}
}

func TestMemberAddInvitesThenSignInJoins(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	m, err := f.svc.MemberAdd(ctx, adminOf(f.a), f.a, " Grace@Example.com ", auth.RoleMember)
	if err != nil || m.Status != "invited" || m.Email != "grace@example.com" || m.PersonID != "" {
		t.Fatalf("invite: %+v, %v", m, err)
	}
	if _, err := f.svc.MemberAdd(ctx, adminOf(f.a), f.a, "grace@example.com", auth.RoleAdmin); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("second invite: %v", err)
	}
	p, err := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "g", Email: "grace@example.com", EmailVerified: true})
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.svc.MemberList(ctx, adminOf(f.a), f.a)
	if err != nil || len(list) != 1 || list[0].PersonID != p.ID || list[0].Status != "active" || list[0].Role != auth.RoleMember {
		t.Fatalf("after sign-in: %+v, %v", list, err)
	}
	// Adding a person who has signed in is a membership at once.
	m, err = f.svc.MemberAdd(ctx, adminOf(f.b), f.b, "grace@example.com", auth.RoleAdmin)
	if err != nil || m.Status != "active" || m.PersonID != p.ID {
		t.Fatalf("add signed-in person: %+v, %v", m, err)
	}
	if _, err := f.svc.MemberAdd(ctx, adminOf(f.b), f.b, "grace@example.com", auth.RoleAdmin); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("add a member again: %v", err)
	}
	if ms, _ := f.svc.Memberships(ctx, p.ID); len(ms) != 2 {
		t.Fatalf("memberships %v", ms)
	}
}

func TestMemberChangesAndRemoval(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a1, _ := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "a1", Email: "a1@example.com", EmailVerified: true})
	a2, _ := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "a2", Email: "a2@example.com", EmailVerified: true})
	admin := adminOf(f.a)
	for _, e := range []string{"a1@example.com", "a2@example.com"} {
		if _, err := f.svc.MemberAdd(ctx, admin, f.a, e, auth.RoleAdmin); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.svc.MemberSetRole(ctx, admin, f.a, a2.ID, auth.RoleMember); err != nil {
		t.Fatal(err)
	}
	// a1 is now the only admin: neither demoted nor removed.
	if err := f.svc.MemberSetRole(ctx, admin, f.a, a1.ID, auth.RoleMember); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("demote the last admin: %v", err)
	}
	if err := f.svc.MemberRemove(ctx, admin, f.a, a1.ID); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("remove the last admin: %v", err)
	}
	if err := f.svc.MemberRemove(ctx, admin, f.a, a2.ID); err != nil {
		t.Fatal(err)
	}
	if ms, _ := f.svc.Memberships(ctx, a2.ID); len(ms) != 0 {
		t.Fatalf("removed member keeps %v", ms)
	}
	for name, err := range map[string]error{
		"remove again":  f.svc.MemberRemove(ctx, admin, f.a, a2.ID),
		"role of none":  f.svc.MemberSetRole(ctx, admin, f.a, uuid.NewString(), auth.RoleAdmin),
		"not a uuid":    f.svc.MemberRemove(ctx, admin, f.a, "x"),
		"no invitation": f.svc.InvitationRevoke(ctx, admin, f.a, "nobody@example.com"),
		"unknown ws":    f.svc.MemberRemove(ctx, adminOf(f.a, uuid.Nil.String()), uuid.Nil.String(), a1.ID),
		"unknown ws (add)": func() error {
			_, err := f.svc.MemberAdd(ctx, adminOf(uuid.Nil.String()), uuid.Nil.String(), "x@example.com", "member")
			return err
		}(),
	} {
		if apperr.CodeOf(err) != apperr.NotFound {
			t.Errorf("%s: %v, want NOT_FOUND", name, err)
		}
	}
	if _, err := f.svc.MemberAdd(ctx, admin, f.a, "z@example.com", auth.RoleMember); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.InvitationRevoke(ctx, admin, f.a, "Z@example.com"); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if n := f.count(t, "invitations"); n != 0 {
		t.Errorf("%d invitations left", n)
	}
}

func TestMemberInputRefused(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	admin := adminOf(f.a)
	for _, tc := range []struct{ email, role string }{
		{"", "member"}, {"not an email", "member"}, {"Ada <ada@example.com>", "member"}, {"a@b.example", "superuser"},
		{"a@b.example", ""}, {"a@b.example", "owner"},
	} {
		if _, err := f.svc.MemberAdd(ctx, admin, f.a, tc.email, tc.role); apperr.CodeOf(err) != apperr.Validation {
			t.Errorf("MemberAdd(%q, %q): %v", tc.email, tc.role, err)
		}
	}
	if err := f.svc.MemberSetRole(ctx, admin, f.a, uuid.NewString(), "superuser"); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("set role superuser: %v", err)
	}
	if n := f.count(t, "invitations") + f.count(t, "memberships"); n != 0 {
		t.Errorf("refused input stored %d rows", n)
	}
}

// TestMemberTenantIsolation: an admin of A, and a member of B, cannot list or change B.
func TestMemberTenantIsolation(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	b1, _ := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "b1", Email: "b1@example.com", EmailVerified: true})
	if _, err := f.svc.MemberAdd(ctx, adminOf(f.b), f.b, "b1@example.com", auth.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	memberOfB := &auth.Principal{Subject: "m", Role: auth.RoleMember, Workspaces: []string{f.b}}
	for _, who := range []*auth.Principal{adminOf(f.a), memberOfB, nil} {
		_, e1 := f.svc.MemberList(ctx, who, f.b)
		_, e2 := f.svc.MemberAdd(ctx, who, f.b, "x@example.com", auth.RoleAdmin)
		e3 := f.svc.MemberSetRole(ctx, who, f.b, b1.ID, auth.RoleMember)
		e4 := f.svc.MemberRemove(ctx, who, f.b, b1.ID)
		e5 := f.svc.InvitationRevoke(ctx, who, f.b, "x@example.com")
		for i, err := range []error{e1, e2, e3, e4, e5} {
			if apperr.CodeOf(err) != apperr.Forbidden {
				t.Errorf("%+v, call %d: %v, want FORBIDDEN", who, i+1, err)
			}
		}
	}
	if list, _ := f.svc.MemberList(ctx, adminOf(f.b), f.b); len(list) != 1 || list[0].Role != auth.RoleAdmin {
		t.Errorf("B changed: %+v", list)
	}
	su := &auth.Principal{Subject: "su", Role: auth.RoleSuperuser}
	if _, err := f.svc.MemberList(ctx, su, f.b); err != nil {
		t.Errorf("superuser: %v", err)
	}
}

// TestLastAdminRace: two admins removing each other at once leave one admin.
func TestLastAdminRace(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	var ids []string
	for _, s := range []string{"x", "y"} {
		p, _ := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: s, Email: s + "@example.com", EmailVerified: true})
		if _, err := f.svc.MemberAdd(ctx, adminOf(f.a), f.a, s+"@example.com", auth.RoleAdmin); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range ids {
		wg.Go(func() { errs[i] = f.svc.MemberRemove(ctx, adminOf(f.a), f.a, ids[i]) })
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("both or neither removed: %v, %v", errs[0], errs[1])
	}
	if n := f.count(t, "memberships"); n != 1 {
		t.Fatalf("%d admins left", n)
	}
}

func TestDevSignIn(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	p, err := f.svc.DevSignIn(ctx, auth.Principal{Subject: "dev-superuser", Role: auth.RoleSuperuser, Workspaces: []string{f.a}})
	if err != nil || p.Issuer != DevIssuer {
		t.Fatalf("%+v, %v", p, err)
	}
	pr, err := f.svc.Principal(ctx, p.ID, "")
	if err != nil || pr.Role != auth.RoleSuperuser {
		t.Fatalf("principal %+v, %v", pr, err)
	}
	p2, err := f.svc.DevSignIn(ctx, auth.Principal{Subject: "dev-member", Role: auth.RoleMember, Workspaces: []string{f.a}})
	if err != nil {
		t.Fatal(err)
	}
	if ms, _ := f.svc.Memberships(ctx, p2.ID); len(ms) != 1 || ms[0].Role != auth.RoleMember {
		t.Fatalf("dev member: %v", ms)
	}
}
