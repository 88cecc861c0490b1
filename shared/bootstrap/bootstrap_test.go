package bootstrap_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agentpack/gateway/migrations"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/bootstrap"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/identity"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/aws/aws-lambda-go/cfn"
)

func run(t *testing.T, pool *db.Pool, email string) *bootstrap.Result {
	t.Helper()
	r, err := bootstrap.Run(t.Context(), pool, bootstrap.Options{Migrations: migrations.FS, FirstAdminEmail: email})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunFirstAdminClaimedAtSignIn: on an empty database Run creates the first workspace
// and invites the first admin; that person's first sign-in with the verified email makes
// them an admin of it and a superuser. A sign-in with the same email unverified claims
// nothing.
func TestRunFirstAdminClaimedAtSignIn(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Empty(t)
	ctx := t.Context()
	r := run(t, pool, " First.Admin@Example.com ")
	if r.FirstAdmin != "invited" || r.WorkspaceID == "" || r.SchemaVersion == 0 {
		t.Fatalf("result %+v", r)
	}
	ws, err := db.WorkspaceGet(ctx, pool, r.WorkspaceID)
	if err != nil || ws.Name != bootstrap.DefaultWorkspaceName || ws.DefaultProjectID == nil {
		t.Fatalf("workspace %+v %v", ws, err)
	}
	ids := &identity.Service{Pool: pool}
	unverified, err := ids.SignIn(ctx, identity.Claims{Issuer: "https://idp.example", Subject: "other",
		Email: "first.admin@example.com", EmailVerified: false})
	if err != nil || unverified.Superuser {
		t.Fatalf("unverified sign-in: %+v %v", unverified, err)
	}
	p, err := ids.SignIn(ctx, identity.Claims{Issuer: "https://idp.example", Subject: "u1",
		Email: "first.admin@example.com", EmailVerified: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Superuser {
		t.Error("the first admin's sign-in did not make them a superuser")
	}
	if role, err := db.MembershipGet(ctx, pool, r.WorkspaceID, p.ID); err != nil || role != "admin" {
		t.Errorf("membership %q %v, want admin", role, err)
	}
	if again, err := db.PersonGet(ctx, pool, unverified.ID); err != nil || again.Superuser {
		t.Errorf("the unverified identity became a superuser: %+v %v", again, err)
	}
	// A superuser with no membership left still acts (to create a workspace), where anyone
	// else without one gets the no-membership answer.
	if err := db.MembershipDelete(ctx, pool, r.WorkspaceID, p.ID); err != nil {
		t.Fatal(err)
	}
	if pr, err := ids.Principal(ctx, p.ID, ""); err != nil || pr.Role != "superuser" {
		t.Errorf("superuser without membership: %+v %v", pr, err)
	}
	if _, err := ids.Principal(ctx, unverified.ID, ""); !errors.Is(err, identity.ErrNoMembership) {
		t.Errorf("a person without membership: %v, want ErrNoMembership", err)
	}
	// A second run with the same email invites nobody again (the invitation is claimed).
	if r2 := run(t, pool, "first.admin@example.com"); r2.FirstAdmin != "already" || r2.WorkspaceID != r.WorkspaceID {
		t.Errorf("second run %+v", r2)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM invitations`).Scan(&n); err != nil || n != 0 {
		t.Errorf("invitations after the second run: %d %v", n, err)
	}
}

// TestRunExistingPersonAndWorkspace: where workspaces existed before the first run (set up
// by hand), none is created and the oldest is the first; a first-admin email of a person
// who already signed in is granted admin and superuser at once. A new email on a later
// run is granted once more.
func TestRunExistingPersonAndWorkspace(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	if err := db.WorkspaceUpsert(ctx, pool, "0a000000-0000-4000-8000-000000000001", "Old"); err != nil {
		t.Fatal(err)
	}
	person, err := db.PersonUpsert(ctx, pool, &db.Person{Issuer: "https://idp", Subject: "s", Email: "ops@example.com", EmailVerified: true})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, pool, "ops@example.com")
	if r.WorkspaceID != "0a000000-0000-4000-8000-000000000001" || r.FirstAdmin != "granted" {
		t.Fatalf("result %+v", r)
	}
	if all, _ := db.WorkspaceList(ctx, pool); len(all) != 1 {
		t.Errorf("workspaces %+v, want the one that existed", all)
	}
	if p, _ := db.PersonGet(ctx, pool, person.ID); !p.Superuser {
		t.Error("the existing person is not a superuser")
	}
	if r := run(t, pool, "second@example.com"); r.FirstAdmin != "invited" {
		t.Errorf("a new first-admin email: %+v", r)
	}
}

// TestRunSeedKeepsAdminEdits: the seed rewrites a curated entry it wrote itself (a newer
// curated value reaches the catalog) but never one an admin edited since; runtime fields
// are never touched.
func TestRunSeedKeepsAdminEdits(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Empty(t)
	ctx := t.Context()
	run(t, pool, "")
	if _, err := pool.Exec(ctx, `UPDATE mcp_catalog_entries SET description = 'admin text' WHERE name = $1`, seed.Catalog[0].Name); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE mcp_catalog_entries SET install_count = 7 WHERE name = $1`, seed.Catalog[1].Name); err != nil {
		t.Fatal(err)
	}
	// A newer curated value of entry 1 (as a new release would ship) and of entry 0.
	for _, i := range []int{0, 1} {
		e := seed.Catalog[i]
		e.Description = "curated v2"
		if err := db.CatalogEntryUpsertSeed(ctx, pool, &e); err != nil {
			t.Fatal(err)
		}
	}
	var d0, d1 string
	var installs int
	if err := pool.QueryRow(ctx, `SELECT description FROM mcp_catalog_entries WHERE name = $1`, seed.Catalog[0].Name).Scan(&d0); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT description, install_count FROM mcp_catalog_entries WHERE name = $1`,
		seed.Catalog[1].Name).Scan(&d1, &installs); err != nil {
		t.Fatal(err)
	}
	if d0 != "admin text" {
		t.Errorf("the admin's edit was overwritten: %q", d0)
	}
	if d1 != "curated v2" || installs != 7 {
		t.Errorf("an unedited entry: description %q install_count %d, want the new curated text and 7", d1, installs)
	}
}

// TestRunRefusesBadInput: a malformed first-admin email or an over-long workspace name is
// VALIDATION_ERROR and touches nothing (not even the migrations).
func TestRunRefusesBadInput(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Empty(t)
	for _, o := range []bootstrap.Options{
		{FirstAdminEmail: "not an address"},
		{FirstAdminEmail: "Name <a@example.com>"},
		{FirstAdminEmail: "a@example.com, b@example.com"},
		{FirstWorkspaceName: strings.Repeat("x", db.MaxWorkspaceNameLen+1)},
	} {
		o.Migrations = migrations.FS
		_, err := bootstrap.Run(t.Context(), pool, o)
		if apperr.CodeOf(err) != apperr.Validation {
			t.Errorf("%+v: %v, want VALIDATION_ERROR", o, err)
		}
	}
	var tables int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("tables after refused runs: %d %v", tables, err)
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestHandlerErrors: the custom resource's answers on its error paths: an unreachable
// database, a bad FirstAdminEmail and a run cut short by the reserve before the deadline
// are errors (FAILED) with the reason; a Delete never opens the database; a reason is at
// most 2,000 bytes; the physical id is the same on every request.
func TestHandlerErrors(t *testing.T) {
	t.Parallel()
	opened := 0
	noDB := func(context.Context) (*db.Pool, error) { return nil, errors.New("dial tcp 10.0.0.1:5432: i/o timeout") }
	ev := func(typ cfn.RequestType, email string) cfn.Event {
		return cfn.Event{RequestType: typ, PhysicalResourceID: "agentpack-database-bootstrap",
			ResourceProperties: map[string]any{"FirstAdminEmail": email}}
	}
	bgs := t.Context()

	h := bootstrap.Handler(migrations.FS, noDB, quiet)
	if id, _, err := h(bgs, ev(cfn.RequestCreate, "")); err == nil || !strings.Contains(err.Error(), "connect to the database: dial tcp") ||
		id != bootstrap.PhysicalResourceID {
		t.Errorf("unreachable database: %q %v", id, err)
	}
	if id, _, err := h(bgs, ev(cfn.RequestDelete, "")); err != nil || id != bootstrap.PhysicalResourceID {
		t.Errorf("delete without a database: %q %v", id, err)
	}

	// The handler closes the pool it opens: each open is a pool of its own.
	_, url := dbtest.Empty(t)
	own := func(ctx context.Context) (*db.Pool, error) { opened++; return db.Open(ctx, url, 2) }
	h = bootstrap.Handler(migrations.FS, own, quiet)
	if _, _, err := h(bgs, ev(cfn.RequestUpdate, "nobody")); err == nil || !strings.Contains(err.Error(), "FirstAdminEmail") {
		t.Errorf("bad email: %v", err)
	}
	short, cancel := context.WithTimeout(bgs, bootstrap.Reserve/2)
	defer cancel()
	if _, _, err := h(short, ev(cfn.RequestCreate, "")); err == nil || !strings.Contains(err.Error(), "before the function's timeout") {
		t.Errorf("deadline inside the reserve: %v", err)
	}
	before := opened
	if _, _, err := h(bgs, ev(cfn.RequestDelete, "")); err != nil || opened != before {
		t.Errorf("delete opened the database (%d → %d) or failed: %v", before, opened, err)
	}

	// A long reason is cut to 2,000 bytes: a migration whose error is long.
	long := fstest.MapFS{"00001_long.sql": {Data: []byte("-- +goose Up\nSELECT '" + strings.Repeat("x", 5000) + "'::int;\n")}}
	h = bootstrap.Handler(long, own, quiet)
	_, _, err := h(bgs, ev(cfn.RequestCreate, ""))
	if err == nil || len(err.Error()) > 2000 || !strings.Contains(err.Error(), "00001_long.sql") {
		t.Errorf("long reason (%d bytes): %.200v", len(err.Error()), err)
	}
}
