package catalog_test

import (
	"context"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

// TestBuildCarriesDiscoveryThreshold: the workspace's tool discovery threshold is in its
// document (absent while unset), a negative one is refused, and an unknown workspace is
// NOT_FOUND.
func TestBuildCarriesDiscoveryThreshold(t *testing.T) {
	t.Parallel()
	// Fresh, not Tx: the refused negative threshold is a database error, which would
	// abort a transaction before the steps after it.
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	ws := dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: "70000000-0000-4000-8000-000000000007", Name: "w"})
	doc, err := catalog.Build(ctx, pool, ws)
	if err != nil || doc.DiscoveryThreshold != nil {
		t.Fatalf("unset: %v %v", err, doc)
	}
	n := 50
	if err := db.WorkspaceSetDiscoveryThreshold(ctx, pool, ws, &n); err != nil {
		t.Fatal(err)
	}
	if doc, err = catalog.Build(ctx, pool, ws); err != nil || doc.DiscoveryThreshold == nil || *doc.DiscoveryThreshold != 50 {
		t.Fatalf("set 50: %v %v", err, doc.DiscoveryThreshold)
	}
	neg := -1
	if err := db.WorkspaceSetDiscoveryThreshold(ctx, pool, ws, &neg); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("negative: %v, want VALIDATION_ERROR", err)
	}
	if err := db.WorkspaceSetDiscoveryThreshold(ctx, pool, ws, nil); err != nil {
		t.Fatal(err)
	}
	if doc, err = catalog.Build(ctx, pool, ws); err != nil || doc.DiscoveryThreshold != nil {
		t.Errorf("reset: %v %v", err, doc.DiscoveryThreshold)
	}
	missing := "80000000-0000-4000-8000-000000000008"
	if err := db.WorkspaceSetDiscoveryThreshold(ctx, pool, missing, &n); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("unknown workspace: %v", err)
	}
	if _, err := db.WorkspaceDiscoveryThreshold(ctx, pool, missing); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("unknown workspace read: %v", err)
	}
	if _, err := db.WorkspaceDiscoveryThreshold(ctx, pool, "nope"); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("malformed id: %v", err)
	}
}
