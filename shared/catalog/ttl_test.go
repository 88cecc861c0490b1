package catalog_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
)

// countingStore counts the store reads (conditional GETs) a Cache makes.
type countingStore struct {
	catalog.Store
	gets atomic.Int64
}

func (s *countingStore) GetObject(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	s.gets.Add(1)
	return s.Store.GetObject(ctx, key, ifNoneMatch)
}

// TestCacheTTL: within the TTL a snapshot is served from memory; once the TTL has passed
// the next Get revalidates against the store (docs/DESIGN.md §6, CATALOG_TTL); Health
// reports the age of the oldest snapshot. Runs in a synctest bubble: time.Sleep advances
// the bubble's clock, so the 30 s TTL costs no real time and the ages are exact.
func TestCacheTTL(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		start := time.Now()
		store := &countingStore{Store: &catalog.DiskStore{Dir: t.TempDir()}}
		const ws = "70000000-0000-4000-8000-000000000017"
		if _, err := catalog.WriteDocument(ctx, store.Store, &catalog.Document{Version: catalog.SchemaVersion, WorkspaceID: ws}); err != nil {
			t.Fatal(err)
		}
		c := catalog.NewCache(store, 30*time.Second, nil)
		get := func(wantGets int64) *catalog.Snapshot {
			t.Helper()
			s, err := c.Get(ctx, ws)
			if err != nil {
				t.Fatal(err)
			}
			if n := store.gets.Load(); n != wantGets {
				t.Fatalf("after %v: %d store reads, want %d", time.Since(start), n, wantGets)
			}
			return s
		}
		first := get(1)
		get(1)
		time.Sleep(29 * time.Second)
		if h := c.Health(); h.OldestAgeMs != 29000 {
			t.Fatalf("oldest age %d ms, want 29000", h.OldestAgeMs)
		}
		get(1)
		time.Sleep(time.Second) // the TTL has passed: revalidate (304, same snapshot)
		if s := get(2); s != first {
			t.Fatal("an unchanged document gave a new snapshot")
		}
		if h := c.Health(); h.OldestAgeMs != 0 {
			t.Fatalf("oldest age %d ms after revalidation, want 0", h.OldestAgeMs)
		}
		get(2)
	})
}
