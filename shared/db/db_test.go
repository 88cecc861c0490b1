package db_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

func mustWorkspace(t *testing.T, pool *db.Pool, id string) {
	t.Helper()
	if err := db.WorkspaceUpsert(context.Background(), pool, id, "ws "+id[:4]); err != nil {
		t.Fatal(err)
	}
}

const wsA = "aaaaaaaa-0000-4000-8000-000000000001"

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	if err := db.Migrate(t.Context(), pool); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
}

func TestAuditTablesAreAppendOnly(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	if err := db.AuditEventInsert(ctx, pool, &db.AuditEvent{Principal: "p", Tool: "t", Kind: "builtin", ArgsDigest: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := db.EventInsert(ctx, pool, &db.Event{EntityType: "mcp_connection", EntityID: "1", Action: "a", Actor: "p"}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE audit_events SET tool = 'x'`, `DELETE FROM audit_events`, `TRUNCATE audit_events`,
		`UPDATE event_log SET action = 'x'`, `DELETE FROM event_log`, `TRUNCATE event_log`,
	} {
		if _, err := pool.Exec(ctx, stmt); err == nil {
			t.Errorf("%s: succeeded, want refused", stmt)
		}
	}
	var n int
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM audit_events`).Scan(&n)
	if n != 1 {
		t.Errorf("audit rows = %d, want 1", n)
	}
}

func TestInterpretErrors(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	mustWorkspace(t, pool, wsA)
	if _, err := db.ConnectionGet(ctx, pool, "not-a-uuid"); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("malformed id: %v, want NOT_FOUND", err)
	}
	if _, err := db.ConnectionGet(ctx, pool, "aaaaaaaa-0000-4000-8000-00000000ffff"); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("missing id: %v, want NOT_FOUND", err)
	}
	missing := "bbbbbbbb-0000-4000-8000-000000000009"
	_, err := db.ConnectionCreate(ctx, pool, &db.ConnectionNew{Name: "x", URL: "http://x", TransportType: "sse", Source: "manual", WorkspaceID: &missing})
	if apperr.CodeOf(err) != apperr.InvalidReference {
		t.Errorf("unknown workspace: %v, want INVALID_REFERENCE", err)
	}
	if err := db.WorkspaceUpsert(ctx, pool, wsA, "again"); err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `INSERT INTO workspaces (id, name) VALUES ($1, 'dup')`, wsA)
	if apperr.CodeOf(db.Interpret(err)) != apperr.Conflict {
		t.Errorf("duplicate: %v, want CONFLICT", err)
	}
}

func TestConnectionHandlesAreUnique(t *testing.T) {
	t.Parallel()
	q := dbtest.Tx(t)
	ws := dbtest.Workspace(t, q, dbtest.WorkspaceOpts{})
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		c := dbtest.Connection(t, q, dbtest.ConnectionOpts{Name: "GitHub Copilot!", URL: "http://x", WorkspaceID: &ws})
		if seen[c.Handle] {
			t.Fatalf("handle %q reused", c.Handle)
		}
		seen[c.Handle] = true
	}
	if !seen["githubcopilo"] || !seen["githubcopilo2"] || !seen["githubcopilo3"] {
		t.Errorf("handles = %v", seen)
	}
}

func TestConnectionToolsSyncFreezesNamesAndDetectsDrift(t *testing.T) {
	t.Parallel()
	pool := dbtest.Tx(t)
	ctx := t.Context()
	ws := dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{})
	c := dbtest.Connection(t, pool, dbtest.ConnectionOpts{Name: "Demo", URL: "http://x", WorkspaceID: &ws})
	schema := json.RawMessage(`{"type":"object"}`)
	defs := []db.ToolDef{{Name: "echo", Description: "Echo", InputSchema: schema}, {Name: "add", Description: "Add", InputSchema: schema}}
	res, err := db.ConnectionToolsSync(ctx, pool, c.ID, c.Handle, defs, false)
	if err != nil || len(res.Added) != 2 {
		t.Fatalf("first sync: %+v, %v", res, err)
	}
	// Key order and whitespace are not a change.
	defs[0].InputSchema = json.RawMessage(`{ "type" : "object" }`)
	if res, err = db.ConnectionToolsSync(ctx, pool, c.ID, "renamed", defs, false); err != nil || res.Changed() {
		t.Fatalf("same defs: %+v, %v", res, err)
	}
	defs[0].Description = "Echo, but evil"
	if res, err = db.ConnectionToolsSync(ctx, pool, c.ID, "renamed", defs, false); err != nil || len(res.Drifted) != 1 {
		t.Fatalf("drift: %+v, %v", res, err)
	}
	visible, _ := db.ConnectionToolsVisible(ctx, pool, ws)
	if len(visible) != 1 || visible[0].UpstreamName != "add" {
		t.Fatalf("visible after drift = %+v, want only add", visible)
	}
	if visible[0].ExposedName != "mcp_demo_add" {
		t.Errorf("exposed name changed with handle: %q", visible[0].ExposedName)
	}
	if _, err := db.ConnectionToolApprove(ctx, pool, c.ID, "echo"); err != nil {
		t.Fatal(err)
	}
	visible, _ = db.ConnectionToolsVisible(ctx, pool, ws)
	if len(visible) != 2 {
		t.Fatalf("visible after approval = %d, want 2", len(visible))
	}
	if res, err = db.ConnectionToolsSync(ctx, pool, c.ID, c.Handle, defs[1:], false); err != nil || len(res.Removed) != 1 {
		t.Fatalf("removal: %+v, %v", res, err)
	}
}

// TestConnectionCreateHandleRace: two transactions creating connections with the same
// name at once both succeed with different handles; the second must not see the
// handle's unique violation (which InstallFlow would report as "already installed").
func TestConnectionCreateHandleRace(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	mustWorkspace(t, pool, wsA)
	ws := wsA
	n := &db.ConnectionNew{Name: "Racer", URL: "http://x", TransportType: "streamable-http", Source: "manual", Enabled: true, WorkspaceID: &ws}
	tx1, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx1.Rollback(ctx)
	c1, err := db.ConnectionCreate(ctx, tx1, n)
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		c   *db.Connection
		err error
	}
	done := make(chan res, 1)
	go func() {
		var c *db.Connection
		err := db.InTx(ctx, pool, func(tx db.Tx) error {
			var err error
			c, err = db.ConnectionCreate(ctx, tx, n)
			return err
		})
		done <- res{c, err}
	}()
	time.Sleep(200 * time.Millisecond) // let the second insert block on tx1's handle
	if err := tx1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("concurrent create: %v", r.err)
	}
	if r.c.Handle == c1.Handle {
		t.Fatalf("both got handle %q", c1.Handle)
	}
}
