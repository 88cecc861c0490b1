package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/google/uuid"
)

func auditEvent(i int, ws string) *db.AuditEvent {
	return &db.AuditEvent{RequestID: fmt.Sprint("r", i), Principal: "p", WorkspaceID: &ws, Tool: "t", Kind: "proxied",
		DurationMS: 1, ArgsDigest: "sha256:x"}
}

// TestAuditGroupCommit: N concurrent writes give exactly N rows (batched: fewer INSERTs
// than rows is not asserted, the rows are); a failing row fails every caller of its batch
// and only those, so that rows written == callers answered nil; a database that is gone
// fails every waiting caller.
func TestAuditGroupCommit(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "audit"); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM audit_events`).Scan(&n)
		return n
	}
	a := New(pool)

	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = a.write(auditEvent(i, ws)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if got := count(); got != n {
		t.Fatalf("%d rows, want %d", got, n)
	}
	var distinct int
	_ = pool.QueryRow(ctx, `SELECT count(DISTINCT request_id) FROM audit_events`).Scan(&distinct)
	if distinct != n {
		t.Fatalf("%d distinct rows, want %d", distinct, n)
	}

	// Some rows violate a constraint (kind): their batches fail as a whole; every caller
	// answered nil has its row and no failed caller has one.
	before := count()
	ok := 0
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			ev := auditEvent(n+i, ws)
			if i%37 == 0 {
				ev.Kind = "bogus"
			}
			if a.write(ev) == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if got := count() - before; got != ok {
		t.Fatalf("%d rows written, %d callers answered success", got, ok)
	}
	if ok == n {
		t.Fatal("no write failed")
	}

	// The database is gone: every waiting caller gets the error.
	pool.Close()
	for i := range n {
		wg.Go(func() { errs[i] = a.write(auditEvent(2*n+i, ws)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Fatalf("write %d succeeded on a closed pool", i)
		}
	}
	// The last writer clears running just after answering its batch.
	for i := 0; ; i++ {
		a.mu.Lock()
		running, pending := a.running, len(a.pending)
		a.mu.Unlock()
		if !running && pending == 0 {
			break
		}
		if i == 100 {
			t.Fatalf("writer left running=%v with %d pending", running, pending)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRecordDigest: the row holds a digest of the arguments and the caller's identity,
// never the argument values.
func TestRecordDigest(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "audit"); err != nil {
		t.Fatal(err)
	}
	w := New(pool)
	if err := w.Record(Entry{RequestID: "r1", Principal: "alice", WorkspaceID: ws, Tool: "mcp_x_echo", Kind: "proxied",
		Duration: 1500 * time.Microsecond, Arguments: []byte(`{"secret":"hunter2"}`)}); err != nil {
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
	if e.Principal != "alice" || e.Tool != "mcp_x_echo" || e.DurationMS != 1.5 || e.ConnectionID != nil {
		t.Fatalf("row %+v", e)
	}
	if err := w.Record(Entry{RequestID: "r2", Principal: "alice", WorkspaceID: ws, Tool: "t", Kind: "bogus"}); err == nil ||
		!strings.Contains(err.Error(), "audit: bogus t") {
		t.Fatalf("a refused row: %v", err)
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
