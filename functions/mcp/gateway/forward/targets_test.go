package forward

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

// TestTargetCacheBoundedByBytes: connection rows are held up to the budget of rowSize
// bytes; a row read on every call stays while cold ones go; a hit is a row served at the
// catalog's updatedAt without a query, a miss one read from Postgres.
func TestTargetCacheBoundedByBytes(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	var conns []*catalog.Connection
	for i := range 40 {
		row, err := db.ConnectionCreate(ctx, pool, &db.ConnectionNew{Name: fmt.Sprintf("C%02d", i),
			URL: "https://c.example.com/mcp", TransportType: "streamable-http", Source: "manual", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, &catalog.Connection{ID: row.ID, UpdatedAt: row.UpdatedAt})
	}
	first, err := db.ConnectionGet(ctx, pool, conns[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	budget := 10 * (rowSize(first) + 16)
	tc := newTargetCache(budget)
	for _, c := range conns[1:] {
		if _, err := tc.row(ctx, pool, conns[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := tc.row(ctx, pool, c); err != nil {
			t.Fatal(err)
		}
		if w := int64(tc.c.WeightedSize()); w > budget {
			t.Fatalf("%d bytes held, budget %d", w, budget)
		}
	}
	f := &Forwarder{targets: tc}
	st := f.TargetStats()
	if st.Evictions == 0 || st.Misses != 40 || st.Hits != 38 {
		t.Errorf("stats %+v: want evictions, 40 misses, 38 hits", st)
	}
	if _, ok := tc.c.GetIfPresent(conns[0].ID); !ok {
		t.Error("the row read on every call was evicted")
	}
}
