// Package audit writes the gateway's audit trail (docs/DESIGN.md §4, the audit rule):
// every successful write — a proxied tools/call whose result is not isError, a built-in
// that is not read-only — has its audit_events row, and so has a call refused by an access
// policy (kind "denied") and a proxied call that failed (Entry.Outcome says how: an isError
// result, the upstream's JSON-RPC error, a timeout, an unreachable upstream). A row holds who, which tool, which connection, which chat, how
// long, and a SHA-256 digest of the arguments, never their values.
//
// The row after the answer (docs/DESIGN.md "The audit row after the answer"). Record
// queues the row and returns at once; one writer goroutine commits queued rows in batches
// (one multi-row INSERT of at most maxBatch rows) and exits when the queue is empty. A
// batch is written once its oldest row has waited Options.Linger (DefaultLinger, 25 ms),
// at once when maxBatch rows wait or when Flush, Drain or Close waits on the queue: each
// statement costs Postgres a fixed 0.3–0.5 ms whatever its rows (db.AuditEventInsert's
// function call, its commit), which a batch of a few busy milliseconds' rows shares
// instead of paying it row by row. The answer never waits on the database. What keeps a
// row from being lost:
//
//   - each row has a key (a UUID chosen here) and the INSERT skips a key already written,
//     so a batch whose commit was not seen is retried without writing a row twice;
//   - a batch that fails for a retryable reason (the database is unreachable) goes back to
//     the head of the queue and is retried after a backoff (100 ms doubling to 5 s);
//   - a batch the database refuses (a row its constraints reject) is written row by row,
//     so that only the refused row is lost;
//   - under Lambda, Drain runs after every invocation inside a registered extension
//     (lambdaapp.RegisterDrain), so the execution environment is not frozen before the
//     invocation's rows are committed; on SIGTERM and on local shutdown Close flushes.
//
// The queue is bounded (MaxQueued rows, about 1 KiB each). A row that cannot be written —
// the queue is full, the database refused it, or the process is stopping with it still
// queued — is counted (Stats.Lost) and logged at error level by its key with its fields
// (never the arguments: only their digest is ever kept), so it can be restored from the
// log. Only a process killed without its shutdown (SIGKILL, a crash) loses queued rows
// silently.
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/google/uuid"
)

// maxBatch bounds the rows of one INSERT.
const maxBatch = 256

// batchTimeout bounds one batch INSERT; a batch that times out is retried.
const batchTimeout = 10 * time.Second

// DefaultLinger is how long the oldest queued row waits for others to share its batch
// (Options.Linger). 25 ms halves Postgres's CPU per proxied call at c=8 against 10 ms
// (docs/PERFORMANCE.md, "The audit statement"); it bounds how long a row waits in memory
// outside Lambda (under Lambda, Drain cuts it at the end of each invocation).
const DefaultLinger = 25 * time.Millisecond

// DefaultMaxQueued is how many rows a Trail holds in memory at most (Options.MaxQueued).
const DefaultMaxQueued = 10000

// Retry backoff after a failed batch: RetryMin, doubling up to RetryMax.
const (
	RetryMin = 100 * time.Millisecond
	RetryMax = 5 * time.Second
)

// Options configure a Trail.
type Options struct {
	Pool *db.Pool
	// Logger receives the lost rows (error level) and retried batches (warn); nil discards.
	Logger *slog.Logger
	// MaxQueued bounds the queued rows (default DefaultMaxQueued).
	MaxQueued int
	// Linger is how long the writer lets the oldest queued row wait for more rows before
	// it writes a batch of fewer than maxBatch (0: DefaultLinger; negative: no wait). Flush,
	// Drain and Close cut it short.
	Linger time.Duration
}

// Stats are a Trail's counters since it was made.
type Stats struct {
	Recorded int64 // rows given to Record
	Written  int64 // rows committed
	Retries  int64 // failed batch attempts that were retried
	Batches  int64 // batches written (one INSERT each, or row by row when one row was refused)
	Lost     int64 // rows that could not be written (logged by key)
	Queued   int   // rows waiting or being written now
}

// Trail is the audit trail: it records rows (queued, written in batches after the
// answer) and lists them. Use New or NewTrail; the zero value is not usable.
type Trail struct {
	pool   *db.Pool
	log    *slog.Logger
	max    int
	linger time.Duration

	mu       sync.Mutex
	queue    []*db.AuditEvent
	inflight int           // rows of the batch being written
	running  bool          // the writer goroutine runs
	stopped  chan struct{} // closed when the running writer goroutine has returned
	// writes is the parent of every batch write's context; Close cancels it when its flush
	// ran out of time, so that a write hanging on an unreachable database ends at once.
	writes     context.Context
	stopWrites context.CancelFunc
	failing    bool // the last attempt failed and was not yet followed by a success
	closed     bool
	changed    chan struct{} // closed and replaced on every state change
	kick       chan struct{} // cuts a retry backoff short (Flush, Close)
	// wake cuts a linger short: maxBatch rows wait, or a Flush, Drain or Close began.
	wake    chan struct{}
	waiters int // Flush, Drain and Close calls waiting: the writer does not linger
	stats   Stats
}

// New returns a Trail kept in pool's audit_events with the default options.
func New(pool *db.Pool) *Trail { return NewTrail(Options{Pool: pool}) }

// NewTrail returns a Trail with o.
func NewTrail(o Options) *Trail {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = DefaultMaxQueued
	}
	switch {
	case o.Linger == 0:
		o.Linger = DefaultLinger
	case o.Linger < 0:
		o.Linger = 0
	}
	writes, stop := context.WithCancel(context.Background())
	return &Trail{pool: o.Pool, log: o.Logger, max: o.MaxQueued, linger: o.Linger, changed: make(chan struct{}),
		kick: make(chan struct{}, 1), wake: make(chan struct{}, 1), writes: writes, stopWrites: stop}
}

// Entry is one audited call.
type Entry struct {
	RequestID   string
	Principal   string // the caller's subject
	WorkspaceID string
	Tool        string // the name the client called
	Version     string // a built-in's version; "" for proxied tools
	Kind        string // "builtin", "proxied" or "denied"
	// Outcome is how the call ended (db.AuditEvent.Outcome: "ok", "tool_error", "rpc_error",
	// "timeout", "unavailable", "upstream_error", "denied"); "" is "ok" ("denied" for kind
	// "denied").
	Outcome      string
	ConnectionID string // "" for built-ins
	// ChatID is the chat the gateway accepted for the request (request.State.ChatID: a chat
	// of WorkspaceID, checked at the edge); "" when the request named none. Never a raw
	// header value.
	ChatID   string
	Duration time.Duration
	// Arguments are the call's raw arguments; only their SHA-256 is stored.
	Arguments []byte
}

// Record queues e's row (timestamped now) for the writer and returns at once with nil: the
// caller's answer does not wait on the database. A row that cannot be queued (MaxQueued
// rows already wait) is counted lost and logged by key. After Close, Record writes the row
// itself and returns that INSERT's error ("audit: …"), so a late call still has its row.
func (w *Trail) Record(e Entry) error {
	sum := sha256.Sum256(e.Arguments)
	ev := &db.AuditEvent{
		RowKey: uuid.NewString(), OccurredAt: time.Now().UTC(),
		RequestID: e.RequestID, Principal: e.Principal, WorkspaceID: &e.WorkspaceID,
		Tool: e.Tool, Version: e.Version, Kind: e.Kind, Outcome: e.Outcome, DurationMS: float64(e.Duration.Microseconds()) / 1000,
		ArgsDigest: "sha256:" + hex.EncodeToString(sum[:]),
	}
	if e.ConnectionID != "" {
		ev.ConnectionID = &e.ConnectionID
	}
	if e.ChatID != "" {
		ev.ChatID = &e.ChatID
	}
	w.mu.Lock()
	w.stats.Recorded++
	if w.closed {
		w.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
		defer cancel()
		if err := db.AuditEventInsert(ctx, w.pool, ev); err != nil {
			w.lose([]*db.AuditEvent{ev}, "write after close failed: "+err.Error())
			return fmt.Errorf("audit: %s %s: %w", e.Kind, e.Tool, err)
		}
		w.mu.Lock()
		w.stats.Written++
		w.mu.Unlock()
		return nil
	}
	if len(w.queue)+w.inflight >= w.max {
		w.mu.Unlock()
		w.lose([]*db.AuditEvent{ev}, "queue full")
		return nil
	}
	w.queue = append(w.queue, ev)
	if len(w.queue) == maxBatch {
		w.signal(w.wake)
	}
	if !w.running {
		w.running = true
		w.stopped = make(chan struct{})
		go func(stopped chan struct{}) {
			defer close(stopped)
			w.run()
		}(w.stopped)
	}
	w.mu.Unlock()
	return nil
}

// Flush waits until every queued row is committed and returns nil, or returns ctx's error
// when it ends first (the rows stay queued). A writer waiting out a retry backoff is woken
// to try at once.
func (w *Trail) Flush(ctx context.Context) error { return w.wait(ctx, false) }

// Drain is Flush for the end of a Lambda invocation: it also returns, with an UNAVAILABLE
// error, as soon as a batch attempt fails, so that an execution environment is not held
// while the database is down (the rows stay queued and are retried by the next invocation's
// writer, and flushed by Close on SIGTERM).
func (w *Trail) Drain(ctx context.Context) error { return w.wait(ctx, true) }

func (w *Trail) wait(ctx context.Context, stopOnFailure bool) error {
	w.mu.Lock()
	backingOff := w.failing && w.inflight == 0 && w.running
	w.waiters++
	w.mu.Unlock()
	w.signal(w.wake) // no linger while someone waits
	defer func() {
		w.mu.Lock()
		w.waiters--
		w.mu.Unlock()
	}()
	if backingOff && !stopOnFailure {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	for {
		w.mu.Lock()
		idle := len(w.queue) == 0 && w.inflight == 0
		failing := w.failing && w.inflight == 0
		ch := w.changed
		w.mu.Unlock()
		if idle {
			return nil
		}
		if stopOnFailure && failing {
			return apperr.New(apperr.Unavailable, "audit rows queued: the database is unreachable")
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close flushes until shortly before ctx ends, then counts and logs by key every row it
// could not write (the process is stopping), those of a batch in flight included. Later
// Records write their row themselves. It returns how many rows were lost while closing.
func (w *Trail) Close(ctx context.Context) int {
	w.mu.Lock()
	lostBefore := w.stats.Lost
	w.mu.Unlock()
	// The flush may take ctx's time but a reserve, kept for counting and logging what
	// cannot be written: the shutdown budget ends the process with ctx.
	fctx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		fctx, cancel = context.WithDeadline(ctx, dl.Add(-min(time.Until(dl)/4, 250*time.Millisecond)))
		defer cancel()
	}
	_ = w.Flush(fctx)
	w.mu.Lock()
	w.closed = true
	running, stopped := w.running, w.stopped
	w.mu.Unlock()
	if running {
		// A batch may be in flight (the flush gave up waiting on it): end its write now
		// (the database did not answer within the flush's time); its rows go back to the
		// queue, and the writer, closed and failing, counts and logs every queued row as
		// lost and stops. Without this they could be neither written nor logged when the
		// process stops. A row whose INSERT the server committed just as it was cancelled
		// is logged as lost although written: at most one batch, and only on this path.
		if fctx.Err() != nil {
			w.stopWrites()
		}
		select {
		case w.kick <- struct{}{}:
		default:
		}
		select {
		case <-stopped:
		case <-ctx.Done():
		}
	}
	w.mu.Lock()
	left := w.queue
	w.queue = nil
	w.notify()
	w.mu.Unlock()
	if len(left) > 0 {
		w.lose(left, "process stopping")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return int(w.stats.Lost - lostBefore)
}

// Stats returns the counters now.
func (w *Trail) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Queued = len(w.queue) + w.inflight
	return s
}

// List returns workspace ws's newest audit rows, at most limit (1–200; anything else is
// 50), newest first. The rows this process queued are committed first (at most 2 s), so a
// caller reads its own writes. Errors: UNAVAILABLE, wrapped with "audit: list <ws>".
func (w *Trail) List(ctx context.Context, ws string, limit int) ([]db.AuditEvent, error) {
	fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_ = w.Drain(fctx)
	cancel()
	evs, err := db.AuditEventList(ctx, w.pool, ws, limit)
	if err != nil {
		return nil, fmt.Errorf("audit: list %s: %w", ws, err)
	}
	return evs, nil
}
