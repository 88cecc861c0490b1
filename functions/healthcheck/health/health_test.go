package health_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/healthcheck/health"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"
)

// secretValue is a header value that must never reach last_health_error or logs.
const secretValue = "sekret-header-value-42"

// fakeClock is virtual time: Sleep records the wait and advances Now at once.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.sleeps)
	slices.Sort(out)
	return out
}

type world struct {
	pool *db.Pool
	ws   string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	pool, _ := dbtest.Fresh(t)
	w := &world{pool: pool, ws: uuid.NewString()}
	if err := db.WorkspaceUpsert(t.Context(), pool, w.ws, "W"); err != nil {
		t.Fatal(err)
	}
	return w
}

// entry creates a catalog entry named name and an installed, enabled connection to url
// with a secret header; it returns the entry id.
func (w *world) entry(t *testing.T, name, url string) string {
	t.Helper()
	ctx := t.Context()
	if err := db.CatalogEntryUpsertSeed(ctx, w.pool, &db.CatalogSeedEntry{Name: name, URL: url,
		TransportType: "streamable-http", VerificationTier: "unverified"}); err != nil {
		t.Fatal(err)
	}
	e, err := db.CatalogEntryGetByName(ctx, w.pool, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ConnectionCreate(ctx, w.pool, &db.ConnectionNew{Name: name, URL: url, TransportType: "streamable-http",
		Headers: map[string]string{"X-Api-Key": secretValue}, Enabled: true, Source: "marketplace",
		CatalogEntryID: &e.ID, WorkspaceID: &w.ws, CreatedBy: "test"}); err != nil {
		t.Fatal(err)
	}
	return e.ID
}

func (w *world) state(t *testing.T, id string) *db.CatalogEntry {
	t.Helper()
	e, err := db.CatalogEntryGet(t.Context(), w.pool, id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func upstreams(t *testing.T) *mcpclient.Pool {
	t.Helper()
	p := mcpclient.New(&mcpclient.Options{Guard: urlguard.New(&urlguard.Options{AllowPrivate: true})})
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func closedPort(t *testing.T) string {
	t.Helper()
	// A socket bound but never listening: a connect to it is refused, and the port stays
	// ours until the test ends. A listener closed at once would free the port for any other
	// test of a parallel suite to bind (it once answered 401 in place of "refused").
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", sa.(*syscall.SockaddrInet4).Port)
}

// sseBehind404 serves the demo server over legacy SSE and answers 404 to a streamable
// HTTP POST (one without the SSE session id), as an SSE-only server does.
func sseBehind404(t *testing.T) string {
	t.Helper()
	h, err := demoupstream.NewHandler(demoupstream.NewServer(nil), testpeer.ModeSSE)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Query().Get("sessionid") == "" {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv.URL + "/sse"
}

// hanging accepts connections and never answers until the client gives up.
func hanging(t *testing.T) string {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop); srv.CloseClientConnections(); srv.Close() })
	return srv.URL + "/mcp"
}

type buf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buf) Write(p []byte) (int, error) { b.mu.Lock(); defer b.mu.Unlock(); return b.b.Write(p) }
func (b *buf) String() string              { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

func byName(s *health.Summary) map[string]health.Result {
	out := map[string]health.Result{}
	for _, r := range s.Results {
		out[r.EntryName] = r
	}
	return out
}

// TestPassAgainstRealUpstreams: one pass over five real loopback upstreams.
func TestPassAgainstRealUpstreams(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fail500 := testpeer.NewFixture(t, nil)
	fail500.SetStatus("POST", http.StatusInternalServerError)
	ids := map[string]string{
		"everything": w.entry(t, "everything", testpeer.Everything(t, "streamable")),
		"closed":     w.entry(t, "closed", closedPort(t)),
		"http500":    w.entry(t, "http500", fail500.URL),
		"sse404":     w.entry(t, "sse404", sseBehind404(t)),
		"hang":       w.entry(t, "hang", hanging(t)),
	}
	clock := newClock()
	logs, metrics := &buf{}, &buf{}
	c := health.New(health.Options{Pool: w.pool, Pinger: upstreams(t), Logger: logx.New(logs, "debug"), Metrics: metrics,
		AttemptTimeout: time.Second, Clock: clock})
	s, err := c.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if s.Checked != 5 || s.Healthy != 2 || s.Stale != 3 || s.Down != 0 || s.Skipped != 0 {
		t.Fatalf("summary %+v", s)
	}
	r := byName(s)
	if r["everything"].Status != "healthy" || r["everything"].Transport != "streamable-http" {
		t.Errorf("everything: %+v", r["everything"])
	}
	if r["sse404"].Status != "healthy" || r["sse404"].Transport != "sse" {
		t.Errorf("sse404 (fallback): %+v", r["sse404"])
	}
	for name, mention := range map[string]string{"closed": "unreachable", "http500": "500", "hang": "deadline"} {
		got := r[name]
		if got.Status != "stale" || got.ConsecutiveFailures != 1 || got.Attempts != 4 || !strings.Contains(got.Error, mention) {
			t.Errorf("%s: %+v (want stale after 4 attempts, error mentioning %q)", name, got, mention)
		}
	}
	// 500 is never a reason to fall back to SSE: no GET reached the upstream.
	if n := fail500.CountRequests("GET", ""); n != 0 {
		t.Errorf("500 upstream got %d GET requests (SSE fallback)", n)
	}
	// Every check waited the schedule's prefix before each retry, in virtual time: the
	// three failing ones 1 s, 2 s, 4 s (a healthy one under load may need a retry too).
	var want []time.Duration
	for _, res := range s.Results {
		want = append(want, health.DefaultRetries[:res.Attempts-1]...)
	}
	slices.Sort(want)
	if got := clock.waits(); !slices.Equal(got, want) || len(want) < 9 {
		t.Errorf("waits = %v, want %v", got, want)
	}
	for name, id := range ids {
		e := w.state(t, id)
		if e.LastHealthCheck == nil || e.HealthStatus == nil || *e.HealthStatus != r[name].Status {
			t.Errorf("%s: stored %+v", name, e)
		}
		if (r[name].Status == "healthy") != (e.LastHealthError == nil) {
			t.Errorf("%s: last_health_error %v", name, e.LastHealthError)
		}
		if e.LastHealthError != nil && strings.Contains(*e.LastHealthError, secretValue) {
			t.Errorf("%s: last_health_error leaks a header value", name)
		}
	}
	// The fallback is remembered on the connection (docs/DESIGN.md §6).
	var wt *string
	if err := w.pool.QueryRow(t.Context(), `SELECT working_transport FROM mcp_connections WHERE catalog_entry_id = $1`, ids["sse404"]).Scan(&wt); err != nil || wt == nil || *wt != "sse" {
		t.Errorf("remembered transport = %v, %v", wt, err)
	}
	// One summary log line, one EMF line.
	if strings.Count(logs.String(), `"msg":"health check pass"`) != 1 || strings.Contains(logs.String(), secretValue) {
		t.Errorf("logs: %s", logs)
	}
	var emf map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(metrics.String())), &emf); err != nil {
		t.Fatalf("EMF line: %v: %s", err, metrics)
	}
	cw := emf["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)
	if cw["Namespace"] != "Agentpack/HealthCheck" || emf["checked"] != 5.0 || emf["healthy"] != 2.0 ||
		emf["stale"] != 3.0 || emf["down"] != 0.0 || emf["skipped"] != 0.0 || emf["duration_ms"] == nil ||
		emf["failed"] != 3.0 || emf["reconcile_failed"] != 0.0 {
		t.Errorf("EMF = %v", emf)
	}
}

// TestStateWalk: three failing runs walk healthy → stale → stale → down; one success
// resets. Stale and down entries stay listed and installable.
func TestStateWalk(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	up := testpeer.NewFixture(t, nil)
	id := w.entry(t, "walker", up.URL)
	var refreshed []string
	c := health.New(health.Options{Pool: w.pool, Pinger: upstreams(t), AttemptTimeout: 2 * time.Second, Clock: newClock(),
		Refresh: func(ctx context.Context, conn *db.Connection) error {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("refresh without a deadline")
			}
			refreshed = append(refreshed, conn.Name)
			return errors.New("refresh failed: logged, no state change")
		}})
	run := func() health.Result {
		s, err := c.Run(t.Context())
		if err != nil || len(s.Results) != 1 {
			t.Fatalf("run: %+v %v", s, err)
		}
		return s.Results[0]
	}
	type step struct {
		status   string
		failures int
	}
	var walk []step
	record := func(fail bool) {
		if fail {
			up.SetStatus("*", http.StatusServiceUnavailable)
		} else {
			up.SetStatus("*", 0)
		}
		r := run()
		e := w.state(t, id)
		if *e.HealthStatus != r.Status || e.ConsecutiveFailures != r.ConsecutiveFailures {
			t.Fatalf("stored %v/%d, result %+v", *e.HealthStatus, e.ConsecutiveFailures, r)
		}
		walk = append(walk, step{r.Status, r.ConsecutiveFailures})
	}
	record(false)
	record(true)
	record(true)
	record(true)
	// Down, yet visible in the catalog and installable.
	list, err := db.CatalogEntryList(t.Context(), w.pool, db.CatalogFilter{Search: "walker"})
	if err != nil || len(list) != 1 || *list[0].HealthStatus != "down" || list[0].LastHealthError == nil {
		t.Fatalf("catalog list: %+v %v", list, err)
	}
	ws2 := uuid.NewString()
	if err := db.WorkspaceUpsert(t.Context(), w.pool, ws2, "W2"); err != nil {
		t.Fatal(err)
	}
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	svc := &connections.Service{Pool: w.pool, Store: &catalog.DiskStore{Dir: t.TempDir()}, Upstreams: upstreams(t), Guard: guard}
	if _, err := svc.Install(t.Context(), &auth.Principal{Subject: "a", Role: auth.RoleAdmin, Workspaces: []string{ws2}}, id,
		connections.InstallInput{WorkspaceID: ws2}); err != nil {
		t.Fatalf("install of a down entry: %v", err)
	}
	record(false)
	want := []step{{"healthy", 0}, {"stale", 1}, {"stale", 2}, {"down", 3}, {"healthy", 0}}
	if !slices.Equal(walk, want) {
		t.Fatalf("walk = %v, want %v", walk, want)
	}
	if !slices.Equal(refreshed, []string{"walker", "walker"}) { // after each success only
		t.Fatalf("refreshed = %v", refreshed)
	}
	if e := w.state(t, id); e.LastHealthError != nil {
		t.Fatalf("success left last_health_error %q", *e.LastHealthError)
	}
}

// flaky fails its first n pings, recording each attempt's deadline budget.
type flaky struct {
	mu       sync.Mutex
	n        int
	calls    int
	budgets  []time.Duration
	err      error
	blockCtx bool // wait for the attempt's context to end instead of failing at once
	// clock, when set, is moved on by took at each attempt: an attempt that takes that
	// long, in the test's virtual time.
	clock *fakeClock
	took  time.Duration
}

func (f *flaky) Ping(ctx context.Context, _ mcpclient.Target) (mcpclient.Info, error) {
	dl, _ := ctx.Deadline()
	f.mu.Lock()
	f.calls++
	call := f.calls
	f.budgets = append(f.budgets, time.Until(dl))
	f.mu.Unlock()
	if f.clock != nil {
		f.clock.mu.Lock()
		f.clock.now = f.clock.now.Add(f.took)
		f.clock.mu.Unlock()
	}
	if f.blockCtx {
		<-ctx.Done()
		return mcpclient.Info{}, apperr.Wrap(ctx.Err(), apperr.UpstreamTimeout, "deadline passed")
	}
	if call <= f.n {
		return mcpclient.Info{}, f.err
	}
	return mcpclient.Info{Transport: "streamable-http", ProtocolVersion: "2025-11-25"}, nil
}

// TestRetrySchedule: retries after 1 s, 2 s, 4 s (injected clock), each attempt bounded
// by AttemptTimeout; success stops the retries; the error text is scrubbed.
func TestRetrySchedule(t *testing.T) {
	t.Parallel()
	fail := apperr.New(apperr.UpstreamError, "upstream said %s", secretValue)
	tests := []struct {
		name     string
		failures int
		attempts int
		waits    []time.Duration
		status   string
	}{
		{"first attempt succeeds", 0, 1, nil, "healthy"},
		{"third attempt succeeds", 2, 3, []time.Duration{time.Second, 2 * time.Second}, "healthy"},
		{"every attempt fails", 10, 4, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, "stale"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.entry(t, "e", "http://127.0.0.1:1/mcp")
			p := &flaky{n: tc.failures, err: fail}
			clock := newClock()
			s, err := health.New(health.Options{Pool: w.pool, Pinger: p, Clock: clock}).Run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			r := s.Results[0]
			if r.Attempts != tc.attempts || p.calls != tc.attempts || r.Status != tc.status {
				t.Fatalf("result %+v, calls %d", r, p.calls)
			}
			// Every wait went through the injected clock (a real sleep would leave it empty).
			if !slices.Equal(clock.sleeps, tc.waits) {
				t.Fatalf("waits = %v, want %v", clock.sleeps, tc.waits)
			}
			// Measured when the attempt started, so a loaded machine takes a little off.
			for _, b := range p.budgets {
				if b <= 7*time.Second || b > health.DefaultAttemptTimeout {
					t.Fatalf("attempt budget %v, want ≈ 10 s", b)
				}
			}
			if tc.status == "stale" && (strings.Contains(r.Error, secretValue) || !strings.Contains(r.Error, headers.RedactedValue)) {
				t.Fatalf("error not scrubbed: %q", r.Error)
			}
		})
	}
}

// TestDeadline: a pass never starts a check that may not finish before the deadline; it
// reports what it skipped and writes nothing for it.
func TestDeadline(t *testing.T) {
	t.Parallel()
	t.Run("no time for any check", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		a, b := w.entry(t, "a", "http://127.0.0.1:1/mcp"), w.entry(t, "b", "http://127.0.0.1:1/mcp")
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // < 47 s + 5 s
		defer cancel()
		p := &flaky{}
		s, err := health.New(health.Options{Pool: w.pool, Pinger: p}).Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.Skipped != 2 || s.Checked != 0 || p.calls != 0 {
			t.Fatalf("summary %+v, calls %d", s, p.calls)
		}
		for _, id := range []string{a, b} {
			if e := w.state(t, id); e.LastHealthCheck != nil {
				t.Fatalf("skipped entry was written: %+v", e)
			}
		}
	})
	t.Run("time runs out after the first check", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.entry(t, "a", "http://127.0.0.1:1/mcp")
		w.entry(t, "b", "http://127.0.0.1:1/mcp")
		clock := newClock()
		// Worst case 4 × (1 s + 50 ms grace) + 7 s = 11.2 s, reserve 1 s: the first check fits in 12.5 s.
		// Its first attempt takes 1 s of virtual time and fails; when it then leaves its slot
		// for the retry wait, 11.5 s remain, so the second no longer fits. (The attempt moves
		// the clock before the slot is released: with attempts that took no time, whether the
		// pass looked before or after the wait's sleep moved the clock was up to the scheduler.)
		ctx, cancel := context.WithDeadline(t.Context(), clock.Now().Add(12500*time.Millisecond))
		defer cancel()
		p := &flaky{n: 100, err: apperr.New(apperr.UpstreamUnavailable, "down"), clock: clock, took: time.Second}
		c := health.New(health.Options{Pool: w.pool, Pinger: p, Clock: clock, Concurrency: 1,
			AttemptTimeout: time.Second, Reserve: time.Second})
		if c.WorstCase() != 11200*time.Millisecond {
			t.Fatalf("worst case %v", c.WorstCase())
		}
		s, err := c.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.Checked != 1 || s.Skipped != 1 || s.Stale != 1 || s.Results[1].Status != "skipped" {
			t.Fatalf("summary %+v", s)
		}
	})
	t.Run("cancelled mid-check records nothing", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		id := w.entry(t, "a", "http://127.0.0.1:1/mcp")
		ctx, cancel := context.WithCancel(t.Context())
		p := &flaky{blockCtx: true}
		go func() {
			for {
				p.mu.Lock()
				n := p.calls
				p.mu.Unlock()
				if n > 0 {
					cancel()
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		s, err := health.New(health.Options{Pool: w.pool, Pinger: p, Clock: newClock()}).Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.Skipped != 1 || s.Checked != 0 {
			t.Fatalf("summary %+v", s)
		}
		if e := w.state(t, id); e.LastHealthCheck != nil || e.ConsecutiveFailures != 0 {
			t.Fatalf("interrupted check was recorded: %+v", e)
		}
	})
}

// TestCandidates: one check per entry; only enabled marketplace installs of a catalog
// entry (a manual connection linking the entry is another workspace's private upstream,
// never a probe of the shared entry); the most recently successful install is probed.
func TestCandidates(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := t.Context()
	id := w.entry(t, "multi", "http://127.0.0.1:1/first")
	// A manual connection linking the same entry, the most recently successful of all:
	// never chosen.
	manual, err := db.ConnectionCreate(ctx, w.pool, &db.ConnectionNew{Name: "manual", URL: "http://127.0.0.1:1/mine",
		TransportType: "streamable-http", Enabled: true, Source: "manual", CatalogEntryID: &id, WorkspaceID: &w.ws})
	if err != nil {
		t.Fatal(err)
	}
	// A second install of the entry, in another workspace, that last connected successfully.
	ws2 := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, w.pool, ws2, "W2"); err != nil {
		t.Fatal(err)
	}
	c2, err := db.ConnectionCreate(ctx, w.pool, &db.ConnectionNew{Name: "second", URL: "http://127.0.0.1:1/second",
		TransportType: "streamable-http", Enabled: true, Source: "marketplace", CatalogEntryID: &id, WorkspaceID: &ws2})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.ConnectionRecordState(ctx, w.pool, c2.ID, db.ConnectionState{OK: true}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	if err := db.ConnectionRecordState(ctx, w.pool, manual.ID, db.ConnectionState{OK: true}); err != nil {
		t.Fatal(err)
	}
	// An entry linked only by a manual connection has no candidate.
	w.entry(t, "manual-only", "http://127.0.0.1:1/z")
	if _, err := w.pool.Exec(ctx, `UPDATE mcp_connections SET source = 'manual' WHERE name = 'manual-only'`); err != nil {
		t.Fatal(err)
	}
	// A disabled connection of another entry, and a connection without an entry.
	other := w.entry(t, "disabled-only", "http://127.0.0.1:1/x")
	if _, err := w.pool.Exec(ctx, `UPDATE mcp_connections SET enabled = false WHERE catalog_entry_id = $1`, other); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ConnectionCreate(ctx, w.pool, &db.ConnectionNew{Name: "loose", URL: "http://127.0.0.1:1/y",
		TransportType: "streamable-http", Enabled: true, Source: "manual", WorkspaceID: &w.ws}); err != nil {
		t.Fatal(err)
	}
	cands, err := db.HealthCandidateList(ctx, w.pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || cands[0].EntryID != id || cands[0].Connection.ID != c2.ID || cands[0].Connection.URL != c2.URL {
		t.Fatalf("candidates = %+v", cands)
	}
	_, err = db.CatalogEntryRecordHealth(ctx, w.pool, uuid.NewString(), time.Now(), "")
	if apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("unknown entry: %v", err)
	}
	_, err = db.CatalogEntryRecordHealth(ctx, w.pool, "x", time.Now(), "boom")
	if apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("malformed id: %v", err)
	}
}

// TestHandleScheduledEvent runs the Lambda handler on the EventBridge event of events/.
func TestHandleScheduledEvent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.entry(t, "fixture", testpeer.NewFixture(t, nil).URL)
	raw, err := os.ReadFile(filepath.Join(testpeer.RepoRoot(t), "events", "healthcheck-scheduled.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.EventBridgeEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	logs := &buf{}
	s, err := health.New(health.Options{Pool: w.pool, Pinger: upstreams(t), Logger: logx.New(logs, "info")}).Handle(t.Context(), ev)
	if err != nil || s.Healthy != 1 {
		t.Fatalf("handle: %+v %v", s, err)
	}
	if !strings.Contains(logs.String(), ev.ID) {
		t.Fatalf("event id not logged: %s", logs)
	}
}

// TestDatabaseDown: a pass that cannot list candidates fails (Lambda reports it).
func TestDatabaseDown(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.pool.Close()
	_, err := health.New(health.Options{Pool: w.pool, Pinger: &flaky{}}).Run(context.Background())
	if apperr.CodeOf(err) != apperr.Unavailable {
		t.Fatalf("err = %v", err)
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	h := map[string]string{"A": "abc", "B": "abcdef", "C": "  ", "D": ""}
	tests := []struct{ name, in, want string }{
		{"longest value first", "got abcdef and abc", "got [REDACTED] and [REDACTED]"},
		{"query value", "upstream said: bad key sk-query-777", "upstream said: bad key [REDACTED]"},
		{"quoted URL", `Post "http://h/mcp?api_key=sk-query-777": refused`, `Post "http://h/mcp?api_key=[REDACTED]": refused`},
		{"blank values ignored", "a  b", "a  b"},
		{"empty message", "", "health check failed"},
		{"clipped", strings.Repeat("x", 600), strings.Repeat("x", 500) + "…"},
	}
	for _, tc := range tests {
		if got := health.Scrub(tc.in, "http://h/mcp?api_key=sk-query-777", h); got != tc.want {
			t.Errorf("%s: Scrub = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestReconcileRebuildsStaleDocuments: a pass ends by rebuilding every workspace's catalog
// document, so a document left stale or missing by a failed write converges within one
// schedule period; with no time left it does not run, and its failure changes no health
// state.
func TestReconcileRebuildsStaleDocuments(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.entry(t, "fixture", testpeer.NewFixture(t, nil).URL)
	store := &catalog.DiskStore{Dir: t.TempDir()}
	reconcile := func(ctx context.Context) error { return catalog.Rebuild(ctx, w.pool, store, nil) }
	if _, _, err := catalog.ReadDocument(t.Context(), store, w.ws); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("document exists before the pass: %v", err)
	}
	s, err := health.New(health.Options{Pool: w.pool, Pinger: upstreams(t), Reconcile: reconcile}).Run(t.Context())
	if err != nil || s.Reconciled == nil || !*s.Reconciled {
		t.Fatalf("pass: %+v %v", s, err)
	}
	doc, _, err := catalog.ReadDocument(t.Context(), store, w.ws)
	if err != nil {
		t.Fatalf("document not written by the pass: %v", err)
	}
	if len(doc.Connections) != 1 {
		t.Fatalf("document: %v %v", doc, err)
	}

	failing := func(context.Context) error { return errors.New("store down") }
	var metrics bytes.Buffer
	s, err = health.New(health.Options{Pool: w.pool, Pinger: upstreams(t), Reconcile: failing, Metrics: &metrics}).Run(t.Context())
	if err != nil || s.Reconciled == nil || *s.Reconciled || s.Healthy != 1 {
		t.Fatalf("failing reconcile: %+v %v", s, err)
	}
	// The EMF line counts the failed reconcile (an alarm watches it).
	var emf map[string]any
	if err := json.Unmarshal(metrics.Bytes(), &emf); err != nil || emf["reconcile_failed"] != 1.0 || emf["failed"] != 0.0 {
		t.Errorf("EMF after a failed reconcile: %v %v", emf, err)
	}

	// No time left before the deadline: skip it.
	clock := newClock()
	ctx, cancel := context.WithDeadline(t.Context(), clock.Now().Add(time.Second))
	defer cancel()
	ran := false
	s, err = health.New(health.Options{Pool: w.pool, Pinger: upstreams(t), Clock: clock,
		Reconcile: func(context.Context) error { ran = true; return nil }}).Run(ctx)
	if err != nil || ran || s.Reconciled != nil {
		t.Fatalf("reconcile ran without time left: %+v %v", s, err)
	}
}

// TestPassDeletesExpiredTasks: each pass deletes the tasks past their expiry (MCP Tasks
// results included) and keeps the live ones.
func TestPassDeletesExpiredTasks(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	for _, tk := range []struct {
		id  string
		ttl int64
	}{{"expiredtask00000001", 1}, {"livetask000000000001", 3_600_000}} {
		if _, err := db.TaskInsert(ctx, w.pool, &db.Task{ID: tk.id, WorkspaceID: w.ws, Principal: "p", Tool: "t",
			TTLMS: tk.ttl, PollIntervalMS: 1000, Status: db.TaskCompleted, Result: []byte(`{"content":[]}`)}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	s, err := health.New(health.Options{Pool: w.pool, Pinger: upstreams(t)}).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.TasksExpired != 1 {
		t.Errorf("TasksExpired = %d, want 1", s.TasksExpired)
	}
	for id, want := range map[string]string{"expiredtask00000001": "", "livetask000000000001": db.TaskCompleted} {
		if got, err := db.TaskStatusOf(ctx, w.pool, id); err != nil || got != want {
			t.Errorf("%s: status %q (%v), want %q", id, got, err, want)
		}
	}
}

// TestPassSweepsAuthorizationServer: each pass runs db.ASSweep, so a token row a day past
// its expiry goes and a live one stays (the sweep's rules: shared/db TestASSweep).
func TestPassSweepsAuthorizationServer(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	for sig, in := range map[string]string{"expired": "-2 days", "live": "1 hour"} {
		if _, err := w.pool.Exec(ctx, `INSERT INTO as_tokens (signature, kind, request_id, request, expires_at)
			VALUES ($1, 'access', 'g', '{}', now() + $2::interval)`, sig, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := health.New(health.Options{Pool: w.pool, Pinger: upstreams(t)}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	var left []string
	rows, err := w.pool.Query(ctx, `SELECT signature FROM as_tokens ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		left = append(left, s)
	}
	rows.Close()
	if len(left) != 1 || left[0] != "live" {
		t.Errorf("as_tokens after a pass: %v, want [live]", left)
	}
}
