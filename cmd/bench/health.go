package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentpack/gateway/functions/healthcheck/health"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"
)

// The health leg (docs/DESIGN.md §9a "At scale"): one workspace with healthEntries
// catalog entries, each installed from the marketplace, behind the scale stub (20 tools
// per URL path); 5% of them refuse connections and 5% hang (half accept TCP and never
// answer, half send the response headers and never the body). One full pass runs as the
// deployed function runs it — the default options (attempt timeout, retries, reserve,
// concurrency), the tool refresh and publish after each success, the end-of-pass catalog
// reconcile, a database pool of 2 connections (shared/deps) — under the function's
// timeout as its deadline, and the bench reports: the wall time against that budget,
// checks per second, the per-check p50/p99 by kind, the time spent in Postgres and
// waiting for a pool connection, and this process's peak RSS during the pass.

const (
	healthEntries = 1000
	healthDead    = 50 // refuse connections
	healthHanging = 50 // 25 silent after accept, 25 headers without a body
	// healthBudget is the function's timeout (template.yaml HealthCheckFunction Timeout).
	healthBudget = 300 * time.Second
)

var healthConc = flag.Int("healthconc", 0, "health leg: checks in flight (0: health.DefaultConcurrency)")

// runHealthOnly is `-only health`.
func runHealthOnly() error {
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		return fmt.Errorf("DATABASE_URL is not set (use make bench)")
	}
	if err := runHealth(context.Background(), base); err != nil {
		return err
	}
	printTable()
	return nil
}

// queryTimer is a pgx tracer that sums the time and count of statements, those run for
// a Refresh or the reconcile (context marked refreshing) apart from the pass's own.
type queryTimer struct{ own, ref [2]atomic.Int64 } // [time, count]

type queryStart struct{}

func (q *queryTimer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, queryStart{}, time.Now())
}

func (q *queryTimer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	t0, ok := ctx.Value(queryStart{}).(time.Time)
	if !ok {
		return
	}
	sum := &q.own
	if ctx.Value(refreshing{}) != nil {
		sum = &q.ref
	}
	sum[0].Add(int64(time.Since(t0)))
	sum[1].Add(1)
}

func (q *queryTimer) reset() {
	for _, a := range []*atomic.Int64{&q.own[0], &q.own[1], &q.ref[0], &q.ref[1]} {
		a.Store(0)
	}
}

type dbSum struct {
	d time.Duration
	n int64
}

func (q *queryTimer) sums() (own, ref dbSum) {
	return dbSum{time.Duration(q.own[0].Load()), q.own[1].Load()}, dbSum{time.Duration(q.ref[0].Load()), q.ref[1].Load()}
}

// silentUpstream accepts TCP connections and never writes; it returns its base URL and
// a stop function.
func silentUpstream() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	return "http://" + ln.Addr().String(), func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	}, nil
}

// headersUpstream answers 200 with JSON headers and never sends the body.
func headersUpstream() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	stop := make(chan struct{})
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { close(stop); _ = srv.Close() }, nil
}

// refusedURL is a loopback URL nothing listens on.
func refusedURL() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr + "/mcp", nil
}

// runHealth sets the workspace up in a database of its own, runs one pass and adds its
// rows to the bench table.
func runHealth(ctx context.Context, base string) error {
	fmt.Fprintf(os.Stderr, "bench: health: %d entries (%d refusing, %d hanging)…\n", healthEntries, healthDead, healthHanging)
	stub, stopStub, err := scaleStub()
	if err != nil {
		return err
	}
	defer stopStub()
	silent, stopSilent, err := silentUpstream()
	if err != nil {
		return err
	}
	defer stopSilent()
	headers, stopHeaders, err := headersUpstream()
	if err != nil {
		return err
	}
	defer stopHeaders()

	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	_, _ = admin.Exec(ctx, `DROP DATABASE IF EXISTS agentpack_bench_health WITH (FORCE)`)
	if _, err := admin.Exec(ctx, `CREATE DATABASE agentpack_bench_health`); err != nil {
		admin.Close(ctx)
		return err
	}
	admin.Close(ctx)
	u, _ := url.Parse(base)
	u.Path = "/agentpack_bench_health"
	dbURL := u.String()
	setupPool, err := db.Open(ctx, dbURL, 8)
	if err != nil {
		return err
	}
	defer setupPool.Close()
	if err := db.Migrate(ctx, setupPool); err != nil {
		return err
	}
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, setupPool, ws, "health"); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "agentpack-bench-health-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	store := &catalog.DiskStore{Dir: filepath.Join(dir, "catalog")}
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})

	// The entries and their installs; the healthy ones refreshed once (tools stored, the
	// transport remembered) and the catalog built, as after their installs.
	kinds := map[string]string{}
	var healthy []*db.Connection
	for i := range healthEntries {
		kind, target := "healthy", fmt.Sprintf("%s/s/%d", stub, i)
		switch {
		case i%20 == 7: // 5%
			kind, target = "hanging", fmt.Sprintf("%s/silent/%d", silent, i)
			if i%40 == 7 {
				target = fmt.Sprintf("%s/headers/%d", headers, i)
			}
		case i%20 == 13: // 5%
			kind = "dead"
			if target, err = refusedURL(); err != nil {
				return err
			}
		}
		name := fmt.Sprintf("health-%04d", i)
		if err := db.CatalogEntryUpsertSeed(ctx, setupPool, &db.CatalogSeedEntry{Name: name, URL: target,
			TransportType: "streamable-http", VerificationTier: "unverified"}); err != nil {
			return err
		}
		e, err := db.CatalogEntryGetByName(ctx, setupPool, name)
		if err != nil {
			return err
		}
		c, err := db.ConnectionCreate(ctx, setupPool, &db.ConnectionNew{Name: name, URL: target, TransportType: "streamable-http",
			Enabled: true, Source: "marketplace", CatalogEntryID: &e.ID, WorkspaceID: &ws, CreatedBy: "bench"})
		if err != nil {
			return err
		}
		kinds[e.ID] = kind
		if kind == "healthy" {
			healthy = append(healthy, c)
		}
	}
	setupUp := mcpclient.New(&mcpclient.Options{Guard: guard})
	setupSvc := &connections.Service{Pool: setupPool, Store: store, Upstreams: setupUp, Guard: guard}
	var g errgroup.Group
	g.SetLimit(8)
	for _, c := range healthy {
		g.Go(func() error {
			res, err := setupSvc.Refresh(ctx, "bench", c)
			if err == nil && !res.OK {
				err = fmt.Errorf("refresh %s: %s", c.Name, res.Error)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	_ = setupUp.Close()
	if err := catalog.Rebuild(ctx, setupPool, store, []string{ws}); err != nil {
		return err
	}

	// The pass, as functions/healthcheck/main.go wires it, with a pool of 2 (deps.Main).
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return err
	}
	cfg.MaxConns = 2
	timer := &queryTimer{}
	cfg.ConnConfig.Tracer = timer
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	up := mcpclient.New(&mcpclient.Options{Guard: guard})
	defer up.Close()
	svc := &connections.Service{Pool: pool, Store: store, Upstreams: up, Guard: guard}
	// Two passes: the first meets the hanging upstreams in the database's order (as after
	// they broke); the second, steady state, starts with the entries the first left stale.
	for pass := 1; pass <= 2; pass++ {
		if err := healthPass(ctx, pass, pool, timer, svc, store, up, kinds); err != nil {
			return err
		}
	}
	return nil
}

// refreshing marks the context of a Refresh, so that the tracer tells its statements
// apart from the pass's own.
type refreshing struct{}

// healthPass runs one pass as the deployed function does and adds its rows.
func healthPass(ctx context.Context, pass int, pool *pgxpool.Pool, timer *queryTimer, svc *connections.Service,
	store catalog.Store, up *mcpclient.Pool, kinds map[string]string) error {
	var reconcile time.Duration
	c := health.New(health.Options{Pool: pool, Pinger: up, Concurrency: *healthConc,
		Target: func(ctx context.Context, conn *db.Connection) mcpclient.Target {
			return svc.TargetFor(ctx, conn, conn.CreatedBy)
		},
		Refresh: func(ctx context.Context, conn *db.Connection) error {
			_, err := svc.RefreshAndPublish(context.WithValue(ctx, refreshing{}, true), connections.HealthCheckActor, conn)
			return err
		},
		Reconcile: func(ctx context.Context) error {
			t0 := time.Now()
			defer func() { reconcile = time.Since(t0) }()
			return catalog.Rebuild(context.WithValue(ctx, refreshing{}, true), pool, store, nil)
		},
	})
	timer.reset()
	st0 := pool.Stat()
	// Peak RSS of the pass alone: clear the high-water mark first (Linux clear_refs 5).
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	pctx, cancel := context.WithTimeout(ctx, healthBudget)
	defer cancel()
	t0 := time.Now()
	s, err := c.Run(pctx)
	wall := time.Since(t0)
	if err != nil {
		return err
	}
	hwm := procStatus(os.Getpid(), "VmHWM:")
	st := pool.Stat()

	byKind := map[string][]time.Duration{}
	wrong := 0
	for _, r := range s.Results {
		k := kinds[r.EntryID]
		byKind[k] = append(byKind[k], time.Duration(r.DurationMS)*time.Millisecond)
		if (k == "healthy") != (r.Status == db.HealthHealthy) || r.Status == "skipped" {
			wrong++
		}
	}
	conc := *healthConc
	if conc == 0 {
		conc = health.DefaultConcurrency
	}
	order := "database order (least recently checked first)"
	if pass > 1 {
		order = "steady state: last pass's stale entries first"
	}
	add(row{what: fmt.Sprintf("health check pass %d, %d entries (%d refusing, %d hanging), concurrency %d", pass, healthEntries, healthDead, healthHanging, conc),
		p50: fmt.Sprintf("%.1f s", wall.Seconds()), rps: fmt.Sprintf("%.1f", float64(s.Checked)/wall.Seconds()),
		note: fmt.Sprintf("%s; wall time vs the %s budget: %.0f%%; req/s = checks/s; checked %d, healthy %d, stale %d, down %d, skipped %d, misclassified %d; stopped in time %v",
			order, healthBudget, 100*wall.Seconds()/healthBudget.Seconds(), s.Checked, s.Healthy, s.Stale, s.Down, s.Skipped, wrong, s.StoppedInTime)})
	for _, k := range []string{"healthy", "dead", "hanging"} {
		ds := byKind[k]
		if len(ds) == 0 {
			continue
		}
		slices.Sort(ds)
		what := "connect + ping, 4 attempts"
		if k == "healthy" {
			what = "connect + ping + refresh"
		}
		add(row{what: fmt.Sprintf("health check pass %d, one %s entry (%s)", pass, k, what),
			p50: ms(ds[len(ds)/2]) + " ms", p99: ms(ds[len(ds)*99/100]) + " ms",
			note: fmt.Sprintf("%d checks; includes waits for a slot and a pool connection, retry waits (1 s, 2 s, 4 s); ms resolution", len(ds))})
	}
	own, ref := timer.sums()
	add(row{what: fmt.Sprintf("health check pass %d, Postgres", pass),
		p50: fmt.Sprintf("%.2f s", (own.d + ref.d).Seconds()),
		note: fmt.Sprintf("summed statement time: the pass's own (candidates, health writes, cleanup) %.2f s in %d statements; tool refreshes and reconcile %.2f s in %d; pool of 2: %d waits for a connection, %.1f s in all; end-of-pass catalog reconcile %s ms",
			own.d.Seconds(), own.n, ref.d.Seconds(), ref.n, st.EmptyAcquireCount()-st0.EmptyAcquireCount(),
			(st.EmptyAcquireWaitTime() - st0.EmptyAcquireWaitTime()).Seconds(), ms(reconcile))})
	add(row{what: fmt.Sprintf("health check pass %d, peak RSS (VmHWM) of the bench process", pass), p50: hwm,
		note: "the pass, plus the stub upstreams it probes (same process)"})
	return nil
}
