// Package audit writes the gateway's audit trail (docs/DESIGN.md §4, the audit rule):
// every successful write — a proxied tools/call whose result is not isError, a built-in
// that is not read-only — has its audit_events row committed before the caller is
// answered. A row holds who, which tool, which connection, how long, and a SHA-256 digest
// of the arguments, never their values.
//
// Group commit. The rule costs one Postgres round trip per call. Under concurrency the rows
// of calls that finish while an INSERT is in flight are written together by one multi-row
// INSERT: the caller that finds no writer running becomes the writer and inserts what is
// queued (at concurrency 1 that is its own row, inline — no added latency); callers
// arriving meanwhile queue and wait; when the writer's batch commits it answers that
// batch and, if rows queued in the meantime, hands the writing on to a new goroutine so
// that it never waits for rows other than its own batch. Lossless: each caller waits for
// the commit of the batch that holds its row; a failed batch returns the error to every
// caller in it (whose requests then fail), and nothing is dropped.
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/agentpack/gateway/shared/db"
)

// maxBatch bounds the rows of one INSERT (9 parameters each, far below Postgres's 65,535).
const maxBatch = 256

// batchTimeout bounds one batch INSERT.
const batchTimeout = 10 * time.Second

// Trail is the audit trail: it records rows (batching concurrent ones) and lists them.
// Use New; the zero value is not usable.
type Trail struct {
	pool    *db.Pool
	mu      sync.Mutex
	pending []*req
	running bool
}

type req struct {
	ev   *db.AuditEvent
	done chan error
}

// New returns the Trail kept in pool's audit_events.
func New(pool *db.Pool) *Trail { return &Trail{pool: pool} }

// Entry is one audited call.
type Entry struct {
	RequestID    string
	Principal    string // the caller's subject
	WorkspaceID  string
	Tool         string // the name the client called
	Version      string // a built-in's version; "" for proxied tools
	Kind         string // "builtin" or "proxied"
	ConnectionID string // "" for built-ins
	Duration     time.Duration
	// Arguments are the call's raw arguments; only their SHA-256 is stored.
	Arguments []byte
}

// Record commits e's row and returns once it is committed, or the error ("audit: …") of the
// batch that held it. It is never cancelled by the caller's context: a row the upstream
// already acted on must not be lost because the client went away.
func (w *Trail) Record(e Entry) error {
	sum := sha256.Sum256(e.Arguments)
	ev := &db.AuditEvent{
		RequestID: e.RequestID, Principal: e.Principal, WorkspaceID: &e.WorkspaceID,
		Tool: e.Tool, Version: e.Version, Kind: e.Kind, DurationMS: float64(e.Duration.Microseconds()) / 1000,
		ArgsDigest: "sha256:" + hex.EncodeToString(sum[:]),
	}
	if e.ConnectionID != "" {
		ev.ConnectionID = &e.ConnectionID
	}
	if err := w.write(ev); err != nil {
		return fmt.Errorf("audit: %s %s: %w", e.Kind, e.Tool, err)
	}
	return nil
}

// write commits ev, in a batch with other concurrent rows, and returns when that batch
// committed (nil) or failed (the batch's error).
func (w *Trail) write(ev *db.AuditEvent) error {
	r := &req{ev: ev, done: make(chan error, 1)}
	w.mu.Lock()
	w.pending = append(w.pending, r)
	lead := !w.running
	w.running = true
	w.mu.Unlock()
	if lead {
		w.flush()
	}
	return <-r.done
}

// flush writes one batch of queued rows and answers its callers; it runs with running set
// and leaves it cleared or passed on to a new goroutine.
func (w *Trail) flush() {
	w.mu.Lock()
	n := min(len(w.pending), maxBatch)
	batch := w.pending[:n:n]
	w.pending = w.pending[n:]
	if len(w.pending) == 0 {
		w.pending = nil
	}
	w.mu.Unlock()
	evs := make([]*db.AuditEvent, len(batch))
	for i, r := range batch {
		evs[i] = r.ev
	}
	// Never the callers' contexts (a caller going away must not cancel the others' rows),
	// but bounded: a hung connection would otherwise keep running set for good and block
	// every later audited call of the process. A timed-out batch fails its callers.
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	err := db.AuditEventInsert(ctx, w.pool, evs...)
	cancel()
	for _, r := range batch {
		r.done <- err
	}
	w.mu.Lock()
	more := len(w.pending) > 0
	w.running = more
	w.mu.Unlock()
	if more {
		go w.flush()
	}
}

// List returns workspace ws's newest audit rows, at most limit (1–200; anything else is
// 50), newest first. Errors: UNAVAILABLE, wrapped with "audit: list <ws>".
func (w *Trail) List(ctx context.Context, ws string, limit int) ([]db.AuditEvent, error) {
	evs, err := db.AuditEventList(ctx, w.pool, ws, limit)
	if err != nil {
		return nil, fmt.Errorf("audit: list %s: %w", ws, err)
	}
	return evs, nil
}
