package mcpclient

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/testpeer"
)

// TestSessionBound: with MaxSessionBytes the pool keeps at most MaxSessionBytes /
// SessionBytes live sessions; a new one closes the least recently used idle session (its
// connection reconnects on its next call, and works), and the evictions are counted.
func TestSessionBound(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: testpeer.ModeStateful})
	p := newPool(t, &Options{FixedVersion: true, MaxSessionBytes: 3 * SessionBytes})
	tg := func(i int) Target { return Target{ConnectionID: fmt.Sprintf("c%d", i), URL: f.URL} }
	for i := range 3 {
		if err := echo(t, p, tg(i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	if err := echo(t, p, tg(0), "again"); err != nil { // c0 is now the most recent; c1 the least
		t.Fatal(err)
	}
	if err := echo(t, p, tg(3), "x"); err != nil {
		t.Fatal(err)
	}
	n, b, maxB, ev := p.SessionStats()
	if n != 3 || b != 3*SessionBytes || maxB != 3*SessionBytes || ev != 1 {
		t.Fatalf("stats: %d sessions, %d bytes, max %d, %d evictions; want 3, 3 sessions' bytes, 1", n, b, maxB, ev)
	}
	var live []string
	for _, s := range p.Status() {
		live = append(live, s.ConnectionID)
	}
	if fmt.Sprint(live) != "[c0 c2 c3]" {
		t.Errorf("live sessions %v, want [c0 c2 c3] (c1 was the least recently used)", live)
	}
	before := f.CountRequests(http.MethodPost, `"method":"initialize"`)
	if err := echo(t, p, tg(1), "back"); err != nil {
		t.Fatal(err)
	}
	if got := f.CountRequests(http.MethodPost, `"method":"initialize"`); got != before+1 {
		t.Errorf("the evicted connection made %d connects, want 1", got-before)
	}
	// Unbounded by default.
	q := newPool(t, &Options{FixedVersion: true})
	for i := range 5 {
		if err := echo(t, q, tg(i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	if n, _, _, ev := q.SessionStats(); n != 5 || ev != 0 {
		t.Errorf("unbounded pool: %d sessions, %d evictions", n, ev)
	}
}

// TestLiveSessionNotBehindConnectLock: a call to an upstream whose session is live takes
// it without waiting for a connect in progress, so concurrent calls to one upstream do not
// queue on each other: with a connect in flight (as by another configuration's), a call
// still gets the live session at once; a call that needs a connect waits for the flight.
func TestLiveSessionNotBehindConnectLock(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, nil)
	p := newPool(t, nil)
	tg := Target{ConnectionID: "c1", URL: f.URL}
	s, err := p.session(t.Context(), tg)
	if err != nil {
		t.Fatal(err)
	}
	s.end()
	p.mu.Lock()
	e := p.conns["c1"]
	fl := &flight{key: "another configuration", done: make(chan struct{})}
	e.flight = fl // a connect in progress
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		e.flight = nil
		p.mu.Unlock()
		close(fl.done)
	}()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	got, err := p.session(ctx, tg)
	if err != nil || got != s {
		t.Fatalf("live session behind the connect in flight: %v (same session %v)", err, got == s)
	}
	got.end()

	short, cancel2 := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel2()
	other := Target{ConnectionID: "c1", URL: f.URL + "?other"} // another configuration: a connect
	if _, err := p.session(short, other); err == nil || !strings.Contains(err.Error(), "waiting for a connect") {
		t.Fatalf("a connect did not wait for the connect in flight: %v", err)
	}
}
