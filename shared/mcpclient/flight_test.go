package mcpclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/testpeer"
)

// hangingUpstream is the demo upstream on loopback behind a switch: while hang is set it
// accepts every request and never answers (until the client gives up), as a wedged
// process does; otherwise it serves. posts counts the POSTs that reached it while it hung.
type hangingUpstream struct {
	URL   string
	hang  atomic.Bool
	posts atomic.Int32
}

func newHangingUpstream(t *testing.T) *hangingUpstream {
	t.Helper()
	h, err := demoupstream.NewHandler(demoupstream.NewServer(nil), demoupstream.ModeStreamable)
	if err != nil {
		t.Fatal(err)
	}
	u := &hangingUpstream{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u.hang.Load() {
			if r.Method == http.MethodPost {
				u.posts.Add(1)
			}
			// Read the body first: the server notices the client going away (and cancels
			// r.Context()) only once the body is consumed.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first
	u.URL = srv.URL + "/mcp"
	return u
}

// fakeClock is a settable clock for the pool's failure memory.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestConcurrentCallsShareOneConnect (issue 44 item 4): eight concurrent calls to an
// upstream that accepts connections and never answers, with no live session, share one
// connect: one initialize reaches the upstream and every call has its UPSTREAM_TIMEOUT
// within one connect timeout plus a margin (queued one behind the other they took eight).
// The next call within FailureMemory fails at once with the same retryable code and sends
// nothing; once the upstream is back, a call after the window, a call after a connection
// test (Disconnect) and a call after a successful health check (Ping) reach it at once.
//
// The connect timeout is short only here (2 s). The bound, 2 s + 3 s × TEST_TIMEOUT_SCALE,
// is far above an idle machine's answer (2 s) and far below the queue this catches (16 s,
// and the calls' own 25 s deadline); the failure memory's window runs on a fake clock.
func TestConcurrentCallsShareOneConnect(t *testing.T) {
	t.Parallel()
	const connectTimeout = 2 * time.Second
	up := newHangingUpstream(t)
	clock := &fakeClock{t: time.Now()}
	p := newPool(t, &Options{ConnectTimeout: connectTimeout, FailureMemory: 5 * time.Second})
	p.now = clock.now
	tg := Target{ConnectionID: "hang", URL: up.URL}
	up.hang.Store(true)

	bound := connectTimeout + testpeer.Scaled(3*time.Second)
	start := time.Now()
	errs := make([]error, 8)
	took := make([]time.Duration, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			_, _, errs[i] = p.ListTools(t.Context(), tg)
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if e := apperr.As(err); e == nil || e.Code != apperr.UpstreamTimeout || !strings.Contains(e.Message, "did not complete the MCP handshake") {
			t.Errorf("call %d: %v, want UPSTREAM_TIMEOUT of the handshake", i, err)
		}
		if took[i] > bound {
			t.Errorf("call %d answered after %s, want within %s (one connect timeout and a margin)", i, took[i], bound)
		}
	}
	if n := up.posts.Load(); n != 1 {
		t.Errorf("%d initialize requests reached the upstream for 8 concurrent calls, want 1 shared connect", n)
	}

	// Within the window: at once, retryable, the same code, nothing sent.
	started := time.Now()
	_, _, err := p.ListTools(t.Context(), tg)
	e := apperr.As(err)
	if e == nil || e.Code != apperr.UpstreamTimeout || !e.Retryable() || !strings.Contains(e.Message, "the last connect failed") {
		t.Fatalf("call within the window: %v", err)
	}
	if f := FailureOf(err); f == nil || f.Stage != StageHTTP {
		t.Errorf("failure of the remembered connect: %+v", f)
	}
	if d := time.Since(started); d >= connectTimeout {
		t.Errorf("the call within the window took %s: it waited for a connect", d)
	}
	if n := up.posts.Load(); n != 1 {
		t.Errorf("a call within the window reached the upstream (%d requests)", n)
	}

	// The upstream recovers: still remembered within the window; used at once after it.
	up.hang.Store(false)
	clock.add(4 * time.Second)
	if _, _, err := p.ListTools(t.Context(), tg); err == nil || !strings.Contains(err.Error(), "the last connect failed") {
		t.Fatalf("call 4 s into the 5 s window: %v", err)
	}
	clock.add(2 * time.Second)
	if _, _, err := p.ListTools(t.Context(), tg); err != nil {
		t.Fatalf("the recovered upstream is not used after the window: %v", err)
	}

	// A connection test (Disconnect, then a call) and a successful health check (Ping)
	// forget a remembered failure at once.
	for _, recover := range []struct {
		name string
		do   func() error
	}{
		{"connection test", func() error { p.Disconnect(tg.ConnectionID); return nil }},
		{"health check", func() error { _, err := p.Ping(t.Context(), tg); return err }},
	} {
		t.Run(recover.name, func(t *testing.T) {
			p.Disconnect(tg.ConnectionID)
			up.hang.Store(true)
			if _, _, err := p.ListTools(t.Context(), tg); apperr.As(err) == nil || apperr.As(err).Code != apperr.UpstreamTimeout {
				t.Fatalf("hanging: %v", err)
			}
			up.hang.Store(false)
			if _, _, err := p.ListTools(t.Context(), tg); err == nil {
				t.Fatal("the failure was not remembered")
			}
			if err := recover.do(); err != nil {
				t.Fatal(err)
			}
			if _, _, err := p.ListTools(t.Context(), tg); err != nil {
				t.Errorf("after the %s: %v", recover.name, err)
			}
		})
	}
}

// TestFlightSurvivesLeaderLeaving: the caller whose call started a connect going away
// (its context cancelled) ends only its own wait: another caller of the same connect gets
// that connect's own outcome (here its timeout), not the leader's cancellation, and no
// second connect is made.
func TestFlightSurvivesLeaderLeaving(t *testing.T) {
	t.Parallel()
	up := newHangingUpstream(t)
	p := newPool(t, &Options{ConnectTimeout: 2 * time.Second})
	tg := Target{ConnectionID: "leader", URL: up.URL}
	up.hang.Store(true)
	ctx := t.Context()
	leaderCtx, cancelLeader := context.WithCancel(ctx)
	defer cancelLeader()
	leaderDone := make(chan error, 1)
	go func() { _, _, err := p.ListTools(leaderCtx, tg); leaderDone <- err }()
	// Wait until the leader's initialize reached the upstream.
	deadline := time.Now().Add(testpeer.Scaled(20 * time.Second))
	for up.posts.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the connect never reached the upstream")
		}
		time.Sleep(5 * time.Millisecond)
	}
	followerDone := make(chan error, 1)
	go func() { _, _, err := p.ListTools(ctx, tg); followerDone <- err }()
	cancelLeader()
	if err := <-leaderDone; apperr.As(err) == nil || apperr.As(err).Code != apperr.UpstreamUnavailable {
		t.Errorf("leader: %v, want its own cancellation", err)
	}
	up.hang.Store(false) // too late for the initialize already sent: it hangs to the timeout
	err := <-followerDone
	if e := apperr.As(err); e == nil || e.Code != apperr.UpstreamTimeout {
		t.Errorf("follower: %v, want the shared connect's timeout", err)
	}
	if n := up.posts.Load(); n != 1 {
		t.Errorf("%d hung connects for one leader and one follower, want 1", n)
	}
}
