package health

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/google/uuid"
)

// TestRecorderIsolatesARefusedWrite: a batch of 40 outcomes in which Postgres refuses one
// write (a failure text with a NUL byte: SQLSTATE 22021 for the whole statement) records
// the 39 others; only that one check gets an error (the pass marks it SkipWriteFailed),
// where before the whole batch — up to recordBatch checks — was "write failed".
func TestRecorderIsolatesARefusedWrite(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "W"); err != nil {
		t.Fatal(err)
	}
	const n, bad = 40, 17
	writes := make([]db.HealthWrite, n)
	for i := range n {
		name := fmt.Sprintf("e%02d", i)
		if err := db.CatalogEntryUpsertSeed(ctx, pool, &db.CatalogSeedEntry{Name: name, URL: "http://127.0.0.1:1/" + name,
			TransportType: "streamable-http", VerificationTier: "unverified"}); err != nil {
			t.Fatal(err)
		}
		e, err := db.CatalogEntryGetByName(ctx, pool, name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.ConnectionCreate(ctx, pool, &db.ConnectionNew{Name: name, URL: "http://127.0.0.1:1/" + name,
			TransportType: "streamable-http", Enabled: true, Source: "marketplace", CatalogEntryID: &e.ID, WorkspaceID: &ws, CreatedBy: "test"})
		if err != nil {
			t.Fatal(err)
		}
		writes[i] = db.HealthWrite{EntryID: e.ID, ConnectionID: c.ID, At: time.Now(), Failure: "connection refused"}
	}
	writes[bad].Failure = "refused\x00by the upstream"

	r := newRecorder(ctx, pool)
	batch := make([]recordReq, n)
	for i := range n {
		batch[i] = recordReq{w: writes[i], reply: make(chan recordRes, 1)}
	}
	r.flush(batch) // one batch, as the writer's loop would make of 40 queued outcomes
	r.close()
	for i, q := range batch {
		res := <-q.reply
		if i == bad {
			if res.err == nil {
				t.Errorf("the refused write answered %+v, want an error", res.st)
			}
			continue
		}
		if res.err != nil || res.st == nil || res.st.ConsecutiveFailures != 1 {
			t.Errorf("write %d: %+v, %v; want recorded with 1 consecutive failure", i, res.st, res.err)
			continue
		}
		e, err := db.CatalogEntryGet(ctx, pool, writes[i].EntryID)
		if err != nil || e.ConsecutiveFailures != 1 || e.LastHealthCheck == nil {
			t.Errorf("entry %d in Postgres: %+v, %v", i, e, err)
		}
	}
	if e, err := db.CatalogEntryGet(ctx, pool, writes[bad].EntryID); err != nil || e.LastHealthCheck != nil {
		t.Errorf("the refused entry was written: %+v, %v", e, err)
	}

	// A database that is unreachable fails the batch whole and at once (no halving).
	down, err := db.Open(context.Background(), "postgres://x@127.0.0.1:1/none?sslmode=disable&connect_timeout=1", 1)
	if err == nil {
		defer down.Close()
		rd := newRecorder(ctx, down)
		b := []recordReq{{w: writes[0], reply: make(chan recordRes, 1)}, {w: writes[1], reply: make(chan recordRes, 1)}}
		rd.flush(b)
		rd.close()
		for _, q := range b {
			if res := <-q.reply; res.err == nil {
				t.Errorf("a write to an unreachable database succeeded")
			}
		}
		if db.RefusedStatement(fmt.Errorf("dial: %w", context.DeadlineExceeded)) {
			t.Error("a dial error counts as a refused statement")
		}
	}
}
