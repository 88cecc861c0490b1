package db_test

import (
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

// TestCatalogEntryRecordHealthSequence walks one entry through the state machine in the
// database: two failures stale, the third down, a success healthy with the error cleared.
func TestCatalogEntryRecordHealthSequence(t *testing.T) {
	t.Parallel()
	pool := dbtest.Tx(t)
	ctx := t.Context()
	if err := db.CatalogEntryUpsertSeed(ctx, pool, &db.CatalogSeedEntry{Name: "h", URL: "http://x/mcp", TransportType: "streamable-http", VerificationTier: "unverified"}); err != nil {
		t.Fatal(err)
	}
	e, err := db.CatalogEntryGetByName(ctx, pool, "h")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	steps := []struct {
		failure string
		status  string
		n       int
	}{{"boom", db.HealthStale, 1}, {"boom", db.HealthStale, 2}, {"timeout", db.HealthDown, 3}, {"", db.HealthHealthy, 0}}
	for i, s := range steps {
		st, err := db.CatalogEntryRecordHealth(ctx, pool, e.ID, at, s.failure)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if st.Status != s.status || st.ConsecutiveFailures != s.n || st.LastHealthCheck == nil || !st.LastHealthCheck.Equal(at) {
			t.Fatalf("step %d: %+v, want %s/%d", i, st, s.status, s.n)
		}
		if (s.failure == "") != (st.LastHealthError == nil) || (st.LastHealthError != nil && *st.LastHealthError != s.failure) {
			t.Fatalf("step %d: last error %v, want %q", i, st.LastHealthError, s.failure)
		}
	}
}

// TestCatalogEntryRecordHealthConcurrent: concurrent failed checks of one entry each count
// once (the compare-and-set retries instead of losing an increment).
func TestCatalogEntryRecordHealthConcurrent(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	if err := db.CatalogEntryUpsertSeed(ctx, pool, &db.CatalogSeedEntry{Name: "c", URL: "http://x/mcp", TransportType: "streamable-http", VerificationTier: "unverified"}); err != nil {
		t.Fatal(err)
	}
	e, err := db.CatalogEntryGetByName(ctx, pool, "c")
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := db.CatalogEntryRecordHealth(ctx, pool, e.ID, time.Now(), "boom"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := db.CatalogEntryGet(ctx, pool, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ConsecutiveFailures != n || got.HealthStatus == nil || *got.HealthStatus != db.HealthDown {
		t.Fatalf("after %d concurrent failures: %d %v", n, got.ConsecutiveFailures, got.HealthStatus)
	}
}
