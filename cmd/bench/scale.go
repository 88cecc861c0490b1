package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/agentpack/gateway/infra/rie"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/reporoot"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The scale table (docs/CATALOG.md "Measured"): one workspace grown to each of the levels
// (connections × 20 tools, every connection a separate URL path of one stub upstream that
// this bench owns), and at each level: install and refresh p50 (through
// connections.Service, the code behind POST /api/mcp-connections and …/refresh), the
// stored catalog's bytes, a freshly started gateway's cold start (exec → first full
// tools/list) and the mcp function's cold start under the Lambda runtime emulator
// (scaleRIERuns starts of the emulator → first tools/list page answered, with the
// emulator's INIT REPORT), a full tools/list (all pages) time and bytes, the proxied echo's p50 at
// c=1 and its throughput at c=8, the gateway's CPU per proxied call (its utime+stime
// over the c=8 leg, divided by the calls) and its RSS after the loads.

// scaleStubTools is how many tools each stub path serves: echo plus tool_1 … tool_19.
const scaleStubTools = 20

// scaleStub starts the stub upstream on loopback: every URL path answers as a stateless
// MCP server (demoupstream.NewHandler) listing echo and 19 small tools. It returns the
// base URL and a stop function.
func scaleStub() (string, func(), error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "scale-stub", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes back the input message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in demoupstream.EchoIn) (*mcp.CallToolResult, demoupstream.EchoOut, error) {
			return demoupstream.TextResult("Echo: " + in.Message), demoupstream.EchoOut{Echo: in.Message}, nil
		})
	type in struct {
		ID    string `json:"id" jsonschema:"resource id"`
		Limit int    `json:"limit,omitempty" jsonschema:"at most this many"`
		Query string `json:"query,omitempty" jsonschema:"a filter"`
	}
	for i := 1; i < scaleStubTools; i++ {
		name := fmt.Sprintf("tool_%d", i)
		mcp.AddTool(s, &mcp.Tool{Name: name, Title: "Tool " + name,
			Description: "Does thing number " + name + " to the resource identified by id, returning the updated resource as JSON."},
			func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
				return demoupstream.TextResult(name), nil, nil
			})
	}
	h, err := demoupstream.NewHandler(s, demoupstream.ModeStreamable)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// scaleSamples is how many installs (each then uninstalled) and refreshes each level
// times; the table shows their medians.
const scaleSamples = 31

// scaleRow is one level's measurements.
type scaleRow struct {
	conns, tools                int
	install, uninstall, refresh time.Duration
	catalogBytes, indexBytes    int64
	cold                        time.Duration
	coldFirst                   time.Duration // local: exec → first tools/list page answered
	rieFirst, rieFull, rieInit  time.Duration // medians; rieFirst 0 = not measured
	list                        time.Duration
	listBytes, listPages        int
	p50                         time.Duration
	rps8                        float64
	cpuPerCall                  time.Duration
	rss, hwm                    string
	errors                      int64
}

// scaleRIERuns is how many emulator cold starts each level times; the table shows the
// median.
const scaleRIERuns = 3

// scaleRIE is the emulator leg of the scale table: the mcp function's bootstrap (built
// once, for this machine) and the emulator binary; emulator "" when aws-lambda-rie is not
// installed (`make rie-install`), and the column says so.
type scaleRIE struct {
	emulator, bootstrap, root string
}

func newScaleRIE(ctx context.Context, dir string) (*scaleRIE, error) {
	root, err := reporoot.Find(".")
	if err != nil {
		return nil, err
	}
	r := &scaleRIE{root: root, emulator: rie.Binary(root)}
	if r.emulator == "" {
		fmt.Fprintln(os.Stderr, "bench: scale: aws-lambda-rie not found (make rie-install): no emulator cold starts")
		return r, nil
	}
	if r.bootstrap, _, err = rie.Build(ctx, root, "mcp", filepath.Join(dir, "scale-rie-mcp"), ""); err != nil {
		return nil, err
	}
	return r, nil
}

// cold starts the bootstrap under the emulator scaleRIERuns times on the catalog in
// catDir (the same database and catalog as the local process) and returns the medians of
// emulator start → first tools/list page answered (every tool listed, X-MCP-Discovery:
// all, as the local column lists them) and of the emulator's INIT REPORT.
func (r *scaleRIE) cold(ctx context.Context, dbURL, catDir, ws, token string) (first, full, init time.Duration, err error) {
	if r.emulator == "" {
		return 0, 0, 0, nil
	}
	event, err := lambdaEvent(r.root, ws, token)
	if err != nil {
		return 0, 0, 0, err
	}
	var ev map[string]any
	if err := json.Unmarshal(event, &ev); err != nil {
		return 0, 0, 0, err
	}
	ev["headers"].(map[string]any)["x-mcp-discovery"] = "all"
	if event, err = json.Marshal(ev); err != nil {
		return 0, 0, 0, err
	}
	env := []string{"AWS_LAMBDA_FUNCTION_NAME=mcp", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=512", "AWS_REGION=eu-west-1",
		"DATABASE_URL=" + dbURL, "JWT_SECRET=" + secret, "CATALOG_DIR=" + catDir, "LOG_LEVEL=warn",
		"APP_ENV=local", "ALLOW_PRIVATE_UPSTREAMS=true"}
	firsts, fulls, inits, err := coldRIE(ctx, r.emulator, r.bootstrap, env, event, scaleRIERuns)
	if err != nil {
		return 0, 0, 0, err
	}
	return firsts[len(firsts)/2], fulls[len(fulls)/2], inits[len(inits)/2], nil
}

// runScale measures the levels (ascending connection counts) and prints the scale table.
//
// With profile set, the installs and refreshes of the largest level run under a CPU
// profile of this process (the writer's side, and the stub upstream) written there.
func runScale(ctx context.Context, base, gwBin, dir string, levels []int, n, warm int, profile string) error {
	stubURL, stopStub, err := scaleStub()
	if err != nil {
		return err
	}
	defer stopStub()
	emu, err := newScaleRIE(ctx, dir)
	if err != nil {
		return err
	}
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	// A database of its own, so that the scale leg never meets the other legs' data.
	_, _ = admin.Exec(ctx, `DROP DATABASE IF EXISTS agentpack_bench_scale WITH (FORCE)`)
	if _, err := admin.Exec(ctx, `CREATE DATABASE agentpack_bench_scale`); err != nil {
		admin.Close(ctx)
		return err
	}
	admin.Close(ctx)
	u, _ := url.Parse(base)
	u.Path = "/agentpack_bench_scale"
	dbURL := u.String()
	pool, err := db.Open(ctx, dbURL, 4)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := db.Migrate(ctx, pool); err != nil {
		return err
	}
	if err := seed.Load(ctx, pool); err != nil {
		return err
	}
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "scale"); err != nil {
		return err
	}
	catDir := filepath.Join(dir, "scale-catalog")
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	up := mcpclient.New(&mcpclient.Options{Guard: guard})
	defer up.Close()
	svc := &connections.Service{Pool: pool, Store: &catalog.DiskStore{Dir: catDir}, Upstreams: up, Guard: guard}
	p := &auth.Principal{Subject: "bench", Role: auth.RoleAdmin, Workspaces: []string{ws}}
	token, _ := auth.Mint(secret, *p, time.Hour)
	create := func(i int) (*db.Connection, time.Duration, error) {
		t0 := time.Now()
		out, err := svc.Create(ctx, p, connections.CreateInput{Name: fmt.Sprintf("S%d", i), URL: fmt.Sprintf("%s/s/%d", stubURL, i), WorkspaceID: &ws})
		d := time.Since(t0)
		if err != nil {
			return nil, 0, err
		}
		if out.Connect == nil || !out.Connect.OK || out.CatalogPending {
			return nil, 0, fmt.Errorf("install S%d: %+v (catalog pending %v)", i, out.Connect, out.CatalogPending)
		}
		return out.Connection, d, nil
	}
	var first *db.Connection
	have := 0
	var rows []scaleRow
	for _, level := range levels {
		fmt.Fprintf(os.Stderr, "bench: scale: growing to %d connections…\n", level)
		for have < level {
			c, _, err := create(have)
			if err != nil {
				return err
			}
			if first == nil {
				first = c
			}
			have++
		}
		r := scaleRow{conns: level, tools: level * scaleStubTools}
		if profile != "" && level == levels[len(levels)-1] {
			f, err := os.Create(profile)
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
		}
		// Install and uninstall: scaleSamples more connections installed and removed one by
		// one.
		var ins, del []time.Duration
		for k := range scaleSamples {
			c, d, err := create(1_000_000 + level*100 + k)
			if err != nil {
				return err
			}
			ins = append(ins, d)
			t0 := time.Now()
			if err := svc.Delete(ctx, p, c.ID); err != nil {
				return err
			}
			del = append(del, time.Since(t0))
		}
		// Refresh of one connection (connect, list, store, publish), scaleSamples times.
		var ref []time.Duration
		for range scaleSamples {
			t0 := time.Now()
			res, err := svc.RefreshByID(ctx, p, first.ID)
			if err != nil || !res.OK {
				return fmt.Errorf("refresh: %v %+v", err, res)
			}
			ref = append(ref, time.Since(t0))
		}
		if profile != "" && level == levels[len(levels)-1] {
			pprof.StopCPUProfile()
		}
		r.install, r.uninstall, r.refresh = median(ins), median(del), median(ref)
		r.catalogBytes, r.indexBytes = catalogSize(catDir, ws)

		// A fresh gateway process on this catalog.
		gwPort := freePort()
		env := []string{"DATABASE_URL=" + dbURL, "JWT_SECRET=" + secret, "CATALOG_DIR=" + catDir,
			"PORT=" + gwPort, "LOG_LEVEL=warn", "APP_ENV=local", "ALLOW_PRIVATE_UPSTREAMS=true"}
		gwURL := "http://127.0.0.1:" + gwPort + "/mcp/" + ws
		t0 := time.Now()
		gw, err := start(gwBin, env)
		if err != nil {
			return err
		}
		for {
			_, _, _, err := listPages(gwURL, token, 1)
			if err == nil {
				break
			}
			if time.Since(t0) > 30*time.Second {
				gw.stop()
				return fmt.Errorf("gateway did not answer within 30 s: %w", err)
			}
			time.Sleep(time.Millisecond)
		}
		r.coldFirst = time.Since(t0)
		if _, _, _, err := listAll(gwURL, token); err != nil { // the rest of the pages
			gw.stop()
			return err
		}
		r.cold = time.Since(t0)
		// The same catalog under the Lambda runtime emulator (the local process stays up:
		// both only read the store and Postgres).
		if r.rieFirst, r.rieFull, r.rieInit, err = emu.cold(ctx, dbURL, catDir, ws, token); err != nil {
			gw.stop()
			return err
		}
		var lists []time.Duration
		for range 7 {
			d, b, pages, err := listAll(gwURL, token)
			if err != nil {
				gw.stop()
				return err
			}
			lists = append(lists, d)
			r.listBytes, r.listPages = b, pages
		}
		r.list = median(lists)
		call := &leg{name: "gateway", url: gwURL, token: token, body: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp_` +
			first.Handle + `_echo","arguments":{"message":"hello"}}}`)}
		call.load(warm, 8)
		r1 := call.load(n, 1)
		cpu0 := procCPU(gw.cmd.Process.Pid)
		r8 := call.load(n, 8)
		r.cpuPerCall = (procCPU(gw.cmd.Process.Pid) - cpu0) / time.Duration(n)
		r.p50, r.rps8, r.errors = r1.p50, r8.rps, r1.errors+r8.errors
		r.rss, r.hwm = procStatus(gw.cmd.Process.Pid, "VmRSS:"), procStatus(gw.cmd.Process.Pid, "VmHWM:")
		gw.stop()
		rows = append(rows, r)
	}
	printScale(rows, n)
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func printScale(rows []scaleRow, n int) {
	if len(rows) == 0 {
		return
	}
	b := rows[0]
	ratio := func(a, b time.Duration) string {
		if b == 0 {
			return "?"
		}
		return fmt.Sprintf("%.2f×", float64(a)/float64(b))
	}
	fmt.Printf("\n### Scale: one workspace, connections × %d tools (stub upstream, one URL path per connection); %d calls per leg\n\n", scaleStubTools, n)
	fmt.Printf("| connections | tools | install p50 | uninstall p50 | refresh p50 | catalog bytes (index) | cold start → first page / full list | emulator cold start → first page / full list (init) | full tools/list (pages) | list bytes | proxied p50 c=1 | req/s c=8 | gateway CPU/call c=8 | RSS (peak) | errors |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		emu := "skipped (make rie-install)"
		if r.rieFirst > 0 {
			emu = fmt.Sprintf("%s / %s ms (%s ms)", ms(r.rieFirst), ms(r.rieFull), ms(r.rieInit))
		}
		fmt.Printf("| %d | %d | %s ms (%s) | %s ms | %s ms (%s) | %.2f MB (%.1f kB) | %s / %s ms | %s | %s ms (%d) | %.2f MB | %s ms (%s) | %.0f | %s ms (%s) | %s (%s) | %d |\n",
			r.conns, r.tools, ms(r.install), ratio(r.install, b.install), ms(r.uninstall), ms(r.refresh), ratio(r.refresh, b.refresh),
			float64(r.catalogBytes)/1e6, float64(r.indexBytes)/1e3, ms(r.coldFirst), ms(r.cold), emu, ms(r.list), r.listPages, float64(r.listBytes)/1e6,
			ms(r.p50), ratio(r.p50, b.p50), r.rps8, ms(r.cpuPerCall), ratio(r.cpuPerCall, b.cpuPerCall), r.rss, r.hwm, r.errors)
	}
	fmt.Printf("\nEmulator cold start: median of %d starts of aws-lambda-rie with the mcp bootstrap, emulator start → first tools/list page answered / → last page answered (X-MCP-Discovery: all, each nextCursor followed), in brackets the emulator's INIT REPORT. Local: exec → first page / → every page listed.\n", scaleRIERuns)
	fmt.Println("Ratios are against the first row. Targets: install p50 at 1,000 ≤ 1.5× at 1; CPU per call at 1,000 ≤ 1.1× at 1.")
}
