package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/google/uuid"
)

func entry(i int, ws string) Entry {
	return Entry{RequestID: fmt.Sprint("r", i), Principal: "p", WorkspaceID: ws, Tool: "t", Kind: "proxied",
		Duration: time.Millisecond, Arguments: []byte(`{}`)}
}

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// trailOver is a Trail on a pool through a proxy that can cut the database off, with its
// log and a row counter that reads the database directly.
func trailOver(t *testing.T, maxQueued int) (*Trail, *testpeer.PgWire, *logBuffer, func() int, string) {
	t.Helper()
	direct, u := dbtest.Fresh(t)
	ctx := context.Background()
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, direct, ws, "audit"); err != nil {
		t.Fatal(err)
	}
	wire := testpeer.NewPgWire(t, u)
	pool, err := db.Open(ctx, wire.URL, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	logs := &logBuffer{}
	tr := NewTrail(Options{Pool: pool, Logger: slog.New(slog.NewJSONHandler(logs, nil)), MaxQueued: maxQueued})
	count := func() (n int) {
		if err := direct.QueryRow(ctx, `SELECT count(*) FROM audit_events`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return tr, wire, logs, count, ws
}

// TestAuditAfterAnswer: 200 concurrent Records return at once and, once flushed, are 200
// distinct rows; a row the database refuses (a bad kind) costs only itself, counted lost
// and logged by its key.
func TestAuditAfterAnswer(t *testing.T) {
	t.Parallel()
	tr, _, logs, count, ws := trailOver(t, 0)
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e := entry(i, ws)
			if i == 77 {
				e.Kind = "bogus" // CHECK (kind IN ('builtin', 'proxied'))
			}
			if err := tr.Record(e); err != nil {
				t.Errorf("record %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if err := tr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != n-1 {
		t.Fatalf("%d rows, want %d (all but the refused one)", got, n-1)
	}
	st := tr.Stats()
	if st.Recorded != n || st.Written != n-1 || st.Lost != 1 || st.Queued != 0 {
		t.Fatalf("stats %+v", st)
	}
	if l := logs.String(); strings.Count(l, `"msg":"audit row not written"`) != 1 || !strings.Contains(l, `"request_id":"r77"`) ||
		!strings.Contains(l, `"row_key":"`) {
		t.Fatalf("the refused row is not logged by key: %s", l)
	}
}

// TestAuditDatabaseDown: with the database unreachable Record still returns at once, Drain
// gives up with UNAVAILABLE instead of holding the caller, the rows stay queued and are
// retried; once the database is back every row is written exactly once, none lost.
func TestAuditDatabaseDown(t *testing.T) {
	t.Parallel()
	tr, wire, logs, count, ws := trailOver(t, 0)
	if err := tr.Record(entry(0, ws)); err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	wire.Cut()
	for i := 1; i <= 50; i++ {
		if err := tr.Record(entry(i, ws)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), testpeer.Scaled(60*time.Second))
	defer cancel()
	if err := tr.Drain(ctx); apperr.CodeOf(err) != apperr.Unavailable {
		t.Fatalf("Drain with the database down: %v, want UNAVAILABLE", err)
	}
	if st := tr.Stats(); st.Queued != 50 || st.Retries == 0 || st.Lost != 0 {
		t.Fatalf("down: stats %+v, want 50 queued, retried, none lost", st)
	}
	wire.Restore()
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 51 {
		t.Fatalf("%d rows after the database came back, want 51", got)
	}
	if st := tr.Stats(); st.Written != 51 || st.Lost != 0 {
		t.Fatalf("stats %+v", st)
	}
	if strings.Contains(logs.String(), "audit row not written") {
		t.Fatalf("a row was logged lost: %s", logs)
	}
}

// TestAuditBoundedAndClose: the queue never holds more than MaxQueued rows — a row past it
// is counted lost and logged by key — and Close with the database still down counts and
// logs every row it could not write; a Record after Close writes its row itself (an error
// while the database is down). Recorded = written + lost, always.
func TestAuditBoundedAndClose(t *testing.T) {
	t.Parallel()
	tr, wire, logs, count, ws := trailOver(t, 10)
	wire.Cut()
	for i := range 15 {
		if err := tr.Record(entry(i, ws)); err != nil {
			t.Fatal(err)
		}
	}
	if st := tr.Stats(); st.Queued != 10 || st.Lost != 5 {
		t.Fatalf("stats %+v, want 10 queued and 5 lost", st)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if lost := tr.Close(ctx); lost != 10 {
		t.Fatalf("Close lost %d, want 10", lost)
	}
	if err := tr.Record(entry(99, ws)); err == nil {
		t.Fatal("a Record after Close with the database down succeeded")
	}
	wire.Restore()
	if err := tr.Record(entry(100, ws)); err != nil {
		t.Fatalf("a Record after Close: %v", err)
	}
	st := tr.Stats()
	if st.Recorded != 17 || st.Lost != 16 || st.Written != 1 || st.Recorded != st.Written+st.Lost {
		t.Fatalf("stats %+v", st)
	}
	if got := count(); got != 1 {
		t.Fatalf("%d rows, want 1", got)
	}
	if n := strings.Count(logs.String(), `"msg":"audit row not written"`); n != 16 {
		t.Fatalf("%d rows logged lost, want 16", n)
	}
}

// TestRecordDigest: the row holds a digest of the arguments, the caller's identity and the
// request's chat, never the argument values.
func TestRecordDigest(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "audit"); err != nil {
		t.Fatal(err)
	}
	w := New(pool)
	defer w.Close(ctx)
	chat := uuid.NewString()
	if err := w.Record(Entry{RequestID: "r1", Principal: "alice", WorkspaceID: ws, ChatID: chat, Tool: "mcp_x_echo", Kind: "proxied",
		Duration: 1500 * time.Microsecond, Arguments: []byte(`{"secret":"hunter2"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := db.AuditEventList(ctx, pool, ws, 10)
	if err != nil || len(evs) != 1 {
		t.Fatalf("%v %v", evs, err)
	}
	e := evs[0]
	sum := sha256.Sum256([]byte(`{"secret":"hunter2"}`))
	if e.ArgsDigest != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("digest %q", e.ArgsDigest)
	}
	if e.Principal != "alice" || e.Tool != "mcp_x_echo" || e.DurationMS != 1.5 || e.ConnectionID != nil ||
		e.ChatID == nil || *e.ChatID != chat {
		t.Fatalf("row %+v", e)
	}
	if st := w.Stats(); st.Written != 1 || st.Lost != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestListNewestFirst: List returns the workspace's rows only, newest first, at most limit;
// a database that is gone is UNAVAILABLE, named "audit: list".
func TestListNewestFirst(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	ws, other := uuid.NewString(), uuid.NewString()
	for _, w := range []string{ws, other} {
		if err := db.WorkspaceUpsert(ctx, pool, w, "audit"); err != nil {
			t.Fatal(err)
		}
	}
	tr := New(pool)
	for i, w := range []string{ws, ws, ws, other} {
		if err := tr.Record(Entry{RequestID: fmt.Sprint("r", i), Principal: "p", WorkspaceID: w, Tool: "t", Kind: "builtin"}); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := tr.List(ctx, ws, 2)
	if err != nil || len(evs) != 2 || evs[0].RequestID != "r2" || evs[1].RequestID != "r1" {
		t.Fatalf("List: %+v %v", evs, err)
	}
	pool.Close()
	if _, err := tr.List(ctx, ws, 2); apperr.CodeOf(err) != apperr.Unavailable || !strings.Contains(err.Error(), "audit: list "+ws) {
		t.Fatalf("closed pool: %v", err)
	}
}

// TestAuditLinger: rows recorded within the linger share one batch (one INSERT) without
// anyone flushing; Flush and Drain do not wait out the linger (an hour here), and neither
// does a full batch.
func TestAuditLinger(t *testing.T) {
	t.Parallel()
	tr, _, _, count, ws := trailOver(t, 0)
	tr.linger = 300 * time.Millisecond
	for i := range 20 {
		if err := tr.Record(entry(i, ws)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(testpeer.Scaled(10 * time.Second))
	for tr.Stats().Written < 20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := tr.Stats(); st.Written != 20 || st.Batches != 1 {
		t.Fatalf("stats %+v, want 20 rows written in 1 batch", st)
	}

	tr.mu.Lock()
	tr.linger = time.Hour
	tr.mu.Unlock()
	start := time.Now()
	if err := tr.Record(entry(20, ws)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testpeer.Scaled(10*time.Second))
	defer cancel()
	if err := tr.Flush(ctx); err != nil {
		t.Fatalf("flush waited out the linger: %v", err)
	}
	if err := tr.Record(entry(21, ws)); err != nil {
		t.Fatal(err)
	}
	if err := tr.Drain(ctx); err != nil {
		t.Fatalf("drain waited out the linger: %v", err)
	}
	for i := range maxBatch {
		if err := tr.Record(entry(100+i, ws)); err != nil {
			t.Fatal(err)
		}
	}
	for tr.Stats().Written < 22+maxBatch && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if st := tr.Stats(); st.Written != 22+maxBatch || st.Batches != 4 || st.Queued != 0 {
		t.Fatalf("stats %+v, want %d rows in 4 batches: a full batch does not wait out the linger", st, 22+maxBatch)
	}
	if got := count(); got != 22+maxBatch {
		t.Fatalf("%d rows, want %d", got, 22+maxBatch)
	}
	if time.Since(start) > testpeer.Scaled(10*time.Second) {
		t.Fatal("too slow")
	}
}

// TestLingerOption: Options.Linger 0 is DefaultLinger, a negative one writes at once, any
// other is kept.
func TestLingerOption(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want time.Duration }{
		{0, DefaultLinger}, {-1, 0}, {5 * time.Millisecond, 5 * time.Millisecond},
	} {
		if got := NewTrail(Options{Linger: c.in}).linger; got != c.want {
			t.Errorf("Linger %v: the trail lingers %v, want %v", c.in, got, c.want)
		}
	}
}

// TestAuditCloseCutsLinger: Close writes the queued rows at once, without waiting out the
// linger (an hour here), and loses none.
func TestAuditCloseCutsLinger(t *testing.T) {
	t.Parallel()
	tr, _, _, count, ws := trailOver(t, 0)
	tr.mu.Lock()
	tr.linger = time.Hour
	tr.mu.Unlock()
	for i := range 3 {
		if err := tr.Record(entry(i, ws)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), testpeer.Scaled(10*time.Second))
	defer cancel()
	if lost := tr.Close(ctx); lost != 0 || ctx.Err() != nil {
		t.Fatalf("close: %d lost, ctx %v: it waited out the linger", lost, ctx.Err())
	}
	if got := count(); got != 3 {
		t.Fatalf("%d rows after Close, want 3", got)
	}
}

// TestAuditBeforeMigration: functions deployed before migrations/00047 has run find no
// audit_insert (infra/README.md: migrate before deploying). Their batches fail and wait,
// retried, none lost; once the function exists every queued row is written once.
func TestAuditBeforeMigration(t *testing.T) {
	t.Parallel()
	tr, _, logs, count, ws := trailOver(t, 0)
	hide := func(from, to string) {
		t.Helper()
		q := `ALTER FUNCTION ` + from + `(uuid[], timestamptz[], text[], text[], uuid[], text[], text[], text[], uuid[], float8[], text[], uuid[], bool[], text[], int[]) RENAME TO ` + to
		if _, err := tr.pool.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	hide("audit_insert", "audit_insert_later")
	for i := range 20 {
		if err := tr.Record(entry(i, ws)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), testpeer.Scaled(60*time.Second))
	defer cancel()
	if err := tr.Drain(ctx); err == nil {
		t.Fatal("Drain without audit_insert: no error")
	}
	if st := tr.Stats(); st.Queued != 20 || st.Retries == 0 || st.Lost != 0 || count() != 0 {
		t.Fatalf("before the migration: stats %+v, %d rows; want 20 queued, retried, none lost or written", st, count())
	}
	hide("audit_insert_later", "audit_insert")
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := tr.Stats(); count() != 20 || st.Written != 20 || st.Lost != 0 || strings.Contains(logs.String(), "audit row not written") {
		t.Fatalf("after the migration: %d rows, stats %+v", count(), st)
	}
}
