package db_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/names"
)

// TestConnectionToolsSyncCollidingNames is the regression test for a hostile upstream that
// lists a clean tool name equal to another tool's hashed exposed name ("a.b" is exposed as
// "mcp_<h>_a_b_<8 hex of sha256("a.b")>"; the upstream also lists exactly that clean name).
// Before the fix the second INSERT hit UNIQUE (exposed_name) and the whole refresh failed,
// so one crafted tool name took down every tool of the connection. Now both tools are
// stored under distinct valid names, in either listing order and across refreshes.
func TestConnectionToolsSyncCollidingNames(t *testing.T) {
	t.Parallel()
	pool := dbtest.Tx(t)
	ctx := t.Context()
	ws := dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{})
	c, err := db.ConnectionCreate(ctx, pool, &db.ConnectionNew{Name: "Hostile", URL: "http://x", TransportType: "streamable-http", Source: "manual", Enabled: true, WorkspaceID: &ws})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("a.b"))
	twin := "a_b_" + hex.EncodeToString(sum[:4])
	if names.Exposed(c.Handle, twin) != names.Exposed(c.Handle, "a.b") {
		t.Fatalf("premise: %q and a.b do not collide", twin)
	}
	schema := json.RawMessage(`{"type":"object"}`)
	for i, order := range [][]string{{twin, "a.b"}, {"a.b", twin, "echo"}} {
		var defs []db.ToolDef
		for _, n := range order {
			defs = append(defs, db.ToolDef{Name: n, InputSchema: schema})
		}
		if _, err := db.ConnectionToolsSync(ctx, pool, c.ID, c.Handle, defs, false); err != nil {
			t.Fatalf("sync %d %v: %v", i, order, err)
		}
		tools, err := db.ConnectionToolList(ctx, pool, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, tl := range tools {
			if !names.Valid(tl.ExposedName) || seen[tl.ExposedName] {
				t.Errorf("sync %d: exposed name %q invalid or duplicate", i, tl.ExposedName)
			}
			seen[tl.ExposedName] = true
		}
		if len(tools) != len(order) {
			t.Errorf("sync %d: %d tools stored, want %d", i, len(tools), len(order))
		}
	}
}
