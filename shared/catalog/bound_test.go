package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
)

// docOf is a one-connection, one-tool document of workspace ws whose description holds
// pad bytes.
func docOf(ws string, pad int) *catalog.Document {
	return &catalog.Document{Version: catalog.SchemaVersion, WorkspaceID: ws, Connections: []catalog.Connection{{
		ID: "c-" + ws, Name: "C", Handle: "c", Scope: "workspace", Source: "manual", URL: "https://x.example/mcp",
		TransportType: "streamable-http",
		Tools: []catalog.Tool{{ExposedName: "mcp_c_t", UpstreamName: "t", Description: strings.Repeat("d", pad),
			InputSchema: json.RawMessage(`{"type":"object"}`)}},
	}}}
}

// TestCacheBoundedByBytes: snapshots are held up to SetMaxBytes of Snapshot.Size, not a
// count: filling the cache with three times its budget keeps the total weight within it,
// evicts, and keeps the workspace that is read again and again (W-TinyLFU drops the entry
// least likely to be used again); hits and misses count Gets that found / loaded a snapshot.
func TestCacheBoundedByBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := catalog.NewCache(&catalog.DiskStore{Dir: t.TempDir()}, time.Hour, nil)
	c.Missing = func(_ context.Context, ws string) (*catalog.Document, error) { return docOf(ws, 4000), nil }
	one := catalog.NewSnapshot(docOf("w-0000", 4000), "x").Size()
	if one < 4000 {
		t.Fatalf("Size %d does not count the document's bytes", one)
	}
	budget := 20 * one
	c.SetMaxBytes(budget)

	hot := "w-hot"
	for i := range 60 {
		if _, err := c.Get(ctx, hot); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, fmt.Sprintf("w-%04d", i)); err != nil {
			t.Fatal(err)
		}
		if st := c.Stats(); int64(st.Bytes) > budget {
			t.Fatalf("after %d workspaces: %d bytes held, budget %d", i+1, st.Bytes, budget)
		}
	}
	st := c.Stats()
	if st.Evictions == 0 || st.Entries > 20 || st.MaxBytes != uint64(budget) {
		t.Errorf("stats %+v: want evictions, ≤ 20 entries, max %d", st, budget)
	}
	// 60 cold workspaces and one hot: 61 misses, 59 hits (the hot one after its first Get).
	if st.Misses != 61 || st.Hits != 59 {
		t.Errorf("hits %d misses %d, want 59 and 61", st.Hits, st.Misses)
	}
	before := c.Stats()
	if _, err := c.Get(ctx, hot); err != nil {
		t.Fatal(err)
	}
	if after := c.Stats(); after.Hits != before.Hits+1 {
		t.Errorf("the hot workspace was evicted (hits %d → %d)", before.Hits, after.Hits)
	}
	// An evicted workspace loads again (a miss), and is served.
	if s, err := c.Get(ctx, "w-0000"); err != nil || s.Doc.WorkspaceID != "w-0000" {
		t.Fatalf("evicted workspace: %v, %v", s, err)
	}
	// A snapshot larger than the whole budget is served but not kept.
	c.SetMaxBytes(one / 2)
	if _, err := c.Get(ctx, "w-big"); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Bytes > uint64(one/2) {
		t.Errorf("%d bytes held over a budget of %d", st.Bytes, one/2)
	}
}
