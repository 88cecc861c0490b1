package catalog_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

// TestCacheBuildsMissingDocument: a workspace created after the last rebuild has no
// document in the store; the cache builds it from Postgres so that it still sees the
// global connections (found in review: it used to get an empty catalog).
func TestCacheBuildsMissingDocument(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	store := &catalog.DiskStore{Dir: t.TempDir()}
	const wsA, wsB = "aaaaaaaa-0000-4000-8000-00000000000a", "bbbbbbbb-0000-4000-8000-00000000000b"
	dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: wsA, Name: "A"})
	global := dbtest.Connection(t, pool, dbtest.ConnectionOpts{Name: "Global", URL: "https://g.example.com/mcp"})
	if _, err := db.ConnectionToolsSync(ctx, pool, global.ID, global.Handle,
		[]db.ToolDef{{Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`)}}, false); err != nil {
		t.Fatal(err)
	}
	if err := catalog.Rebuild(ctx, pool, store, nil); err != nil {
		t.Fatal(err)
	}
	dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: wsB, Name: "B (created later)"})

	plain := catalog.NewCache(store, 0, nil)
	if s, err := plain.Get(ctx, wsB); err != nil || len(s.Doc.Connections) != 0 {
		t.Fatalf("without Missing: %v, %v", s, err)
	}
	c := catalog.NewCache(store, 0, nil)
	c.Missing = func(ctx context.Context, ws string) (*catalog.Document, error) { return catalog.Build(ctx, pool, ws) }
	s1, err := c.Get(ctx, wsB)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s1.Lookup("mcp_" + global.Handle + "_search"); !ok {
		t.Fatalf("workspace without a document does not see the global tool: %+v", s1.Doc)
	}
	s2, err := c.Get(ctx, wsB)
	if err != nil || s2 != s1 {
		t.Errorf("an unchanged build made a new snapshot (ETag %q vs %q)", s1.ETag, s2.ETag)
	}
	// Once a document exists, the store wins again.
	if err := catalog.Rebuild(ctx, pool, store, []string{wsB}); err != nil {
		t.Fatal(err)
	}
	if s3, err := c.Get(ctx, wsB); err != nil || s3.ETag == s1.ETag {
		t.Errorf("after a rebuild the store's document is not used: %v %v", s3, err)
	}
}
