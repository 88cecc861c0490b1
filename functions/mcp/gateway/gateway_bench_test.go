package gateway_test

// Benchmarks behind `make bench` (issue 8). Each request goes through the gateway's full
// HTTP handler (auth, workspace resolution, catalog cache, server cache, go-sdk, the
// buffered writer) in process; only the socket is left out, which cmd/bench measures.
// Each benchmark reports, besides ns/op and -benchmem, the median and p99 of the
// per-request latencies (p50-ns, p99-ns) and the response size (resp-B).
//
//	TEST_DATABASE_URL=$(scripts/pg.sh start) go test -run '^$' -bench . -benchmem ./functions/mcp/gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/ratelimit"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const benchSecret = "bench-secret"

// benchEnv is one gateway over a fresh database and a disk catalog.
type benchEnv struct {
	pool    *db.Pool
	store   *catalog.DiskStore
	cache   *catalog.Cache
	handler http.Handler
	g       *gateway.Gateway
	up      *mcpclient.Pool
	guard   *urlguard.Guard
}

func newBenchEnv(b testing.TB) *benchEnv {
	b.Helper()
	pool, _ := dbtest.Fresh(b)
	ctx := context.Background()
	if err := seed.Load(ctx, pool); err != nil {
		b.Fatal(err)
	}
	e := &benchEnv{pool: pool, store: &catalog.DiskStore{Dir: b.TempDir()}}
	e.guard = urlguard.New(&urlguard.Options{AllowPrivate: true})
	e.up = mcpclient.New(&mcpclient.Options{Guard: e.guard})
	b.Cleanup(func() { _ = e.up.Close() })
	v, err := auth.NewVerifier(ctx, auth.Options{Secret: benchSecret})
	if err != nil {
		b.Fatal(err)
	}
	e.cache = catalog.NewCache(e.store, 5*time.Second, nil)
	g, err := gateway.New(gateway.Options{Pool: pool, Catalog: e.cache,
		Upstreams: e.up, Verifier: v})
	if err != nil {
		b.Fatal(err)
	}
	e.handler, e.g = g.Handler(), g
	return e
}

func (e *benchEnv) workspace(b testing.TB, role string) (ws, token string) {
	b.Helper()
	ws = uuid.NewString()
	if err := db.WorkspaceUpsert(context.Background(), e.pool, ws, "bench"); err != nil {
		b.Fatal(err)
	}
	token, err := auth.Mint(benchSecret, auth.Principal{Subject: "bench", Role: role, Workspaces: []string{ws}}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	return ws, token
}

// discardWriter is a ResponseWriter that keeps the status and counts the bytes, so that the
// benchmark measures the gateway and not a recorder.
type discardWriter struct {
	h      http.Header
	status int
	n      int
	body   []byte // the first response, for checks
	keep   bool
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(s int)   { w.status = s }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.n += len(p)
	if w.keep {
		w.body = append(w.body, p...)
	}
	return len(p), nil
}

// request is one prepared MCP POST.
type request struct {
	path, token, body string
	hdr               map[string]string
}

func (rq *request) serve(h http.Handler, w *discardWriter) {
	r := httptest.NewRequest(http.MethodPost, rq.path, strings.NewReader(rq.body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	r.Header.Set("Authorization", "Bearer "+rq.token)
	for k, v := range rq.hdr {
		r.Header.Set(k, v)
	}
	clear(w.h)
	w.status, w.n = 0, 0
	h.ServeHTTP(w, r)
}

// check serves rq once and fails unless it answers 200 with a result that is not an error;
// it returns the result.
func (rq *request) check(b testing.TB, h http.Handler) json.RawMessage {
	b.Helper()
	w := &discardWriter{h: http.Header{}, keep: true}
	rq.serve(h, w)
	var msg struct {
		Error  json.RawMessage `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if w.status != 200 || json.Unmarshal(w.body, &msg) != nil || msg.Error != nil ||
		strings.Contains(string(msg.Result), `"isError":true`) {
		b.Fatalf("%s: %d %.400s", rq.body, w.status, w.body)
	}
	return msg.Result
}

// run is the timed loop: b.N requests, each timed, reporting p50 and p99.
func (rq *request) run(b *testing.B, h http.Handler) {
	b.Helper()
	for range 20 { // warm: server cache, sessions, statement cache
		rq.check(b, h)
	}
	lat := make([]time.Duration, 0, b.N)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		rq.serve(h, w)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	if w.status != 200 {
		b.Fatalf("status %d", w.status)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(w.n), "resp-B")
}

// syntheticDoc is a catalog of n proxied tools over n/100+1 connections, each tool with a
// realistic input schema (three properties, one required).
func syntheticDoc(ws string, n int) []byte {
	doc := catalog.Document{Version: catalog.SchemaVersion, WorkspaceID: ws, GeneratedAt: time.Now().UTC()}
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			c := len(doc.Connections)
			doc.Connections = append(doc.Connections, catalog.Connection{
				ID: uuid.NewString(), Name: fmt.Sprintf("Server %d", c), Handle: fmt.Sprintf("srv%d", c),
				Scope: "workspace", Source: "manual", URL: "http://127.0.0.1:9/mcp",
				TransportType: "streamable-http", UpdatedAt: time.Now().UTC(),
			})
		}
		c := &doc.Connections[len(doc.Connections)-1]
		name := fmt.Sprintf("tool_%d", i)
		c.Tools = append(c.Tools, catalog.Tool{
			ExposedName: "mcp_" + c.Handle + "_" + name, UpstreamName: name,
			Title:       "Tool " + name,
			Description: "Does thing number " + name + " to the resource identified by id, returning the updated resource as JSON.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"resource id"},` +
				`"limit":{"type":"integer","minimum":1,"maximum":100},"query":{"type":"string","maxLength":200}},"required":["id"]}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`),
		})
	}
	out, _ := json.Marshal(doc)
	return out
}

// BenchmarkToolsList is tools/list for 10, 100, 1,000 and 5,000 visible tools: the meta
// toolset's built-ins (X-MCP-Toolsets: meta) plus proxied tools from the precomputed
// catalog. go-sdk pages tools/list by 1,000, so the 5,000 case answers its first page.
// Every tool is listed (X-MCP-Discovery: all), above the progressive-discovery threshold too.
func BenchmarkToolsList(b *testing.B) {
	e := newBenchEnv(b)
	ws, token := e.workspace(b, auth.RoleAdmin)
	base := request{path: "/mcp/" + ws, token: token, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		hdr: map[string]string{"X-MCP-Toolsets": "meta", "X-MCP-Discovery": "all"}}
	if _, err := putDoc(e.store, syntheticDoc(ws, 0)); err != nil {
		b.Fatal(err)
	}
	var empty struct{ Tools []json.RawMessage }
	_ = json.Unmarshal(base.check(b, e.handler), &empty)
	builtins := len(empty.Tools)
	for _, n := range []int{10, 100, 1000, 5000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			ws, token := e.workspace(b, auth.RoleAdmin)
			if _, err := putDoc(e.store, syntheticDoc(ws, n-builtins)); err != nil {
				b.Fatal(err)
			}
			rq := base
			rq.path, rq.token = "/mcp/"+ws, token
			var got struct {
				Tools      []json.RawMessage
				NextCursor string
			}
			_ = json.Unmarshal(rq.check(b, e.handler), &got)
			if want := min(n, 1000); len(got.Tools) != want {
				b.Fatalf("tools/list: %d tools on the first page, want %d", len(got.Tools), want)
			}
			rq.run(b, e.handler)
		})
	}
}

// BenchmarkCatalogList is a built-in read call: agentpack_catalog_list against the seeded
// catalog in real Postgres.
func BenchmarkCatalogList(b *testing.B) {
	e := newBenchEnv(b)
	ws, token := e.workspace(b, auth.RoleMember)
	rq := request{path: "/mcp/" + ws, token: token,
		body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agentpack_catalog_list","arguments":{"limit":20}}}`}
	rq.run(b, e.handler)
}

// BenchmarkProxiedEcho is a proxied tools/call (the demo upstream's echo on a loopback
// httptest server) through the gateway, audit row included. BenchmarkDirectEcho is the
// same call made to the upstream with the gateway's own upstream client: the difference is
// the gateway's cost (its inbound HTTP hop excepted, which cmd/bench measures).
func BenchmarkProxiedEcho(b *testing.B) {
	e := newBenchEnv(b)
	ws, token := e.workspace(b, auth.RoleAdmin)
	up := testpeer.NewFixture(b, nil)
	svc := &connections.Service{Pool: e.pool, Store: e.store, Upstreams: e.up, Guard: e.guard}
	out, err := svc.Create(context.Background(), &auth.Principal{Subject: "bench", Role: auth.RoleAdmin, Workspaces: []string{ws}},
		connections.CreateInput{Name: "Echo", URL: up.URL, WorkspaceID: &ws})
	if err != nil || out.Connect == nil || !out.Connect.OK {
		b.Fatalf("create: %v %+v", err, out)
	}
	rq := request{path: "/mcp/" + ws, token: token,
		body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp_` + out.Connection.Handle + `_echo","arguments":{"message":"hello"}}}`}
	rq.run(b, e.handler)
}

// BenchmarkDirectEcho is the echo call made to the upstream with the gateway's own
// upstream client, at the protocol version the gateway remembers for it: the demo upstream
// negotiates 2026-07-28 (what the gateway then speaks), shown next to 2025-11-25.
func BenchmarkDirectEcho(b *testing.B) {
	up := testpeer.NewFixture(b, nil)
	pool := mcpclient.New(&mcpclient.Options{Guard: urlguard.New(&urlguard.Options{AllowPrivate: true})})
	b.Cleanup(func() { _ = pool.Close() })
	for _, pv := range []string{"2025-11-25", "2026-07-28"} {
		b.Run("protocol="+pv, func(b *testing.B) {
			t := mcpclient.Target{ConnectionID: "direct-" + pv, URL: up.URL, ProtocolVersion: pv}
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}}
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				if res, err := pool.CallTool(ctx, t, params); err != nil || res.IsError {
					b.Fatalf("echo: %v", err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkProxiedEchoRateLimit is BenchmarkProxiedEcho with and without a rate limit on
// the workspace (per member, at the largest allowed values so that no call is refused),
// by 1 and by 8 concurrent callers, each a member of its own (docs/RATE-LIMITS.md): the
// difference between limit=set and limit=none is the limiter's cost per proxied call. The
// gateway runs over a pool of 16 connections, so that 8 callers do not queue for one.
func BenchmarkProxiedEchoRateLimit(b *testing.B) {
	e := newBenchEnv(b)
	big, err := db.Open(context.Background(), e.pool.Config().ConnString(), 16)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(big.Close)
	v, err := auth.NewVerifier(context.Background(), auth.Options{Secret: benchSecret})
	if err != nil {
		b.Fatal(err)
	}
	g, err := gateway.New(gateway.Options{Pool: big, Catalog: e.cache, Upstreams: e.up, Verifier: v})
	if err != nil {
		b.Fatal(err)
	}
	h := g.Handler()
	up := testpeer.NewFixture(b, nil)
	svc := &connections.Service{Pool: e.pool, Store: e.store, Upstreams: e.up, Guard: e.guard}
	for _, limited := range []bool{false, true} {
		ws, _ := e.workspace(b, auth.RoleAdmin)
		out, err := svc.Create(context.Background(), &auth.Principal{Subject: "bench", Role: auth.RoleAdmin, Workspaces: []string{ws}},
			connections.CreateInput{Name: "Echo", URL: up.URL, WorkspaceID: &ws})
		if err != nil || out.Connect == nil || !out.Connect.OK {
			b.Fatalf("create: %v %+v", err, out)
		}
		if limited {
			perMinute, perDay, member := ratelimit.MaxPerMinute, ratelimit.MaxPerDay, "*"
			if _, err := db.RateLimitUpsert(context.Background(), e.pool, &db.RateLimit{WorkspaceID: ws, Principal: &member,
				PerMinute: &perMinute, PerDay: &perDay, CreatedBy: "bench"}); err != nil {
				b.Fatal(err)
			}
			// The limit travels with the catalog document (ratelimit.Service publishes it).
			if err := svc.PublishWorkspace(context.Background(), ws); err != nil {
				b.Fatal(err)
			}
			e.cache.Invalidate(ws)
		}
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp_` + out.Connection.Handle + `_echo","arguments":{"message":"hello"}}}`
		name := map[bool]string{false: "limit=none", true: "limit=set"}[limited]
		for _, c := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/c=%d", name, c), func(b *testing.B) {
				// A call is proxied and answered, not refused, before the timer starts.
				probe, err := auth.Mint(benchSecret, auth.Principal{Subject: uuid.NewString(), Role: auth.RoleAdmin, Workspaces: []string{ws}}, time.Hour)
				if err != nil {
					b.Fatal(err)
				}
				(&request{path: "/mcp/" + ws, token: probe, body: body}).check(b, h)
				b.SetParallelism((c + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				var mu sync.Mutex
				var lat []time.Duration
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					token, err := auth.Mint(benchSecret, auth.Principal{Subject: uuid.NewString(), Role: auth.RoleAdmin, Workspaces: []string{ws}}, time.Hour)
					if err != nil {
						b.Error(err)
						return
					}
					rq := request{path: "/mcp/" + ws, token: token, body: body}
					w := &discardWriter{h: http.Header{}}
					var mine []time.Duration
					for pb.Next() {
						t0 := time.Now()
						rq.serve(h, w)
						mine = append(mine, time.Since(t0))
					}
					if w.status != 0 && w.status != http.StatusOK {
						b.Errorf("status %d", w.status)
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				})
				b.StopTimer()
				if len(lat) == 0 {
					return
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			})
		}
	}
}
