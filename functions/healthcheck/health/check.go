package health

import (
	"context"
	"errors"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/cenkalti/backoff/v5"
	"golang.org/x/sync/semaphore"
)

// One entry's check: the liveness exchange with its retries (ping, attempt, schedule) and
// the scrubbed outcome recorded through the pass's recorder.

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
