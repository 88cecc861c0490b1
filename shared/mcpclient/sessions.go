package mcpclient

// The pool's per-connection state: an entry's live session and its call count, the one
// connect in flight per connection that callers share, remembered failed connects, and
// eviction of least recently used sessions under MaxSessionBytes.

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// entry is one connection id's slot: flight is the connect in progress (one at a time;
// every caller of its configuration shares its outcome), failed the last connect's
// remembered failure, sess the live session. All guarded by Pool.mu.
type entry struct {
	flight  *flight
	failed  *failure
	sess    *session     // guarded by Pool.mu
	lastKey string       // configKey of the last session that connected; guarded by Pool.mu
	last    Info         // what worked for it, reused on reconnect; guarded by Pool.mu
	tune    *versionTune // protocol version by measurement (tune.go); guarded by Pool.mu
}

// flight is one connect in progress for an entry: done is closed once it ended, err is its
// failure (nil: the session is the entry's).
type flight struct {
	key  string // configKey of the target it connects
	done chan struct{}
	err  error
	// sess, on success, is the session connected, with one call already begun on it for
	// the caller that started the flight: between the connect and that caller's call, a
	// concurrent connect's eviction (overBudgetLocked) must not take a session nobody has
	// used yet. Set under p.mu before done is closed; nil on failure.
	sess *session
}

// failure is a remembered failed connect (Options.FailureMemory).
type failure struct {
	key   string // configKey it failed with
	err   *apperr.Error
	at    time.Time
	until time.Time
}

type session struct {
	key         string
	cs          *mcp.ClientSession
	info        Info
	rt          *roundTripper
	url         string       // the upstream endpoint (forward.go posts to it)
	http        *http.Client // the session's HTTP client (guarded dialer, declared headers)
	maxEvent    int          // bound of one SSE event read by forward.go
	raw         *rawConn     // legacy SSE only: the connection forwarded requests travel on
	cancel      context.CancelFunc
	connectedAt time.Time
	lastUsed    atomic.Int64 // unix nanoseconds
	dead        atomic.Bool  // the connection ended (upstream closed it or it failed)
	inflight    atomic.Int32 // calls running on the session (do)
	retired     atomic.Bool  // replaced while calls ran: closed when the last one ends
	closeOnce   sync.Once
	logOnce     sync.Once // logging/setLevel sent for a relaying call (relay.go)
	// tasks are the upstream's own tasks created on this session and not yet seen to end
	// (tasks.go): upstream task id → until when it keeps the session from eviction.
	tasksMu sync.Mutex
	tasks   map[string]time.Time
}

// retire closes s once no call runs on it (now, if none does): a session replaced by the
// version measurement keeps serving the calls already sent on it.
func (s *session) retire() {
	s.retired.Store(true)
	if s.inflight.Load() == 0 {
		s.close()
	}
}

// begin and end bracket one call on s (see retire).
func (s *session) begin() { s.inflight.Add(1) }
func (s *session) end() {
	if s.inflight.Add(-1) == 0 && s.retired.Load() {
		s.close()
	}
}

func (s *session) close() {
	s.closeOnce.Do(func() {
		_ = s.cs.Close()
		s.cancel()
	})
}

// forgetFailure forgets the remembered failed connect of t's connection and configuration.
func (p *Pool) forgetFailure(t Target) {
	if t.ConnectionID == "" {
		return
	}
	key := configKey(t)
	p.mu.Lock()
	if e := p.conns[t.ConnectionID]; e != nil && e.failed != nil && e.failed.key == key {
		e.failed = nil
	}
	p.mu.Unlock()
}

// session returns the cached live session for t, or connects one, with the call counted in
// (s.begin); the caller ends it with s.end. A live session of t's configuration is taken
// under p.mu alone. Without one, one connect runs per connection at a time (a flight):
// every caller of the same configuration waits for it and shares its outcome (the session,
// or its error), so N concurrent callers of a hanging upstream all have their answer after
// one connect timeout, not N; a caller of another configuration waits for it to end and
// then connects its own. A caller's context ends only its own wait: the connect itself runs
// detached from any one caller, bounded by ConnectTimeout. A connect that failed with
// UPSTREAM_TIMEOUT or UPSTREAM_UNAVAILABLE is remembered for FailureMemory: calls of that
// configuration in the window fail at once (recentFailure).
func (p *Pool) session(ctx context.Context, t Target) (*session, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	if t.ConnectionID == "" {
		s, err := p.connect(ctx, t)
		if err == nil {
			s.begin()
		}
		return s, err
	}
	key := configKey(t)
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, apperr.New(apperr.UpstreamUnavailable, "upstream client is shut down")
		}
		e := p.conns[t.ConnectionID]
		if e == nil {
			e = &entry{}
			p.conns[t.ConnectionID] = e
		}
		if s := e.sess; s != nil && s.key == key && !s.dead.Load() {
			s.begin() // under p.mu: a retirement cannot close it before the call starts
			p.mu.Unlock()
			return s, nil
		}
		f := e.flight
		mine := false // this caller started f: the session it connects is begun for it
		if f == nil {
			if fl := e.failed; fl != nil && fl.key == key && p.now().Before(fl.until) {
				p.mu.Unlock()
				return nil, recentFailure(fl, p.now())
			}
			f, mine = p.startFlightLocked(ctx, e, t, key), true
		}
		p.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			if mine {
				go func() { // the call begun for this caller will not run: end it
					<-f.done
					if f.sess != nil {
						f.sess.end()
					}
				}()
			}
			return nil, ctxError(ctx, "waiting for a connect to this upstream")
		}
		if f.key == key && f.err != nil {
			return nil, f.err // the outcome every caller of this connect shares
		}
		if mine && f.sess != nil {
			return f.sess, nil // begun by the flight, so no eviction could take it
		}
		// Connected (the session is the entry's: take it above), or the connect was for
		// another configuration: look again.
	}
}

// startFlightLocked starts the connect of t (configuration key) for entry e and returns its
// flight; p.mu is held. The connect runs in its own goroutine on a context detached from
// ctx's cancellation (its values kept), so that no caller's departure fails the others.
func (p *Pool) startFlightLocked(ctx context.Context, e *entry, t Target, key string) *flight {
	f := &flight{key: key, done: make(chan struct{})}
	e.flight = f
	old := e.sess
	e.sess = nil
	if e.lastKey != key {
		e.tune = nil // a new configuration is measured afresh
	} else if e.tune != nil && e.tune.offer() != "" {
		t.ProtocolVersion = e.tune.offer()
	}
	if e.lastKey == key {
		// Reconnecting the same configuration: go straight to what worked last time.
		if t.Remembered == "" {
			t.Remembered = e.last.Transport
		}
		if t.ProtocolVersion == "" {
			t.ProtocolVersion = e.last.ProtocolVersion
		}
	}
	if old != nil {
		go old.retire() // config changed or connection ended: closed once its calls end
	}
	cctx := context.WithoutCancel(ctx)
	go func() {
		s, err := p.connect(cctx, t)
		p.mu.Lock()
		e.flight = nil
		var victims []*session
		switch {
		case err != nil:
			f.err = err
			if ae := apperr.As(err); ae != nil && p.opts.FailureMemory > 0 &&
				(ae.Code == apperr.UpstreamTimeout || ae.Code == apperr.UpstreamUnavailable) {
				now := p.now()
				e.failed = &failure{key: key, err: ae, at: now, until: now.Add(p.opts.FailureMemory)}
			}
		case p.closed:
			f.err = apperr.New(apperr.UpstreamUnavailable, "upstream client is shut down")
		default:
			e.sess, e.failed = s, nil
			e.lastKey, e.last = key, s.info
			s.begin() // the starter's call (flight.sess)
			f.sess = s
			victims = p.overBudgetLocked(s)
		}
		p.mu.Unlock()
		close(f.done)
		if err == nil && f.err != nil {
			s.close()
		}
		if len(victims) > 0 {
			p.evictions.Add(int64(len(victims)))
			for _, v := range victims {
				go v.retire()
			}
		}
	}()
	return f
}

// recentFailure is the answer to a call made while fl is remembered: fl's code (retryable)
// and message, saying when the connect failed and when the next one may run; its Failure
// (stage) is fl's. now is the pool's clock.
func recentFailure(fl *failure, now time.Time) *apperr.Error {
	e := apperr.Wrap(fl.err, fl.err.Code, "%s (the last connect failed %s ago; the next one runs in %s)",
		fl.err.Message, now.Sub(fl.at).Round(100*time.Millisecond), fl.until.Sub(now).Round(100*time.Millisecond)).
		WithHint("try again in a few seconds")
	if f := FailureOf(fl.err); f != nil {
		e = e.WithDetails(&Failure{Stage: f.Stage, HTTPStatus: f.HTTPStatus, Hint: e.Hint})
	}
	return e
}

// SessionBytes is the estimated heap of one cached live session (go-sdk client session,
// its HTTP client and round tripper, the pool's bookkeeping), measured with 15,000
// streamable sessions on loopback (cmd/bench -only workspaces): about 9 kB; rounded up.
const SessionBytes = 16 << 10

// overBudgetLocked returns, when the cached sessions (kept among them) weigh more than
// MaxSessionBytes, as many of the least recently used evictable sessions as it takes to
// get back under it (or every evictable one, when that is not enough), each forgotten from
// its entry; nil otherwise. Evictable: not kept, no call in flight, and no live upstream
// task tied to it (tasks.go) — so the pool can stay above the bound while calls or tasks
// hold its sessions, and the first connect after they end brings it back under, closing
// as many idle sessions as that takes, not just one. It visits every entry and sorts the
// candidates: it runs after a connect only, whose handshake costs far more. p.mu is held.
func (p *Pool) overBudgetLocked(kept *session) []*session {
	if p.opts.MaxSessionBytes <= 0 {
		return nil
	}
	live := 0
	for _, e := range p.conns {
		if e.sess != nil {
			live++
		}
	}
	over := live - int(p.opts.MaxSessionBytes/SessionBytes)
	if over <= 0 {
		return nil
	}
	now := time.Now()
	var cand []*entry
	for _, e := range p.conns {
		s := e.sess
		if s == nil || s == kept || s.inflight.Load() > 0 || s.holdsTask(now) {
			continue
		}
		cand = append(cand, e)
	}
	slices.SortFunc(cand, func(a, b *entry) int { return cmp.Compare(a.sess.lastUsed.Load(), b.sess.lastUsed.Load()) })
	victims := make([]*session, 0, min(over, len(cand)))
	for _, e := range cand[:min(over, len(cand))] {
		victims = append(victims, e.sess)
		e.sess = nil
	}
	return victims
}

// SessionStats reports the cached live sessions, the bytes they are estimated at
// (SessionBytes each), the bound, and how many sessions were closed to stay under it.
func (p *Pool) SessionStats() (sessions int, bytes, maxBytes int64, evictions int64) {
	p.mu.Lock()
	for _, e := range p.conns {
		if e.sess != nil {
			sessions++
		}
	}
	p.mu.Unlock()
	return sessions, int64(sessions) * SessionBytes, p.opts.MaxSessionBytes, p.evictions.Load()
}

// drop forgets s if it is still connectionID's session, and closes it.
func (p *Pool) drop(connectionID string, s *session) {
	p.mu.Lock()
	if e := p.conns[connectionID]; e != nil && e.sess == s {
		e.sess = nil
	}
	p.mu.Unlock()
	s.dead.Store(true)
	go s.close()
}
