package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/budget"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The workspaces leg (-only workspaces; docs/CATALOG.md "Many workspaces per instance"):
// wsCount small workspaces (one or two connections of wsStubTools tools each, every
// connection its own URL path of a stub upstream this bench owns) served by one gateway
// process started with AWS_LAMBDA_FUNCTION_MEMORY_SIZE set, so that its soft memory limit
// and cache budgets are derived from it. Traffic: per request a tools/list and a proxied
// tools/call (echo) of one workspace, in phases — a uniform pass over every workspace
// (cold), Zipf-skewed rounds, and a second uniform pass. After each phase: the gateway's
// VmRSS and VmHWM, each cache's hits, misses, evictions and bytes over the phase (GET
// /health "caches"), and the request p50.

const (
	wsCount     = 10_000
	wsStubTools = 3
	wsConc      = 4
)

// wsStub starts a stub upstream on loopback whose every URL path is a stateless MCP server
// with echo and wsStubTools-1 small tools.
func wsStub() (string, func(), error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "ws-stub", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes back the input message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in demoupstream.EchoIn) (*mcp.CallToolResult, demoupstream.EchoOut, error) {
			return demoupstream.TextResult("Echo: " + in.Message), demoupstream.EchoOut{Echo: in.Message}, nil
		})
	type in struct {
		ID string `json:"id" jsonschema:"resource id"`
	}
	for i := 1; i < wsStubTools; i++ {
		name := fmt.Sprintf("tool_%d", i)
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Does thing " + name + " to the resource identified by id."},
			func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
				return demoupstream.TextResult(name), nil, nil
			})
	}
	h, err := demoupstream.NewHandler(s, demoupstream.ModeStreamable)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// wsTenant is one bench workspace: its id, token and the exposed name of an echo tool.
type wsTenant struct {
	ws, token, echo string
}

// runWorkspacesLeg builds the gateway, creates the workspaces and measures, once per
// memory size in mems (MiB).
func runWorkspacesLeg(mems []int, rounds int) error {
	ctx := context.Background()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		return errors.New("DATABASE_URL is not set (use make bench)")
	}
	dir, err := os.MkdirTemp("", "agentpack-bench-ws-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	gwBin, _, err := build(dir)
	if err != nil {
		return err
	}
	stubURL, stopStub, err := wsStub()
	if err != nil {
		return err
	}
	defer stopStub()
	dbURL, catDir, tenants, setupTime, err := wsSetup(ctx, base, stubURL, dir)
	if err != nil {
		return err
	}
	fmt.Printf("\n### Many workspaces per instance: %d workspaces × 1–2 connections × %d tools, one gateway process (setup %.1f s)\n\n",
		len(tenants), wsStubTools, setupTime.Seconds())
	fmt.Printf("| memory | phase | requests | p50 tools/list | p50 tools/call | errors | VmRSS | VmHWM | catalog hit rate (evictions, MB held / budget) | servers hit rate (evictions, MB / budget) | targets hit rate (evictions, MB / budget) | upstream sessions (evictions) |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, mem := range mems {
		if err := wsMeasure(gwBin, dbURL, catDir, tenants, mem, rounds); err != nil {
			return err
		}
	}
	fmt.Println("\nHit rates are over the phase (hits / (hits + misses) of GET /health \"caches\"). Budgets: catalog and servers 15 %, targets 2 % of the memory (shared/budget).")
	return nil
}

// wsSetup creates a database of its own, installs one or two template connections
// through connections.Service (a real connect and tools/list against the stub), copies them
// in bulk into wsCount workspaces with SQL (each copy its own id, handle and URL path; the
// tools with their exposed names) and writes every workspace's catalog with
// catalog.Rebuild.
func wsSetup(ctx context.Context, base, stubURL, dir string) (dbURL, catDir string, tenants []wsTenant, took time.Duration, err error) {
	t0 := time.Now()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", "", nil, 0, err
	}
	_, _ = admin.Exec(ctx, `DROP DATABASE IF EXISTS agentpack_bench_ws WITH (FORCE)`)
	_, err = admin.Exec(ctx, `CREATE DATABASE agentpack_bench_ws`)
	admin.Close(ctx)
	if err != nil {
		return "", "", nil, 0, err
	}
	u, _ := url.Parse(base)
	u.Path = "/agentpack_bench_ws"
	dbURL = u.String()
	pool, err := db.Open(ctx, dbURL, 4)
	if err != nil {
		return "", "", nil, 0, err
	}
	defer pool.Close()
	if err := db.Migrate(ctx, pool); err != nil {
		return "", "", nil, 0, err
	}
	catDir = filepath.Join(dir, "ws-catalog")
	tmplWS := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, tmplWS, "template"); err != nil {
		return "", "", nil, 0, err
	}
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	up := mcpclient.New(&mcpclient.Options{Guard: guard})
	defer up.Close()
	svc := &connections.Service{Pool: pool, Store: &catalog.DiskStore{Dir: catDir}, Upstreams: up, Guard: guard}
	p := &auth.Principal{Subject: "bench", Role: auth.RoleAdmin, Workspaces: []string{tmplWS}}
	var tmpl [2]string
	for j := range tmpl {
		out, err := svc.Create(ctx, p, connections.CreateInput{Name: fmt.Sprintf("T%d", j), URL: fmt.Sprintf("%s/t/%d", stubURL, j), WorkspaceID: &tmplWS})
		if err != nil {
			return "", "", nil, 0, err
		}
		if out.Connect == nil || !out.Connect.OK {
			return "", "", nil, 0, fmt.Errorf("template install: %+v", out.Connect)
		}
		tmpl[j] = out.Connection.ID
	}
	// Workspace i gets connection 0, and connection 1 when i is odd: 1–2 connections.
	// Handles are "w<i>c<j>" (unique, ≤ 16 of [a-z0-9]); the rows are copies of the
	// templates' whole rows (to_jsonb / jsonb_populate_record), so every column the
	// schema has is filled as an install filled it.
	sql := `
CREATE TEMP TABLE bench_map AS
  SELECT gen_random_uuid() AS ws, i FROM generate_series(0, $1::int - 1) AS i;
INSERT INTO workspaces (id, name) SELECT ws, 'bench ' || i FROM bench_map;
CREATE TEMP TABLE bench_conn AS
  SELECT m.ws, m.i, j, gen_random_uuid() AS id, 'w' || m.i || 'c' || j AS handle,
         (ARRAY[$2::uuid, $3::uuid])[j + 1] AS tmpl
  FROM bench_map m CROSS JOIN generate_series(0, 1) AS j WHERE j = 0 OR m.i % 2 = 1;
INSERT INTO mcp_connections
  SELECT (jsonb_populate_record(NULL::mcp_connections, to_jsonb(c) || jsonb_build_object(
    'id', b.id, 'handle', b.handle, 'workspace_id', b.ws, 'name', 'C' || b.j,
    'url', $4::text || '/w/' || b.i || '/' || b.j))).*
  FROM bench_conn b JOIN mcp_connections c ON c.id = b.tmpl;
INSERT INTO mcp_connection_tools
  SELECT (jsonb_populate_record(NULL::mcp_connection_tools, to_jsonb(t) || jsonb_build_object(
    'connection_id', b.id, 'exposed_name', 'mcp_' || b.handle || '_' || t.upstream_name))).*
  FROM bench_conn b JOIN mcp_connection_tools t ON t.connection_id = b.tmpl;`
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "", "", nil, 0, err
	}
	defer conn.Close(ctx)
	// The values are the bench's own (a count, two uuids, a loopback URL): written in as
	// literals, since each statement uses a different subset of them.
	lit := strings.NewReplacer("$1", fmt.Sprint(wsCount), "$2", "'"+tmpl[0]+"'", "$3", "'"+tmpl[1]+"'", "$4", "'"+stubURL+"'")
	for _, stmt := range strings.Split(strings.TrimSpace(sql), ";\n") {
		if _, err := conn.Exec(ctx, lit.Replace(stmt)); err != nil {
			return "", "", nil, 0, fmt.Errorf("bulk create: %w\n%s", err, stmt)
		}
	}
	rows, err := conn.Query(ctx, `SELECT ws::text, i FROM bench_map ORDER BY i`)
	if err != nil {
		return "", "", nil, 0, err
	}
	var wss []string
	for rows.Next() {
		var ws string
		var i int
		if err := rows.Scan(&ws, &i); err != nil {
			return "", "", nil, 0, err
		}
		tok, err := auth.Mint(secret, auth.Principal{Subject: "bench", Role: auth.RoleAdmin, Workspaces: []string{ws}}, 2*time.Hour)
		if err != nil {
			return "", "", nil, 0, err
		}
		wss = append(wss, ws)
		tenants = append(tenants, wsTenant{ws: ws, token: tok, echo: fmt.Sprintf("mcp_w%dc0_echo", i)})
	}
	if err := rows.Err(); err != nil {
		return "", "", nil, 0, err
	}
	fmt.Fprintf(os.Stderr, "bench: workspaces: rows created in %.1f s; writing %d catalogs…\n", time.Since(t0).Seconds(), len(wss))
	if err := catalog.Rebuild(ctx, pool, &catalog.DiskStore{Dir: catDir}, wss); err != nil {
		return "", "", nil, 0, err
	}
	return dbURL, catDir, tenants, time.Since(t0), nil
}

// wsMeasure starts the gateway with mem MiB and runs the phases.
func wsMeasure(gwBin, dbURL, catDir string, tenants []wsTenant, mem, rounds int) error {
	port := freePort()
	env := []string{"DATABASE_URL=" + dbURL, "JWT_SECRET=" + secret, "CATALOG_DIR=" + catDir,
		"PORT=" + port, "LOG_LEVEL=warn", "APP_ENV=local", "ALLOW_PRIVATE_UPSTREAMS=true",
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_MEMORY_SIZE=%d", mem), "CATALOG_TTL=30s"}
	gw, err := start(gwBin, env)
	if err != nil {
		return err
	}
	defer gw.stop()
	baseURL := "http://127.0.0.1:" + port
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := wsHealth(baseURL); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("gateway did not answer /health within 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	zipf := rand.NewZipf(rand.New(rand.NewSource(1)), 1.1, 1, uint64(len(tenants)-1))
	uniform := make([]int, len(tenants))
	for i := range uniform {
		uniform[i] = i
	}
	rand.New(rand.NewSource(2)).Shuffle(len(uniform), func(i, j int) { uniform[i], uniform[j] = uniform[j], uniform[i] })
	skewed := make([]int, rounds*len(tenants))
	for i := range skewed {
		skewed[i] = int(zipf.Uint64())
	}
	phases := []struct {
		name  string
		order []int
	}{
		{"uniform (cold)", uniform},
		{fmt.Sprintf("Zipf s=1.1 × %d", len(skewed)), skewed},
		{"uniform (warm)", uniform},
	}
	prev, err := wsHealth(baseURL)
	if err != nil {
		return err
	}
	for _, ph := range phases {
		lists, calls, errs := wsDrive(baseURL, tenants, ph.order)
		cur, err := wsHealth(baseURL)
		if err != nil {
			return err
		}
		cell := func(name string) string {
			c, p := cur.Caches[name], prev.Caches[name]
			h, m := c.Hits-p.Hits, c.Misses-p.Misses
			rate := 0.0
			if h+m > 0 {
				rate = float64(h) / float64(h+m)
			}
			return fmt.Sprintf("%.1f %% (%d, %.1f / %.1f)", 100*rate, c.Evictions-p.Evictions, float64(c.Bytes)/(1<<20), float64(c.MaxBytes)/(1<<20))
		}
		pid := gw.cmd.Process.Pid
		fmt.Printf("| %d MiB | %s | %d | %s ms | %s ms | %d | %s | %s | %s | %s | %s | %s |\n",
			mem, ph.name, 2*len(ph.order), ms(median(lists)), ms(median(calls)), errs,
			procStatus(pid, "VmRSS:"), procStatus(pid, "VmHWM:"), cell("catalog"), cell("servers"), cell("targets"),
			fmt.Sprintf("%d (%d)", cur.Caches["sessions"].Entries, cur.Caches["sessions"].Evictions-prev.Caches["sessions"].Evictions))
		prev = cur
	}
	return nil
}

type wsHealthBody struct {
	Caches map[string]budget.Stats `json:"caches"`
}

func wsHealth(baseURL string) (wsHealthBody, error) {
	var h wsHealthBody
	resp, err := client.Get(baseURL + "/health")
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return h, fmt.Errorf("/health: %d %.200s", resp.StatusCode, b)
	}
	return h, json.Unmarshal(b, &h)
}

// wsDrive sends, for each index in order, a tools/list and a proxied tools/call of that
// tenant, on wsConc workers; it returns the latencies and the count of failed requests.
func wsDrive(baseURL string, tenants []wsTenant, order []int) (lists, calls []time.Duration, errs int64) {
	var next atomic.Int64
	var mu sync.Mutex
	var failed atomic.Int64
	var wg sync.WaitGroup
	for range wsConc {
		wg.Go(func() {
			var ls, cs []time.Duration
			for {
				k := next.Add(1) - 1
				if k >= int64(len(order)) {
					break
				}
				t := tenants[order[k]]
				l := &leg{url: baseURL + "/mcp/" + t.ws, token: t.token,
					body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)}
				t0 := time.Now()
				if err := l.do(); err != nil {
					failed.Add(1)
				}
				ls = append(ls, time.Since(t0))
				l.body = []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + t.echo + `","arguments":{"message":"hi"}}}`)
				t0 = time.Now()
				if err := l.do(); err != nil {
					failed.Add(1)
				}
				cs = append(cs, time.Since(t0))
			}
			mu.Lock()
			lists, calls = append(lists, ls...), append(calls, cs...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lists)
	return lists, calls, failed.Load()
}

// intList parses a comma-separated list of positive integers (others are skipped).
func intList(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		var v int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &v); err == nil && v > 0 {
			out = append(out, v)
		}
	}
	return out
}
