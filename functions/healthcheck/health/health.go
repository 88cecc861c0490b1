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

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/emf"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/aws/aws-lambda-go/events"
	"github.com/cenkalti/backoff/v5"
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

// check probes one entry under ctx (the pass's context less Reserve) and records the
// outcome through rec. It holds one of slots on entry and releases it when done; ping
// hands it back during retry waits.
func (c *Checker) check(ctx context.Context, rec *recorder, slots *semaphore.Weighted, cand *db.HealthCandidate) Result {
	held := true
	defer func() {
		if held {
			slots.Release(1)
		}
	}()
	start := c.o.Clock.Now()
	r := Result{EntryID: cand.EntryID, EntryName: cand.EntryName, ConnectionID: cand.Connection.ID}
	target := connections.TargetOf(&cand.Connection)
	if c.o.Target != nil {
		target = c.o.Target(ctx, &cand.Connection)
	}
	// Ping connects afresh and caches nothing: a warm gateway session must not make a dead
	// upstream look alive.
	info, attempts, err := c.ping(ctx, slots, &held, target)
	r.Attempts = attempts
	if err != nil && ctx.Err() != nil {
		// The pass ran out of time (or was cancelled) mid-check: that says nothing about the
		// upstream, so nothing is recorded.
		r.Status, r.Skip = "skipped", SkipInterrupted
		return r
	}
	failure := ""
	if err != nil {
		failure = Scrub(apperr.Public(err).Message, cand.Connection.URL, cand.Connection.Headers)
	} else {
		r.Transport = info.Transport
	}
	// The entry's health and its connection's state are written together (both or
	// neither), batched with the other checks' outcomes (recorder).
	st, werr := rec.record(db.HealthWrite{EntryID: cand.EntryID, ConnectionID: cand.Connection.ID, At: c.o.Clock.Now(),
		Failure: failure, Transport: info.Transport, ProtocolVersion: info.ProtocolVersion})
	if werr != nil {
		c.log.ErrorContext(ctx, "health: recording state failed", "entry_id", cand.EntryID, "err", werr)
		r.Status, r.Skip, r.Error = "skipped", SkipWriteFailed, failure
		return r
	}
	r.Status, r.ConsecutiveFailures, r.Error = st.Status, st.ConsecutiveFailures, failure
	if err == nil && c.o.Refresh != nil && ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, c.o.AttemptTimeout)
		if rerr := c.o.Refresh(rctx, &cand.Connection); rerr != nil {
			c.log.WarnContext(ctx, "health: tool refresh failed", "connection_id", cand.Connection.ID, "err", rerr)
		}
		cancel()
	}
	r.DurationMS = c.o.Clock.Now().Sub(start).Milliseconds()
	c.log.DebugContext(ctx, "health: checked", "entry_id", r.EntryID, "connection_id", r.ConnectionID,
		"status", r.Status, "attempts", r.Attempts, "duration_ms", r.DurationMS)
	return r
}

// recordBatch is the most outcomes one state write carries.
const recordBatch = 100

// recorder batches a pass's state writes (docs/DESIGN.md §9a "At scale"): checks hand
// their outcome to one goroutine, which writes whatever has queued meanwhile (up to
// recordBatch) in one db.HealthRecordBatch — a group commit: a few statements per batch
// instead of five per check, on one pool connection, leaving the other to the tool
// refreshes.
type recorder struct {
	pool *db.Pool
	pass context.Context
	ch   chan recordReq
	done chan struct{}
}

type recordReq struct {
	w     db.HealthWrite
	reply chan recordRes
}

type recordRes struct {
	st  *db.HealthState
	err error
}

// newRecorder starts the writer of a pass whose context is pass; close stops it.
func newRecorder(pass context.Context, pool *db.Pool) *recorder {
	r := &recorder{pool: pool, pass: pass, ch: make(chan recordReq), done: make(chan struct{})}
	go r.loop()
	return r
}

func (r *recorder) loop() {
	defer close(r.done)
	for first := range r.ch {
		batch := []recordReq{first}
	drain:
		for len(batch) < recordBatch {
			select {
			case q, ok := <-r.ch:
				if !ok {
					break drain
				}
				batch = append(batch, q)
			default:
				break drain
			}
		}
		r.flush(batch)
	}
}

// flush writes one batch. The writes must land even when the checks' context is about
// to end (they use the Reserve) or the pass was cancelled, yet never run past the pass's
// own deadline, and take at most 5 s.
func (r *recorder) flush(batch []recordReq) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(r.pass), 5*time.Second)
	defer cancel()
	if dl, ok := r.pass.Deadline(); ok {
		wctx, cancel = context.WithDeadline(wctx, dl)
		defer cancel()
	}
	r.write(wctx, batch)
}

// write writes batch in one db.HealthRecordBatch and answers each check. When Postgres
// refuses the batch's statements (db.RefusedStatement: not the database being
// unavailable, but a value it will not store, say) and the batch has more than one write,
// each half is written on its own, recursively: the one write it refuses fails alone
// (SkipWriteFailed), after ≈ 2·log2(recordBatch) more transactions, instead of taking up to
// recordBatch−1 good outcomes down with it. A database that is down or unreachable fails
// the batch whole, at once (its halves would fail the same way); every half shares the
// flush's deadline.
func (r *recorder) write(ctx context.Context, batch []recordReq) {
	ws := make([]db.HealthWrite, len(batch))
	for i, q := range batch {
		ws[i] = q.w
	}
	out, err := db.HealthRecordBatch(ctx, r.pool, ws)
	if err != nil && len(batch) > 1 && ctx.Err() == nil && db.RefusedStatement(err) {
		h := len(batch) / 2
		r.write(ctx, batch[:h])
		r.write(ctx, batch[h:])
		return
	}
	for i, q := range batch {
		switch {
		case err != nil:
			q.reply <- recordRes{err: err}
		case out[i] == nil:
			q.reply <- recordRes{err: apperr.New(apperr.NotFound, "catalog entry %s not found", q.w.EntryID)}
		default:
			q.reply <- recordRes{st: out[i]}
		}
	}
}

// record writes w with the next batch and returns the entry's new state.
func (r *recorder) record(w db.HealthWrite) (*db.HealthState, error) {
	reply := make(chan recordRes, 1)
	r.ch <- recordReq{w: w, reply: reply}
	res := <-reply
	return res.st, res.err
}

// close stops the writer once every record has returned (call it after the checks).
func (r *recorder) close() {
	close(r.ch)
	<-r.done
}

// schedule is the retry schedule as a backoff.BackOff: the waits of Options.Retries in
// order, then backoff.Stop. (backoff/v5's Retry takes no injectable timer — its
// WithTimer option is unexported — so the loop in ping waits through Clock.Sleep.)
type schedule struct {
	waits []time.Duration
	i     int
}

func (s *schedule) NextBackOff() time.Duration {
	if s.i >= len(s.waits) {
		return backoff.Stop
	}
	s.i++
	return s.waits[s.i-1]
}

func (s *schedule) Reset() { s.i = 0 }

// ping runs the liveness exchange with retries: each attempt under AttemptTimeout, the
// waits from the schedule through the Clock. It returns the last error and the number of
// attempts made.
//
// The caller holds one of slots (*held); during each wait ping releases it and takes it
// again after (FIFO), so that waiting checks leave the slots to checks that probe. When
// ctx ends first it returns with *held false.
func (c *Checker) ping(ctx context.Context, slots *semaphore.Weighted, held *bool, t mcpclient.Target) (mcpclient.Info, int, error) {
	var b backoff.BackOff = &schedule{waits: c.o.Retries}
	for attempt := 1; ; attempt++ {
		info, err := c.attempt(ctx, t)
		if err == nil {
			return info, attempt, nil
		}
		if ctx.Err() != nil {
			return mcpclient.Info{}, attempt, err
		}
		wait := b.NextBackOff()
		if wait == backoff.Stop {
			return mcpclient.Info{}, attempt, err
		}
		slots.Release(1)
		*held = false
		serr := c.o.Clock.Sleep(ctx, wait)
		if serr == nil {
			serr = slots.Acquire(ctx, 1)
		}
		if serr != nil {
			return mcpclient.Info{}, attempt, errors.Join(err, serr)
		}
		*held = true
	}
}

// attempt is one liveness exchange bounded by AttemptTimeout. The bound is enforced here
// rather than trusted to the client: an upstream that hangs can hold a client's return
// past its context (go-sdk sends a best-effort notifications/cancelled and closes the
// session, measured at ≈5 s against a hanging loopback server), and the pass's deadline
// arithmetic (WorstCase) needs every attempt to end on time. A late Ping finishes in the
// background; its result is dropped.
func (c *Checker) attempt(ctx context.Context, t mcpclient.Target) (mcpclient.Info, error) {
	actx, cancel := context.WithTimeout(ctx, c.o.AttemptTimeout)
	defer cancel()
	type result struct {
		info mcpclient.Info
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		info, err := c.o.Pinger.Ping(actx, t)
		ch <- result{info, err}
	}()
	select {
	case r := <-ch:
		return r.info, r.err
	case <-actx.Done():
	}
	grace := time.NewTimer(attemptGrace) // prefer the client's own, more precise, error
	defer grace.Stop()
	select {
	case r := <-ch:
		return r.info, r.err
	case <-grace.C:
		return mcpclient.Info{}, apperr.Wrap(actx.Err(), apperr.UpstreamTimeout,
			"upstream did not complete the liveness exchange before the deadline (%s per attempt)", c.o.AttemptTimeout)
	}
}

// attemptGrace is how long attempt waits past the deadline for the client's own error.
const attemptGrace = 50 * time.Millisecond

// Scrub makes an error text safe for last_health_error: the secrets of the connection —
// header values (docs/DESIGN.md §9) and the URL's query values, userinfo and fragment — and any
// URL quoted in it are redacted with headers.Scrub, and the text is clipped to 500 bytes.
func Scrub(msg, rawURL string, h map[string]string) string {
	msg = headers.Scrub(msg, rawURL, h)
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	if msg == "" {
		msg = "health check failed"
	}
	return msg
}

// report writes the pass's one summary log line and one EMF line.
func (c *Checker) report(ctx context.Context, s *Summary) {
	var skipped, failing []string
	for _, r := range s.Results {
		switch r.Status {
		case "skipped":
			skipped = append(skipped, r.EntryName)
		case db.HealthStale, db.HealthDown:
			failing = append(failing, r.EntryName+": "+r.Error)
		}
	}
	c.log.InfoContext(ctx, "health check pass", "checked", s.Checked, "healthy", s.Healthy, "stale", s.Stale,
		"down", s.Down, "skipped", s.Skipped, "duration_ms", s.DurationMS, "skipped_entries", skipped,
		"failing", failing)
	if c.o.Metrics == nil {
		return
	}
	reconcileFailed := 0
	if s.Reconciled != nil && !*s.Reconciled {
		reconcileFailed = 1
	}
	// failed: checks of this pass that failed (the entry is now stale or down);
	// reconcile_failed: 1 when the end-of-pass catalog reconcile failed.
	emf.NewWriter(c.o.Metrics).Write(passSchema, []emf.Prop{{Key: "Function", Value: "healthcheck"}},
		float64(s.Checked), float64(s.Healthy), float64(s.Stale), float64(s.Down), float64(s.Skipped),
		float64(s.DurationMS), float64(s.Stale+s.Down), float64(reconcileFailed))
}

// passSchema is the pass's EMF line: its counts and duration by {Function}.
var passSchema = emf.NewSchema("Agentpack/HealthCheck", [][]string{{"Function"}},
	emf.Metric{Name: "checked", Unit: emf.Count}, emf.Metric{Name: "healthy", Unit: emf.Count},
	emf.Metric{Name: "stale", Unit: emf.Count}, emf.Metric{Name: "down", Unit: emf.Count},
	emf.Metric{Name: "skipped", Unit: emf.Count}, emf.Metric{Name: "duration_ms", Unit: emf.Milliseconds},
	emf.Metric{Name: "failed", Unit: emf.Count}, emf.Metric{Name: "reconcile_failed", Unit: emf.Count})
