package identity

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// fixture is a fresh database with two workspaces (Fresh, not dbtest.Tx: Service takes a
// pool and runs its writes in db.InTx).
type fixture struct {
	svc  *Service
	pool *db.Pool
	a, b string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	pool, _ := dbtest.Fresh(t)
	f := &fixture{svc: &Service{Pool: pool}, pool: pool, a: uuid.NewString(), b: uuid.NewString()}
	for _, ws := range []string{f.a, f.b} {
		dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: ws, Name: "ws " + ws[:4]})
	}
	return f
}

func (f *fixture) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := f.pool.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// member makes personID a direct member of ws with role (db.MembershipInsert).
func (f *fixture) member(t *testing.T, ws, personID, role string) {
	t.Helper()
	if err := db.MembershipInsert(t.Context(), f.pool, ws, personID, role); err != nil {
		t.Fatalf("member %s in %s: %v", role, ws, err)
	}
}

// invite invites email to ws with role, by no person (db.InvitationInsert).
func (f *fixture) invite(t *testing.T, ws, email, role string) {
	t.Helper()
	if err := db.InvitationInsert(t.Context(), f.pool, ws, email, role, nil); err != nil {
		t.Fatalf("invite %s to %s: %v", email, ws, err)
	}
}

func (f *fixture) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := f.pool.QueryRow(t.Context(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSignInCreatesThenUpdates(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	c := Claims{Issuer: "https://idp.example", Subject: "u1", Email: "Ada@Example.com", EmailVerified: true, Name: "Ada"}
	p1, err := f.svc.SignIn(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uuid.Parse(p1.ID); err != nil || p1.Email != c.Email || p1.Name != "Ada" {
		t.Fatalf("first sign-in: %+v", p1)
	}
	c.Name, c.Groups = "Ada L.", []string{"eng"}
	p2, err := f.svc.SignIn(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if p2.ID != p1.ID || p2.Name != "Ada L." {
		t.Fatalf("second sign-in: %+v, want the same person renamed", p2)
	}
	got, err := f.svc.Person(ctx, p1.ID)
	if err != nil || !cmp.Equal(got.Groups, []string{"eng"}) {
		t.Fatalf("Person: %+v, %v", got, err)
	}
	// The same subject at another issuer is another person (OIDC: sub is unique per iss).
	p3, err := f.svc.SignIn(ctx, Claims{Issuer: "https://other.example", Subject: "u1"})
	if err != nil || p3.ID == p1.ID {
		t.Fatalf("other issuer: %+v, %v", p3, err)
	}
	if _, err := f.svc.Person(ctx, "not-a-uuid"); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("Person(not-a-uuid): %v", err)
	}
}

func TestSignInRefusesBadClaims(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("x", 3000)
	for _, tc := range []struct {
		name string
		c    Claims
	}{
		{"no issuer", Claims{Subject: "s"}},
		{"no subject", Claims{Issuer: "i"}},
		{"long issuer", Claims{Issuer: long, Subject: "s"}},
		{"long subject", Claims{Issuer: "i", Subject: long}},
		{"long name", Claims{Issuer: "i", Subject: "s", Name: long}},
		{"long email", Claims{Issuer: "i", Subject: "s", Email: long + "@x.example"}},
		{"not an email", Claims{Issuer: "i", Subject: "s", Email: "Ada <ada@x.example>"}},
		{"empty group", Claims{Issuer: "i", Subject: "s", Groups: []string{""}}},
		{"long group", Claims{Issuer: "i", Subject: "s", Groups: []string{long}}},
		{"many groups", Claims{Issuer: "i", Subject: "s", Groups: make([]string, 501)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := f.svc.SignIn(t.Context(), tc.c); apperr.CodeOf(err) != apperr.Validation {
				t.Fatalf("err %v, want VALIDATION_ERROR", err)
			}
		})
	}
	if n := f.count(t, "people"); n != 0 {
		t.Errorf("refused sign-ins stored %d people", n)
	}
}

func TestInvitationsBecomeMemberships(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.invite(t, f.a, "ada@example.com", "admin")
	f.invite(t, f.b, "ada@example.com", "member")

	// An unverified email claims nothing.
	p, err := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "s", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if ms, _ := f.svc.Memberships(ctx, p.ID); len(ms) != 0 {
		t.Fatalf("an unverified email claimed %v", ms)
	}
	// Verified (any case): both invitations become memberships and are gone.
	if _, err := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "s", Email: "ADA@example.com", EmailVerified: true}); err != nil {
		t.Fatal(err)
	}
	ms, err := f.svc.Memberships(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []Membership{{f.a, auth.RoleAdmin}, {f.b, auth.RoleMember}}
	if f.b < f.a {
		want[0], want[1] = want[1], want[0]
	}
	if d := cmp.Diff(want, ms); d != "" {
		t.Errorf("memberships (-want +got):\n%s", d)
	}
	if n := f.count(t, "invitations"); n != 0 {
		t.Errorf("%d invitations left", n)
	}
}

func TestMembershipsWithGroups(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	p, err := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "s", Groups: []string{"eng", "ops"}})
	if err != nil {
		t.Fatal(err)
	}
	f.member(t, f.a, p.ID, "member")
	f.exec(t, `INSERT INTO group_roles (workspace_id, group_name, role) VALUES ($1, 'ops', 'admin'), ($2, 'eng', 'member'), ($2, 'sales', 'admin')`, f.a, f.b)
	ms, err := f.svc.Memberships(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range ms {
		got[m.WorkspaceID] = m.Role
	}
	// A: member directly, admin by group ops → admin. B: member by group eng (sales is not theirs).
	if d := cmp.Diff(map[string]string{f.a: auth.RoleAdmin, f.b: auth.RoleMember}, got); d != "" {
		t.Errorf("roles (-want +got):\n%s", d)
	}
	list, err := f.svc.MemberList(ctx, &auth.Principal{Subject: "t", Role: auth.RoleAdmin, Workspaces: []string{f.b}}, f.b)
	if err != nil || len(list) != 1 || list[0].Source != "group" || list[0].PersonID != p.ID || !cmp.Equal(list[0].Groups, []string{"eng"}) {
		t.Errorf("B's member list: %+v, %v", list, err)
	}
	// Leaving the group at the next sign-in takes the group's role away.
	if _, err := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "s"}); err != nil {
		t.Fatal(err)
	}
	ms, _ = f.svc.Memberships(ctx, p.ID)
	if d := cmp.Diff([]Membership{{f.a, auth.RoleMember}}, ms); d != "" {
		t.Errorf("after leaving the groups (-want +got):\n%s", d)
	}
	if ms, err := f.svc.Memberships(ctx, uuid.NewString()); err != nil || len(ms) != 0 {
		t.Errorf("unknown person: %v, %v", ms, err)
	}
}

func TestPrincipal(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	p, _ := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "s"})
	_, err := f.svc.Principal(ctx, p.ID, "")
	if !errors.Is(err, ErrNoMembership) || apperr.CodeOf(err) != apperr.Forbidden {
		t.Fatalf("no membership: %v", err)
	}
	f.member(t, f.a, p.ID, "admin")
	f.member(t, f.b, p.ID, "member")
	for _, tc := range []struct {
		name, ws string
		want     auth.Principal
	}{
		{"admin of A", f.a, auth.Principal{Subject: p.ID, Role: auth.RoleAdmin, Workspaces: []string{f.a}}},
		{"member of B", f.b, auth.Principal{Subject: p.ID, Role: auth.RoleMember, Workspaces: []string{f.b}}},
	} {
		got, err := f.svc.Principal(ctx, p.ID, tc.ws)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d := cmp.Diff(&tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
	all, err := f.svc.Principal(ctx, p.ID, "")
	if err != nil || all.Role != auth.RoleMember || len(all.Workspaces) != 2 {
		t.Errorf("all workspaces: %+v, %v (the lowest role applies to all)", all, err)
	}
	other := uuid.NewString()
	if _, err := f.svc.Principal(ctx, p.ID, other); !errors.Is(err, ErrNoMembership) {
		t.Errorf("another workspace: %v", err)
	}
	if err := db.PersonSetSuperuser(ctx, f.pool, p.ID, true); err != nil {
		t.Fatal(err)
	}
	su, err := f.svc.Principal(ctx, p.ID, other)
	if err != nil || su.Role != auth.RoleSuperuser || !su.InWorkspace(other) {
		t.Errorf("superuser: %+v, %v", su, err)
	}
	if _, err := f.svc.Principal(ctx, uuid.NewString(), ""); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("unknown person: %v", err)
	}
}

func TestRemovedMemberLosesMembership(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p, _ := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "s"})
	f.member(t, f.a, p.ID, "member")
	if ms, _ := f.svc.Memberships(ctx, p.ID); len(ms) != 1 {
		t.Fatalf("memberships %v", ms)
	}
	if err := db.MembershipDelete(ctx, f.pool, f.a, p.ID); err != nil {
		t.Fatal(err)
	}
	if ms, _ := f.svc.Memberships(ctx, p.ID); len(ms) != 0 {
		t.Fatalf("a removed member still has %v", ms)
	}
}

// Groups are the groups of the last sign-in, for the authorization server's tokens, and
// Principal carries them for the pages that act as the session's person.
func TestGroups(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	p, _ := f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "s", Groups: []string{"eng", "design"}})
	if g, err := f.svc.Groups(ctx, p.ID); err != nil || !slices.Equal(g, []string{"eng", "design"}) {
		t.Fatalf("Groups = %v, %v", g, err)
	}
	f.member(t, f.a, p.ID, "member")
	if pr, err := f.svc.Principal(ctx, p.ID, f.a); err != nil || !slices.Equal(pr.Groups, []string{"eng", "design"}) {
		t.Errorf("Principal = %+v, %v", pr, err)
	}
	_, _ = f.svc.SignIn(ctx, Claims{Issuer: "i", Subject: "s"}) // the next sign-in has none
	if g, err := f.svc.Groups(ctx, p.ID); err != nil || len(g) != 0 {
		t.Errorf("Groups after a sign-in without groups = %v, %v", g, err)
	}
	if _, err := f.svc.Groups(ctx, uuid.NewString()); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("unknown person: %v", err)
	}
}
