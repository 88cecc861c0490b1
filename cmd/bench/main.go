// Command bench is the load driver behind `make bench`: it builds the gateway
// and the demo upstream as separate processes on loopback, installs the upstream into a
// fresh benchmark workspace, and measures, in one run and with one load client:
//
//   - a proxied tools/call (echo) through the gateway next to the same call made directly
//     to the upstream, at concurrency 1, 8 and 32 (p50, p99, requests/s, errors, ratio);
//   - tools/list through the gateway next to a direct tools/list to the upstream;
//   - cold start: process start → first tools/list answered, as a local process and under
//     the Lambda runtime emulator (infra/rie), and the stripped bootstrap sizes;
//   - the gateway's peak RSS under the proxied load (VmHWM);
//   - the scale table (scale.go): one workspace at 1, 10, 100 and 1,000 connections × 20
//     tools — install, refresh, catalog bytes, cold start, full tools/list, proxied p50,
//     c=8 throughput, gateway CPU per call, RSS (-scale, -only scale);
//   - the health leg (health.go): one health-check pass over 1,000 installed entries, 10%
//     of them refusing or hanging, against the function's budget (-only health);
//   - the limit leg (limit.go): a bare httputil.ReverseProxy between the same client and the
//     demo upstream and server-everything, at each protocol version, beside the gateway
//     (-only limit);
//
// and it runs the in-process Go benchmarks of functions/mcp/gateway (-benchmem) first,
// printing everything as one table.
//
// It needs DATABASE_URL (make bench provides one). Every server binds 127.0.0.1; every
// loop is bounded by -n requests per leg and stops by itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentpack/gateway/infra/rie"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/reporoot"
	"github.com/agentpack/gateway/shared/testpeer"
)

const (
	secret          = "bench-secret"
	protocolVersion = "2025-11-25"
)

func main() {
	n := flag.Int("n", 3000, "requests per leg and concurrency")
	conc := flag.String("c", "1,8,32", "concurrency levels")
	warm := flag.Int("warm", 300, "warm-up requests per leg")
	benchtime := flag.String("benchtime", "2s", "go test -benchtime of the in-process benchmarks")
	scale := flag.String("scale", "1,10,100,1000", "connection counts of the scale table (empty: no scale table)")
	only := flag.String("only", "", `"scale": only the scale table; "health": only the health leg; "limit": only the limit leg (limit.go); "workspaces": only the many-workspaces leg (workspaces.go); "search": only the tool-search leg (search.go, no database); "search-cv": the search ranker's cross-validation within the dev half (searchcv.go); "search-tune": coordinate ascent of its constants on the dev half`)
	distractors := flag.String("distractors", "gateway", `search leg: the distractor tools ("gateway" or "realistic", shared/search/searcheval)`)
	misses := flag.Int("misses", 0, "search leg: print this many missed queries of the dev half per level to stderr (the test half's misses are never printed)")
	wsMem := flag.String("wsmem", "512,128", "workspaces leg: AWS_LAMBDA_FUNCTION_MEMORY_SIZE values (MiB), one gateway run each")
	scaleProfile := flag.String("scaleprofile", "", "write a CPU profile of the largest scale level's installs and refreshes to this file")
	flag.Parse()
	var levels []int
	for _, f := range strings.Split(*scale, ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && v > 0 {
			levels = append(levels, v)
		}
	}
	slices.Sort(levels)
	if *only == "health" {
		if err := runHealthOnly(); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *only == "search-cv" || *only == "search-cv-weights" {
		run := func() error { return runSearchCV(*distractors) }
		if *only == "search-cv-weights" {
			run = func() error { return runSearchCVWeights(*distractors, 1) }
		}
		if err := run(); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *only == "search-tune" {
		if err := runSearchTune(*distractors, 2); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *only == "search" {
		if err := runSearchLeg(*distractors, *misses); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *only == "workspaces" {
		if err := runWorkspacesLeg(intList(*wsMem), 3); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	limitOnly = *only == "limit"
	if err := run(*n, *warm, *conc, *benchtime, levels, *only == "scale", *scaleProfile); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(n, warm int, concList, benchtime string, levels []int, scaleOnly bool, scaleProfile string) error {
	ctx := context.Background()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		return errors.New("DATABASE_URL is not set (use make bench)")
	}
	root, err := reporoot.Find(".")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "agentpack-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if scaleOnly {
		gwBin, _, err := build(dir)
		if err != nil {
			return err
		}
		return runScale(ctx, base, gwBin, dir, levels, n, warm, scaleProfile)
	}
	if limitOnly {
		return runLimitOnly(ctx, base, dir, n, warm, parseConcs(concList))
	}

	// Binary sizes: the deployed bootstraps (linux/arm64, stripped, lambda.norpc).
	var sizes []string
	for _, fn := range []string{"mcp", "marketplace", "pins", "healthcheck"} {
		if _, err := os.Stat(filepath.Join(root, "functions", fn, "main.go")); err != nil {
			continue
		}
		_, size, err := rie.Build(ctx, root, fn, filepath.Join(dir, "arm64-"+fn), "arm64")
		if err != nil {
			return err
		}
		sizes = append(sizes, fmt.Sprintf("%s %.1f MB", fn, float64(size)/1e6))
	}

	fmt.Fprintln(os.Stderr, "bench: go benchmarks…")
	if err := goBench(base, benchtime); err != nil {
		return err
	}

	gwBin, localBin, err := build(dir)
	if err != nil {
		return err
	}
	gwPort := freePort()
	up, upURL, err := startDemoUpstream(localBin)
	if err != nil {
		return err
	}
	defer up.stop()
	catDir := filepath.Join(dir, "catalog")
	dbURL, ws, handle, err := setup(ctx, base, upURL, catDir)
	if err != nil {
		return err
	}
	// The npm reference server (server-everything, pinned in test/npm), installed next to
	// the demo upstream: a stateful TypeScript server nobody here wrote.
	tb := &benchTB{}
	defer tb.cleanup()
	evURL := testpeer.Everything(tb, "streamable")
	evHandle, err := install(ctx, dbURL, ws, catDir, "Everything", evURL)
	if err != nil {
		return err
	}
	token, _ := auth.Mint(secret, auth.Principal{Subject: "bench", Role: auth.RoleAdmin, Workspaces: []string{ws}}, time.Hour)
	keyFile := filepath.Join(dir, "auth-signing.key")
	gwEnv := []string{"DATABASE_URL=" + dbURL, "JWT_SECRET=" + secret, "CATALOG_DIR=" + catDir,
		"PORT=" + gwPort, "LOG_LEVEL=warn", "APP_ENV=local", "ALLOW_PRIVATE_UPSTREAMS=true",
		"AUTH_SIGNING_KEY_FILE=" + keyFile}
	gwURL := "http://127.0.0.1:" + gwPort + "/mcp/" + ws
	issued, err := issuedToken(ctx, dbURL, keyFile, "http://127.0.0.1:"+gwPort, ws)
	if err != nil {
		return err
	}
	list := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	echo := func(name string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + name + `","arguments":{"message":"hello"}}}`)
	}

	// Cold start, local process: exec → first tools/list answered, 5 runs.
	fmt.Fprintln(os.Stderr, "bench: cold starts…")
	var cold []time.Duration
	var gw *proc
	for i := 0; i < 5; i++ {
		t0 := time.Now()
		p, err := start(gwBin, gwEnv)
		if err != nil {
			return err
		}
		l := &leg{url: gwURL, token: token, body: list}
		for {
			err := l.do()
			if err == nil {
				break
			}
			if time.Since(t0) > 10*time.Second {
				p.stop()
				return fmt.Errorf("gateway did not answer within 10 s: %w", err)
			}
			time.Sleep(200 * time.Microsecond)
		}
		cold = append(cold, time.Since(t0))
		if i < 4 {
			p.stop()
		} else {
			gw = p
		}
	}
	defer gw.stop()
	slices.Sort(cold)
	add(row{what: "cold start, local process (exec → first tools/list answered)", p50: ms(cold[2]) + " ms",
		note: fmt.Sprintf("5 runs, min %s ms, max %s ms; local Postgres, disk catalog", ms(cold[0]), ms(cold[4]))})

	// Cold start under the Lambda runtime emulator.
	if emulator := rie.Binary(root); emulator == "" {
		add(row{what: "cold start, Lambda runtime emulator", note: "skipped: aws-lambda-rie not found (make rie-install)"})
	} else {
		bootstrap, _, err := rie.Build(ctx, root, "mcp", filepath.Join(dir, "rie-mcp"), "")
		if err != nil {
			return err
		}
		event, err := lambdaEvent(root, ws, token)
		if err != nil {
			return err
		}
		env := []string{"AWS_LAMBDA_FUNCTION_NAME=mcp", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=512", "AWS_REGION=eu-west-1",
			"DATABASE_URL=" + dbURL, "JWT_SECRET=" + secret, "CATALOG_DIR=" + catDir, "LOG_LEVEL=warn",
			"APP_ENV=local", "ALLOW_PRIVATE_UPSTREAMS=true"}
		first, _, init, err := coldRIE(ctx, emulator, bootstrap, env, event, 5)
		if err != nil {
			return err
		}
		add(row{what: "cold start, Lambda runtime emulator (emulator start → first tools/list answered)", p50: ms(first[2]) + " ms",
			note: fmt.Sprintf("5 runs, min %s ms; bootstrap init (INIT REPORT) median %s ms", ms(first[0]), ms(init[2]))})
	}
	add(row{what: "stripped bootstraps (linux/arm64, -s -w, lambda.norpc)", note: strings.Join(sizes, ", ")})

	var concs []int
	for _, s := range strings.Split(concList, ",") {
		c, _ := strconv.Atoi(strings.TrimSpace(s))
		if c > 0 {
			concs = append(concs, c)
		}
	}
	evDirect := func(version string) (*leg, error) {
		l := &leg{name: "direct (session at " + version + ")", url: evURL, body: echo("echo"), version: version}
		return l, l.initSession()
	}
	ev0325, err := evDirect("2025-03-26")
	if err != nil {
		return err
	}
	ev1125, err := evDirect("2025-11-25")
	if err != nil {
		return err
	}
	pairs := []struct {
		what string
		legs []*leg
	}{
		{"proxied echo tools/call (demo upstream)", []*leg{{name: "direct", url: upURL, body: echo("echo")},
			{name: "gateway", url: gwURL, token: token, body: echo("mcp_" + handle + "_echo")}}},
		{"proxied echo tools/call (server-everything)", []*leg{ev0325, ev1125,
			{name: "gateway", url: gwURL, token: token, body: echo("mcp_" + evHandle + "_echo")}}},
		// The same proxied call with today's JWT (HS256 here) and with an access token of the
		// gateway's own authorization server (RS256 + audience + the grant's revocation read).
		{"proxied echo tools/call (demo upstream), JWT vs issued token", []*leg{
			{name: "gateway, HS256 JWT", url: gwURL, token: token, body: echo("mcp_" + handle + "_echo")},
			{name: "gateway, issued token", url: gwURL, token: issued, body: echo("mcp_" + handle + "_echo")}}},
		{"tools/list", []*leg{{name: "direct", url: upURL, body: list},
			{name: "gateway", url: gwURL, token: token, body: list}}},
	}
	fmt.Fprintln(os.Stderr, "bench: loads…")
	for pi, pair := range pairs {
		for _, c := range concs {
			rs := make([]result, len(pair.legs))
			for i, l := range pair.legs {
				l.load(warm, c)
				rs[i] = l.load(n, c)
			}
			for i, r := range rs {
				note := fmt.Sprintf("%d requests over loopback HTTP, protocol %s", n, cmpOr(pair.legs[i].version, protocolVersion))
				if pair.legs[i].token != "" {
					note = fmt.Sprintf("p50 %+.3f ms over the first leg (%s), %.2f× its req/s", float64((r.p50-rs[0].p50).Microseconds())/1000, rs[0].name, r.rps/rs[0].rps)
				}
				if r.errors > 0 {
					note += fmt.Sprintf("; first error: %.120s", r.firstErr)
				}
				add(row{what: fmt.Sprintf("%s, %s, concurrency %d", pair.what, r.name, c), p50: ms(r.p50) + " ms", p99: ms(r.p99) + " ms",
					rps: fmt.Sprintf("%.0f", r.rps), note: note + fmt.Sprintf("; errors %d", r.errors)})
			}
		}
		if pi == 0 {
			add(row{what: "gateway peak RSS (VmHWM) under the proxied echo load", p50: vmHWM(gw.cmd.Process.Pid)})
		}
	}
	verdicts, err := runLimitLeg(ctx, limitEnv{dbURL: dbURL, ws: ws, gwURL: gwURL, token: token, demoURL: upURL,
		demoHandle: handle, everythingURL: evURL, evHandle: evHandle, concs: concs, n: n, warm: warm, catDir: catDir,
		gwPid: gw.cmd.Process.Pid, rate: *limitRate,
		startGateway: gatewayStarter(gwBin, ws, []string{"JWT_SECRET=" + secret, "CATALOG_DIR=" + catDir,
			"LOG_LEVEL=warn", "APP_ENV=local", "ALLOW_PRIVATE_UPSTREAMS=true", "AUTH_SIGNING_KEY_FILE=" + keyFile})})
	if err != nil {
		return err
	}
	if err := runHealth(ctx, base); err != nil {
		return err
	}
	printTable()
	printVerdicts(verdicts)
	if len(levels) > 0 {
		gw.stop()
		return runScale(ctx, base, gwBin, dir, levels, n, warm, scaleProfile)
	}
	return nil
}
