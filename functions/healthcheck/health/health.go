// Package health is the scheduled health check of docs/DESIGN.md §9a: one pass probes every catalog entry that has an
// installed, enabled connection and records healthy / stale / down on the entry.
//
// A pass (Checker.Run) is started by the EventBridge rule rate(30 minutes) through
// Checker.Handle, or once by `make healthcheck`; there is no timer in any process.
//
// Per entry: one check through one of its connections (db.HealthCandidateList picks it),
// with that connection's transport rules (docs/DESIGN.md §6: the remembered transport, else
// streamable HTTP with the narrowed SSE fallback) and declared headers, then the MCP
// liveness exchange (mcpclient.Pool.Ping: a fresh connect and ping). Each attempt is
// bounded by AttemptTimeout (10 s); a failed attempt is retried after 1 s, 2 s and 4 s
// (Retries), so a check costs at most 4 × 10 s + 7 s = 47 s.
//
// State (db.HealthRecordBatch applying entryhealth.After): success → healthy, consecutive_failures 0; failure
// → consecutive_failures + 1, stale for 1–2, down from 3; last_health_check always;
// last_health_error on failure, with header values scrubbed. Stale and down entries stay
// listed and installable: nothing here blocks an install.
//
// At most Concurrency attempts are in flight at once (64, HEALTH_CONCURRENCY in the
// deployed function); a check waiting between retries gives its slot to another check, so
// the waits cost no parallelism. Before starting a check the pass makes sure the
// context's deadline (the Lambda's remaining time) leaves room for a worst-case check plus
// Reserve; when it does not, the remaining entries are reported as skipped with SkipNoTime
// ("not checked this pass") and nothing is written for them. Checks run under a context
// that ends Reserve before the deadline, so a check cut short by it (SkipInterrupted)
// also writes nothing and the pass returns with Reserve left. The next pass reaches the
// skipped entries first (db.HealthCandidateList orders by last_health_check, which a
// skipped entry keeps), after the entries that were stale or down: every pass starts
// with those, a failing upstream being the likely slow one. Outcomes are written in
// batches (db.HealthRecordBatch). The budget arithmetic at 1,000 entries is in
// docs/DESIGN.md §9a "At scale".
//
// Each pass writes one structured summary log line and one CloudWatch EMF line (namespace
// Agentpack/HealthCheck, dimension Function: checked, healthy, stale, down, skipped,
// duration_ms, failed = stale + down of this pass, reconcile_failed = 1 when the catalog
// reconcile failed).
package health

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/sync/semaphore"
)

// Defaults of Options (docs/DESIGN.md §9a).
const (
	DefaultAttemptTimeout = 10 * time.Second
	DefaultConcurrency    = 64
	DefaultReserve        = 5 * time.Second
)

// DefaultRetries is the wait before each retry: 1 s, 2 s, 4 s (exponential backoff, each
// probe bounded by 10 s).
var DefaultRetries = []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second}

// Pinger is the liveness exchange; *mcpclient.Pool implements it.
type Pinger interface {
	Ping(ctx context.Context, t mcpclient.Target) (mcpclient.Info, error)
}

// Clock is the time source of a pass: Now stamps last_health_check and measures the
// remaining time; Sleep waits between retries (returning ctx's error if it ends first).
// Tests inject a virtual clock so that the 1/2/4 s schedule costs no real time.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Options configure a Checker. Pool and Pinger are required; zero fields take defaults.
type Options struct {
	Pool   *db.Pool
	Pinger Pinger // usually the process's *mcpclient.Pool
	Logger *slog.Logger
	// Metrics receives the pass's EMF line (os.Stdout in Lambda); nil disables.
	Metrics io.Writer
	// AttemptTimeout bounds one connect + ping attempt (default 10 s).
	AttemptTimeout time.Duration
	// Retries are the waits before each retry (default 1 s, 2 s, 4 s: four attempts).
	Retries []time.Duration
	// Target, when set, builds the upstream target of a connection (the stored OAuth
	// token included: connections.Service.TargetFor); nil is connections.TargetOf.
	Target func(ctx context.Context, c *db.Connection) mcpclient.Target
	// Concurrency is how many attempts (connect + ping, or a Refresh) are in flight at
	// once (default 64; ParseConcurrency reads HEALTH_CONCURRENCY). A check waiting
	// between retries does not hold one.
	Concurrency int
	// Reserve is the time kept free before the deadline for state writes and the summary
	// (default 5 s).
	Reserve time.Duration
	// Clock is the time source (default: real time).
	Clock Clock
	// Refresh, when set, runs after a successful check on the probed connection, bounded
	// by AttemptTimeout: it re-lists the upstream's tools so that drift is detected and the
	// catalog republished when they (or the remembered transport) changed (docs/DESIGN.md §6;
	// connections.Service.RefreshAndPublish). Its failure is logged and changes no health
	// state.
	Refresh func(ctx context.Context, c *db.Connection) error
	// Reconcile, when set, runs after the checks while Reserve is left before the deadline:
	// the deployed function rebuilds every workspace's catalog document with it, so a
	// document left stale by a failed write (the database is the source of truth) converges
	// within one schedule period (30 min). Its failure is logged and reported in
	// Summary.Reconciled, and changes no health state.
	Reconcile func(ctx context.Context) error
}

// Checker runs health-check passes. Safe for concurrent use, though passes are not meant
// to overlap (the schedule's period is far above the function timeout).
type Checker struct {
	o   Options
	log *slog.Logger
}

// New returns a Checker with o's defaults filled in.
func New(o Options) *Checker {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.Retries == nil {
		o.Retries = DefaultRetries
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Reserve <= 0 {
		o.Reserve = DefaultReserve
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	return &Checker{o: o, log: o.Logger}
}

// asSweepLimit bounds the rows of each kind one pass deletes from the authorization
// server's tables (db.ASSweep): 48 passes a day clear 480,000 expired token rows a day,
// far above what 15-minute access tokens and rotated refresh tokens produce at this scale.
const asSweepLimit = 10000

// WorstCase is the longest one check can take: every attempt timing out plus every
// retry wait (≈ 47 s with the defaults), plus AttemptTimeout for Refresh when set. It
// does not count a wait for a free slot after a retry wait (short: slots are FIFO and
// each is held for at most one attempt); the checks' context, ending Reserve before the
// deadline, bounds that.
func (c *Checker) WorstCase() time.Duration {
	d := time.Duration(len(c.o.Retries)+1) * (c.o.AttemptTimeout + attemptGrace)
	for _, r := range c.o.Retries {
		d += r
	}
	if c.o.Refresh != nil {
		d += c.o.AttemptTimeout
	}
	return d
}

// ParseConcurrency reads the HEALTH_CONCURRENCY setting of the deployed function: "" is
// DefaultConcurrency; otherwise an integer from 1 to 1024, else an error naming the
// variable.
func ParseConcurrency(v string) (int, error) {
	if v == "" {
		return DefaultConcurrency, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1024 {
		return 0, fmt.Errorf("health: HEALTH_CONCURRENCY must be an integer from 1 to 1024, got %q", v)
	}
	return n, nil
}

// Why an entry was not checked this pass (Result.Skip); its stored state is unchanged.
const (
	// SkipNoTime: the check was not started, the deadline left no room for a worst-case
	// check plus Reserve. The next pass starts with it (it keeps its older
	// last_health_check).
	SkipNoTime = "no time left"
	// SkipInterrupted: the pass was cancelled, or reached Reserve before its deadline,
	// during the check; an unfinished check says nothing about the upstream.
	SkipInterrupted = "interrupted"
	// SkipWriteFailed: the check ran but its state could not be recorded.
	SkipWriteFailed = "write failed"
)

// Result is the outcome of one entry in a pass.
type Result struct {
	EntryID             string `json:"entryId"`
	EntryName           string `json:"entryName"`
	ConnectionID        string `json:"connectionId"`
	Status              string `json:"status"`         // healthy | stale | down | skipped
	Skip                string `json:"skip,omitempty"` // why it was skipped: SkipNoTime, …
	ConsecutiveFailures int    `json:"consecutiveFailures"`
	Attempts            int    `json:"attempts"`
	Transport           string `json:"transport,omitempty"` // the transport that answered
	Error               string `json:"error,omitempty"`     // last_health_error as written
	DurationMS          int64  `json:"durationMs"`
}

// Summary is what a pass did. Checked counts entries whose state was written; Skipped
// lists the entries left for the next run (not enough time left, or the pass was
// cancelled).
type Summary struct {
	Checked    int   `json:"checked"`
	Healthy    int   `json:"healthy"`
	Stale      int   `json:"stale"`
	Down       int   `json:"down"`
	Skipped    int   `json:"skipped"`
	Reconciled *bool `json:"reconciled,omitempty"` // Reconcile ran: did it succeed
	// TasksExpired is how many expired tasks (MCP Tasks, mcp_tasks) the pass deleted.
	TasksExpired int64 `json:"tasksExpired"`
	DurationMS   int64 `json:"durationMs"`
	// StoppedInTime is false only when the pass had a deadline and its last step ended
	// after it (by the pass's Clock): the Reserve was too small for the writes.
	StoppedInTime bool     `json:"stoppedInTime"`
	Results       []Result `json:"results"`
}

// Handle is the Lambda handler for the EventBridge scheduled event: it runs one pass
// within the invocation's deadline and returns its summary. The event's content is only
// logged. It fails only when the pass could not start (the database is unreachable), so
// that Lambda reports the invocation as failed.
func (c *Checker) Handle(ctx context.Context, ev events.EventBridgeEvent) (*Summary, error) {
	c.log.InfoContext(ctx, "health check triggered", "event_id", ev.ID, "detail_type", ev.DetailType,
		"source", ev.Source, "scheduled_at", ev.Time)
	return c.Run(ctx)
}

// Run performs one pass over db.HealthCandidateList, at most Concurrency checks at a
// time, and returns the summary (also logged once and written as one EMF line). Errors:
// the candidate query's (UNAVAILABLE when the database is down); failures of single
// checks or state writes are reported in the results, not returned.
func (c *Checker) Run(ctx context.Context) (*Summary, error) {
	start := c.o.Clock.Now()
	cands, err := db.HealthCandidateList(ctx, c.o.Pool)
	if err != nil {
		return nil, fmt.Errorf("health: list candidates: %w", err)
	}
	failingFirst(cands)
	results := make([]Result, len(cands))
	// The checks' context ends Reserve before the pass's deadline: whatever is still
	// probing then is cut short (and records nothing), so that the writes, the reconcile
	// and the summary keep their reserve.
	work, cancel := ctx, context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		work, cancel = context.WithDeadline(ctx, dl.Add(-c.o.Reserve))
	}
	defer cancel()
	// FIFO (semaphore.Weighted): a check back from a retry wait queues behind at most the
	// one new check this loop is waiting to start.
	slots := semaphore.NewWeighted(int64(c.o.Concurrency))
	rec := newRecorder(ctx, c.o.Pool)
	var wg sync.WaitGroup
	next := 0
	for ; next < len(cands); next++ {
		if err := slots.Acquire(work, 1); err != nil {
			break
		}
		if !c.hasTime(ctx) {
			slots.Release(1)
			break
		}
		i := next
		wg.Go(func() {
			results[i] = c.check(work, rec, slots, &cands[i])
		})
	}
	wg.Wait()
	rec.close()
	for i := next; i < len(cands); i++ {
		why := SkipNoTime
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = SkipInterrupted
		}
		results[i] = Result{EntryID: cands[i].EntryID, EntryName: cands[i].EntryName,
			ConnectionID: cands[i].Connection.ID, Status: "skipped", Skip: why}
	}
	s := &Summary{Results: results}
	if c.o.Reconcile != nil && ctx.Err() == nil && c.hasReserve(ctx) {
		ok := true
		if err := c.o.Reconcile(ctx); err != nil {
			ok = false
			c.log.ErrorContext(ctx, "catalog reconcile failed", "err", err)
		}
		s.Reconciled = &ok
	}
	// Expired tasks (their results included) go with each pass: a task's TTL is at most a
	// day, so a 30-minute schedule keeps them at most half an hour past it.
	if n, err := db.TasksDeleteExpired(ctx, c.o.Pool); err != nil {
		c.log.ErrorContext(ctx, "expired task cleanup failed", "err", err)
	} else {
		s.TasksExpired = n
	}
	// Rate-limit counters of windows that ended two days ago (docs/RATE-LIMITS.md).
	if _, err := db.RateCounterSweep(ctx, c.o.Pool); err != nil {
		c.log.ErrorContext(ctx, "rate limit counter sweep failed", "err", err)
	}
	// The authorization server's dead rows (docs/AUTH.md): expired tokens, dead grants,
	// never-used old registrations, at most asSweepLimit of each per pass.
	if n, err := db.ASSweep(ctx, c.o.Pool, asSweepLimit); err != nil {
		c.log.ErrorContext(ctx, "authorization server sweep failed", "err", err)
	} else if n != (db.ASSwept{}) {
		c.log.InfoContext(ctx, "authorization server sweep", "tokens", n.Tokens, "grants", n.Grants, "clients", n.Clients)
	}
	end := c.o.Clock.Now()
	s.DurationMS = end.Sub(start).Milliseconds()
	dl, ok := ctx.Deadline()
	s.StoppedInTime = !ok || !end.After(dl)
	for _, r := range results {
		switch r.Status {
		case "skipped":
			s.Skipped++
			continue
		case db.HealthHealthy:
			s.Healthy++
		case db.HealthStale:
			s.Stale++
		case db.HealthDown:
			s.Down++
		}
		s.Checked++
	}
	c.report(ctx, s)
	return s, nil
}

// failingFirst moves the entries that were stale or down after their last check to the
// front, keeping the database's order (least recently checked first) within each group.
// A failing upstream is the one likely to hold a slot for a worst-case check (a hang costs
// every attempt's full timeout); started first, that long check overlaps the many quick
// ones instead of trailing the pass (docs/DESIGN.md §9a "At scale").
func failingFirst(cands []db.HealthCandidate) {
	slices.SortStableFunc(cands, func(a, b db.HealthCandidate) int {
		return cmp.Compare(rank(a), rank(b))
	})
}

func rank(c db.HealthCandidate) int {
	if c.EntryStatus != nil && (*c.EntryStatus == db.HealthStale || *c.EntryStatus == db.HealthDown) {
		return 0
	}
	return 1
}

// hasReserve reports whether ctx's deadline leaves at least Reserve.
func (c *Checker) hasReserve(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return !ok || dl.Sub(c.o.Clock.Now()) >= c.o.Reserve
}

// hasTime reports whether ctx's deadline leaves room for a worst-case check + Reserve.
func (c *Checker) hasTime(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return !ok || dl.Sub(c.o.Clock.Now()) >= c.WorstCase()+c.o.Reserve
}
