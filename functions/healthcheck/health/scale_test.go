package health_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/healthcheck/health"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/mcpclient"
)

// The scale test of docs/DESIGN.md §9a "At scale": 200 entries behind real loopback
// upstreams, 10% refusing connections and 10% hanging (half accept TCP and never answer,
// half answer the headers and never finish the body). No wall-clock bound is asserted: the
// pass's own report (StoppedInTime, skip reasons) and its context say whether it stopped
// in time.

const (
	scaleEntries = 200
	scaleDead    = 20 // refuse connections
	scaleHanging = 20 // 10 silent after accept, 10 headers without a body
)

// stubServer serves the demo MCP server on every path (one entry per path).
func stubServer(t *testing.T) string {
	t.Helper()
	h, err := demoupstream.NewHandler(demoupstream.NewServer(nil), demoupstream.ModeStreamable)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv.URL
}

// silentListener accepts TCP connections and never writes a byte; it drains and holds
// each until the client closes it.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(io.Discard, c) })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

// headersOnly answers 200 with JSON headers, flushes them and never sends the body.
func headersOnly(t *testing.T) string {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop); srv.CloseClientConnections(); srv.Close() })
	return srv.URL
}

// scaleWorld installs scaleEntries entries; the names sort hanging first, then dead, then
// healthy, so that a pass cut short meets the slow ones at its start. It returns the
// entry ids by kind ("healthy", "dead", "hanging").
func scaleWorld(t *testing.T) (*world, map[string][]string) {
	t.Helper()
	w := newWorld(t)
	stub, silent, headers := stubServer(t), silentListener(t), headersOnly(t)
	ids := map[string][]string{}
	for i := range scaleEntries {
		var kind, url string
		switch {
		case i < scaleHanging/2:
			kind, url = "hanging", fmt.Sprintf("%s/silent/%d", silent, i)
		case i < scaleHanging:
			kind, url = "hanging", fmt.Sprintf("%s/headers/%d", headers, i)
		case i < scaleHanging+scaleDead:
			kind, url = "dead", closedPort(t)
		default:
			kind, url = "healthy", fmt.Sprintf("%s/s/%d", stub, i)
		}
		ids[kind] = append(ids[kind], w.entry(t, fmt.Sprintf("%03d-%s", i, kind), url))
	}
	return w, ids
}

// stored is an entry's health and its probed connection's state, read together.
type stored struct {
	status            *string
	failures          int
	checked           bool
	entryErr, connErr *string
	connected         bool
	transport         *string
}

func (w *world) stored(t *testing.T, id string) stored {
	t.Helper()
	var s stored
	if err := w.pool.QueryRow(t.Context(), `SELECT e.health_status, e.consecutive_failures, e.last_health_check IS NOT NULL,
			e.last_health_error, c.last_error, c.last_connected_at IS NOT NULL, c.working_transport
		FROM mcp_catalog_entries e JOIN mcp_connections c ON c.catalog_entry_id = e.id WHERE e.id = $1`, id).
		Scan(&s.status, &s.failures, &s.checked, &s.entryErr, &s.connErr, &s.connected, &s.transport); err != nil {
		t.Fatal(err)
	}
	return s
}

// checkConsistent asserts that every result matches what is stored: a checked entry has
// its health and its connection's state written together, a skipped one neither.
func checkConsistent(t *testing.T, w *world, s *health.Summary, kinds map[string]string) {
	t.Helper()
	for _, r := range s.Results {
		st := w.stored(t, r.EntryID)
		switch {
		case r.Status == "skipped":
			if r.Skip == "" || st.checked || st.status != nil || st.connErr != nil || st.connected {
				t.Errorf("%s skipped (%q) but written: %+v", r.EntryName, r.Skip, st)
			}
		case kinds[r.EntryID] == "healthy":
			if r.Status != "healthy" || st.status == nil || *st.status != "healthy" || st.failures != 0 || st.entryErr != nil ||
				!st.connected || st.connErr != nil || st.transport == nil || *st.transport != "streamable-http" {
				t.Errorf("%s: result %+v, stored %+v", r.EntryName, r, st)
			}
		default: // dead or hanging: every attempt failed
			if r.Status != "stale" || r.Attempts != 4 || st.status == nil || *st.status != "stale" || st.failures != 1 ||
				st.entryErr == nil || st.connErr == nil || *st.connErr != *st.entryErr || st.connected {
				t.Errorf("%s: result %+v, stored %+v", r.EntryName, r, st)
			}
			mention := map[string]string{"dead": "unreachable", "hanging": "deadline"}[kinds[r.EntryID]]
			if !strings.Contains(r.Error, mention) {
				t.Errorf("%s: error %q, want it to mention %q", r.EntryName, r.Error, mention)
			}
		}
	}
}

func kindsOf(ids map[string][]string) map[string]string {
	out := map[string]string{}
	for k, l := range ids {
		for _, id := range l {
			out[id] = k
		}
	}
	return out
}

// scaleChecker: 2 s per attempt, short real retry waits, 16 attempts in flight; worst
// case 4 × 2.05 s + 0.35 s = 8.55 s.
func scaleChecker(t *testing.T, w *world) *health.Checker {
	return health.New(health.Options{Pool: w.pool, Pinger: upstreams(t), Concurrency: 16, AttemptTimeout: 2 * time.Second,
		Retries: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}, Reserve: 3 * time.Second})
}

// TestPassAtScale: a full pass within its deadline checks every entry; healthy ones
// are healthy, dead and hanging ones stale after four attempts, and every entry's health
// and connection state agree.
func TestPassAtScale(t *testing.T) {
	t.Parallel()
	w, ids := scaleWorld(t)
	kinds := kindsOf(ids)
	// Room for the whole pass: 20 hanging × 4 attempts × 2 s over 16 slots is 10 s of
	// probing; the deadline is far above it (and above worst case + reserve).
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	s, err := scaleChecker(t, w).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil || !s.StoppedInTime {
		t.Fatalf("pass ran past its deadline: %v, stopped in time %v", ctx.Err(), s.StoppedInTime)
	}
	if s.Checked != scaleEntries || s.Skipped != 0 || s.Healthy != scaleEntries-scaleDead-scaleHanging ||
		s.Stale != scaleDead+scaleHanging || s.Down != 0 {
		t.Fatalf("summary: checked %d healthy %d stale %d down %d skipped %d", s.Checked, s.Healthy, s.Stale, s.Down, s.Skipped)
	}
	checkConsistent(t, w, s, kinds)
}

// TestPassAtScaleOutOfTime: a deadline too short for the pass. The hanging entries come
// first and hold every slot past the window in which a worst-case check still fits, so
// the rest are reported "not checked this pass" (SkipNoTime) with nothing written; what
// was checked is written whole; the pass returns before its deadline; and the next pass
// starts with the entries this one skipped.
func TestPassAtScaleOutOfTime(t *testing.T) {
	t.Parallel()
	w, ids := scaleWorld(t)
	kinds := kindsOf(ids)
	c := scaleChecker(t, w)
	// Worst case + reserve is 11.55 s: checks may start in the first 0.45 s only, while
	// every hanging attempt holds its slot for 2 s.
	ctx, cancel := context.WithTimeout(t.Context(), c.WorstCase()+3*time.Second+450*time.Millisecond)
	defer cancel()
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil || !s.StoppedInTime {
		t.Fatalf("pass ran past its deadline: %v, stopped in time %v", ctx.Err(), s.StoppedInTime)
	}
	if s.Skipped < scaleEntries-scaleHanging || s.Checked+s.Skipped != scaleEntries {
		t.Fatalf("summary: checked %d skipped %d", s.Checked, s.Skipped)
	}
	skipped := map[string]bool{}
	for _, r := range s.Results {
		if r.Status == "skipped" {
			skipped[r.EntryID] = true
			if kinds[r.EntryID] != "hanging" && r.Skip != health.SkipNoTime {
				t.Errorf("%s: skip %q, want %q", r.EntryName, r.Skip, health.SkipNoTime)
			}
		}
	}
	checkConsistent(t, w, s, kinds)
	// The next pass reaches the skipped entries first.
	cands, err := db.HealthCandidateList(t.Context(), w.pool)
	if err != nil {
		t.Fatal(err)
	}
	for i, cand := range cands[:len(skipped)] {
		if !skipped[cand.EntryID] {
			t.Fatalf("candidate %d (%s) was checked this pass; the skipped ones must come first", i, cand.EntryName)
		}
	}
}

// TestParseConcurrency: HEALTH_CONCURRENCY's values, the default and the refusals.
func TestParseConcurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     int
		ok       bool
	}{
		{"unset", "", health.DefaultConcurrency, true},
		{"set", "64", 64, true},
		{"one", "1", 1, true},
		{"zero", "0", 0, false},
		{"negative", "-3", 0, false},
		{"too many", "5000", 0, false},
		{"not a number", "lots", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := health.ParseConcurrency(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("ParseConcurrency(%q) = %d, %v", tc.in, got, err)
			}
			if err != nil && !strings.Contains(err.Error(), "HEALTH_CONCURRENCY") {
				t.Fatalf("error does not name the variable: %v", err)
			}
		})
	}
}

// orderPinger records the URLs it is asked to ping, in order, and answers at once.
type orderPinger struct {
	mu   sync.Mutex
	urls []string
}

func (p *orderPinger) Ping(_ context.Context, t mcpclient.Target) (mcpclient.Info, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.urls = append(p.urls, t.URL)
	return mcpclient.Info{Transport: "streamable-http"}, nil
}

// TestFailingEntriesFirst: a pass starts with the entries that were stale or down (the
// likely slow ones), then follows the database's least-recently-checked order: a stale
// entry checked a minute ago goes before one never checked and one healthy an hour ago.
func TestFailingEntriesFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := t.Context()
	old := w.entry(t, "a-healthy-long-ago", "http://127.0.0.1:1/old")
	w.entry(t, "b-never-checked", "http://127.0.0.1:1/never")
	stale := w.entry(t, "c-stale-recently", "http://127.0.0.1:1/stale")
	if _, err := db.CatalogEntryRecordHealth(ctx, w.pool, old, time.Now().Add(-time.Hour), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CatalogEntryRecordHealth(ctx, w.pool, stale, time.Now().Add(-time.Minute), "refused"); err != nil {
		t.Fatal(err)
	}
	p := &orderPinger{}
	if _, err := health.New(health.Options{Pool: w.pool, Pinger: p, Concurrency: 1}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"http://127.0.0.1:1/stale", "http://127.0.0.1:1/never", "http://127.0.0.1:1/old"}
	if !slices.Equal(p.urls, want) {
		t.Fatalf("ping order %v, want %v", p.urls, want)
	}
}

// deletingPinger deletes the entry being probed (an admin removing it mid-pass) and
// answers healthy.
type deletingPinger struct {
	pool *db.Pool
	id   string
}

func (p *deletingPinger) Ping(ctx context.Context, _ mcpclient.Target) (mcpclient.Info, error) {
	if _, err := p.pool.Exec(ctx, `DELETE FROM mcp_catalog_entries WHERE id = $1`, p.id); err != nil {
		return mcpclient.Info{}, err
	}
	return mcpclient.Info{Transport: "streamable-http"}, nil
}

// TestEntryGoneMidPass: an entry deleted while it is checked cannot be recorded: it is
// skipped with SkipWriteFailed (db.HealthRecordBatch gives it no state).
func TestEntryGoneMidPass(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.entry(t, "gone", "http://127.0.0.1:1/mcp")
	s, err := health.New(health.Options{Pool: w.pool, Pinger: &deletingPinger{pool: w.pool, id: id}}).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Results) != 1 || s.Results[0].Status != "skipped" || s.Results[0].Skip != health.SkipWriteFailed || s.Skipped != 1 || s.Checked != 0 {
		t.Fatalf("summary %+v", s)
	}
}
