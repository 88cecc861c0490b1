package gateway

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentpack/gateway/shared/db"
)

// Audit group commit. Every successful write (proxied calls, non-read-only built-ins) must
// have its audit_events row committed before the caller is answered (docs/DESIGN.md §4), which is
// one Postgres round trip per call. Under concurrency the rows of calls that finish while
// an INSERT is in flight are written together by one multi-row INSERT: the caller that
// finds no writer running becomes the writer and inserts what is queued (at concurrency 1
// that is its own row, inline, with the same single-row statement as before — no added
// latency); callers arriving meanwhile queue and wait; when the writer's batch commits it
// answers that batch and, if rows queued in the meantime, hands the writing on to a new
// goroutine so that it never waits for rows other than its own batch. Lossless: each
// caller waits for the commit of the batch that holds its row; a failed batch returns the
// error to every caller in it (whose requests fail as before), and nothing is dropped.

// maxAuditBatch bounds the rows of one INSERT (9 parameters each, far below Postgres's
// 65,535).
const maxAuditBatch = 256

// auditTimeout bounds one batch INSERT.
const auditTimeout = 10 * time.Second

// auditWriter batches audit rows; the zero value is not usable (see newAuditWriter).
type auditWriter struct {
	pool    *db.Pool
	mu      sync.Mutex
	pending []*auditReq
	running bool
}

type auditReq struct {
	ev   *db.AuditEvent
	done chan error
}

func newAuditWriter(pool *db.Pool) *auditWriter { return &auditWriter{pool: pool} }

// write commits ev, in a batch with other concurrent rows, and returns when that batch
// committed (nil) or failed (the batch's error).
func (a *auditWriter) write(ev *db.AuditEvent) error {
	r := &auditReq{ev: ev, done: make(chan error, 1)}
	a.mu.Lock()
	a.pending = append(a.pending, r)
	lead := !a.running
	a.running = true
	a.mu.Unlock()
	if lead {
		a.flush()
	}
	return <-r.done
}

// flush writes one batch of queued rows and answers its callers; it runs with running set
// and leaves it cleared or passed on to a new goroutine.
func (a *auditWriter) flush() {
	a.mu.Lock()
	n := min(len(a.pending), maxAuditBatch)
	batch := a.pending[:n:n]
	a.pending = a.pending[n:]
	if len(a.pending) == 0 {
		a.pending = nil
	}
	a.mu.Unlock()
	err := a.insert(batch)
	for _, r := range batch {
		r.done <- err
	}
	a.mu.Lock()
	more := len(a.pending) > 0
	a.running = more
	a.mu.Unlock()
	if more {
		go a.flush()
	}
}

// insert writes batch in one statement.
func (a *auditWriter) insert(batch []*auditReq) error {
	// Never the callers' contexts (a caller going away must not cancel the others' rows),
	// but bounded: a hung connection would otherwise keep running set for good and block
	// every later audited call of the process. A timed-out batch fails its callers.
	ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
	defer cancel()
	if len(batch) == 1 {
		return db.AuditEventInsert(ctx, a.pool, batch[0].ev)
	}
	var q strings.Builder
	q.Grow(160 + len(batch)*48)
	q.WriteString(`INSERT INTO audit_events
		(request_id, principal, workspace_id, tool, version, kind, connection_id, duration_ms, args_digest) VALUES `)
	args := make([]any, 0, len(batch)*9)
	for i, r := range batch {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteByte('(')
		for j := 1; j <= 9; j++ {
			if j > 1 {
				q.WriteByte(',')
			}
			q.WriteByte('$')
			q.WriteString(strconv.Itoa(i*9 + j))
		}
		q.WriteByte(')')
		e := r.ev
		args = append(args, e.RequestID, e.Principal, e.WorkspaceID, e.Tool, e.Version, e.Kind, e.ConnectionID,
			e.DurationMS, e.ArgsDigest)
	}
	_, err := a.pool.Exec(ctx, q.String(), args...)
	return db.Interpret(err)
}
