package db_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/google/uuid"
)

// batchWorld makes n catalog entries, each with an installed connection, and returns
// their ids.
func batchWorld(t *testing.T, n int) (*db.Pool, []string, []string) {
	t.Helper()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "W"); err != nil {
		t.Fatal(err)
	}
	var entries, conns []string
	for i := range n {
		name := fmt.Sprintf("b%d", i)
		if err := db.CatalogEntryUpsertSeed(ctx, pool, &db.CatalogSeedEntry{Name: name, URL: "http://x/" + name,
			TransportType: "streamable-http", VerificationTier: "unverified"}); err != nil {
			t.Fatal(err)
		}
		e, err := db.CatalogEntryGetByName(ctx, pool, name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.ConnectionCreate(ctx, pool, &db.ConnectionNew{Name: name, URL: "http://x/" + name, TransportType: "streamable-http",
			Enabled: true, Source: "marketplace", CatalogEntryID: &e.ID, WorkspaceID: &ws, CreatedBy: "t"})
		if err != nil {
			t.Fatal(err)
		}
		entries, conns = append(entries, e.ID), append(conns, c.ID)
	}
	return pool, entries, conns
}

// TestHealthRecordBatch: one batch records successes and failures as
// CatalogEntryRecordHealth and ConnectionRecordState would, counts an entry written twice
// twice, and skips (nil state) a write whose entry is gone while recording the others.
func TestHealthRecordBatch(t *testing.T) {
	pool, entries, conns := batchWorld(t, 3)
	ctx := t.Context()
	// b1 was already failing twice: one more failure makes it down.
	for range 2 {
		if _, err := db.CatalogEntryRecordHealth(ctx, pool, entries[1], time.Now(), "old"); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	out, err := db.HealthRecordBatch(ctx, pool, []db.HealthWrite{
		{EntryID: entries[0], ConnectionID: conns[0], At: at, Transport: "sse", ProtocolVersion: "2025-11-25"},
		{EntryID: entries[1], ConnectionID: conns[1], At: at, Failure: "refused"},
		{EntryID: uuid.NewString(), ConnectionID: uuid.NewString(), At: at, Failure: "gone"},
		{EntryID: "not-a-uuid", At: at},
		{EntryID: entries[2], ConnectionID: conns[2], At: at, Failure: "first"},
		{EntryID: entries[2], ConnectionID: conns[2], At: at, Failure: "second"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status string
		n      int
		err    string
	}{{db.HealthHealthy, 0, ""}, {db.HealthDown, 3, "refused"}, {}, {}, {db.HealthStale, 1, "first"}, {db.HealthStale, 2, "second"}}
	for i, w := range want {
		got := out[i]
		if w.status == "" {
			if got != nil {
				t.Errorf("write %d (entry gone): %+v", i, got)
			}
			continue
		}
		if got == nil || got.Status != w.status || got.ConsecutiveFailures != w.n || !got.LastHealthCheck.Equal(at) ||
			(w.err == "") != (got.LastHealthError == nil) || (got.LastHealthError != nil && *got.LastHealthError != w.err) {
			t.Errorf("write %d: %+v, want %+v", i, got, w)
		}
	}
	// Stored: each entry's last state, each connection's last outcome.
	for i, w := range []struct {
		status string
		n      int
	}{{db.HealthHealthy, 0}, {db.HealthDown, 3}, {db.HealthStale, 2}} {
		e, err := db.CatalogEntryGet(ctx, pool, entries[i])
		if err != nil {
			t.Fatal(err)
		}
		if *e.HealthStatus != w.status || e.ConsecutiveFailures != w.n || !e.LastHealthCheck.Equal(at) {
			t.Errorf("entry %d stored %v/%d at %v", i, *e.HealthStatus, e.ConsecutiveFailures, e.LastHealthCheck)
		}
	}
	c0, _ := db.ConnectionGet(ctx, pool, conns[0])
	if c0.LastConnectedAt == nil || c0.LastError != nil || c0.WorkingTransport == nil || *c0.WorkingTransport != "sse" ||
		c0.ProtocolVersion == nil || *c0.ProtocolVersion != "2025-11-25" {
		t.Errorf("healthy connection: %+v", c0)
	}
	c2, _ := db.ConnectionGet(ctx, pool, conns[2])
	if c2.LastConnectedAt != nil || c2.LastError == nil || *c2.LastError != "second" {
		t.Errorf("failing connection: %+v", c2)
	}
	// Nothing to write is no statement and no error.
	if out, err := db.HealthRecordBatch(ctx, pool, nil); err != nil || len(out) != 0 {
		t.Fatalf("empty batch: %v %v", out, err)
	}
}

// TestHealthRecordBatchConcurrent: overlapping batches and single compare-and-set writes
// of the same entries each count once (row locks, taken in id order: no lost update, no
// deadlock).
func TestHealthRecordBatchConcurrent(t *testing.T) {
	pool, entries, conns := batchWorld(t, 4)
	ctx := t.Context()
	const rounds = 6
	var wg sync.WaitGroup
	for r := range rounds {
		wg.Go(func() {
			var ws []db.HealthWrite
			for i := range entries { // alternate directions: id order must still hold
				j := i
				if r%2 == 1 {
					j = len(entries) - 1 - i
				}
				ws = append(ws, db.HealthWrite{EntryID: entries[j], ConnectionID: conns[j], At: time.Now(), Failure: "boom"})
			}
			if _, err := db.HealthRecordBatch(ctx, pool, ws); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if _, err := db.CatalogEntryRecordHealth(ctx, pool, entries[0], time.Now(), "boom"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i, id := range entries {
		e, err := db.CatalogEntryGet(ctx, pool, id)
		if err != nil {
			t.Fatal(err)
		}
		want := rounds
		if i == 0 {
			want = 2 * rounds
		}
		if e.ConsecutiveFailures != want {
			t.Errorf("entry %d: %d failures, want %d", i, e.ConsecutiveFailures, want)
		}
	}
}

// TestHealthRecordBatchDatabaseDown: a closed pool is an error and no state.
func TestHealthRecordBatchDatabaseDown(t *testing.T) {
	pool, entries, conns := batchWorld(t, 1)
	pool.Close()
	out, err := db.HealthRecordBatch(t.Context(), pool, []db.HealthWrite{{EntryID: entries[0], ConnectionID: conns[0], At: time.Now()}})
	if err == nil || out != nil {
		t.Fatalf("closed pool: %v %v", out, err)
	}
}
