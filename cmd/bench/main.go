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
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentpack/gateway/infra/rie"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/tmaxmax/go-sse"
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

type proc struct {
	cmd *exec.Cmd
}

func (p *proc) stop() {
	if p != nil && p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// benchTB lets the bench start the npm peers with testpeer (which takes a testing.TB-like
// value): failures end the run, cleanups run at the end.
type benchTB struct{ cleanups []func() }

func (b *benchTB) Helper()                         {}
func (b *benchTB) Cleanup(f func())                { b.cleanups = append(b.cleanups, f) }
func (b *benchTB) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
func (b *benchTB) Fatalf(format string, args ...any) {
	b.cleanup()
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}
func (b *benchTB) Skipf(format string, args ...any) { b.Fatalf(format, args...) }
func (b *benchTB) cleanup() {
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		b.cleanups[i]()
	}
	b.cleanups = nil
}

// install adds a manual connection to url in workspace ws and rewrites its catalog document.
func install(ctx context.Context, dbURL, ws, catDir, name, url string) (handle string, err error) {
	pool, err := db.Open(ctx, dbURL, 2)
	if err != nil {
		return "", err
	}
	defer pool.Close()
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	up := mcpclient.New(&mcpclient.Options{Guard: guard})
	defer up.Close()
	svc := &connections.Service{Pool: pool, Store: &catalog.DiskStore{Dir: catDir}, Upstreams: up, Guard: guard}
	out, err := svc.Create(ctx, &auth.Principal{Subject: "bench", Role: auth.RoleAdmin, Workspaces: []string{ws}},
		connections.CreateInput{Name: name, URL: url, WorkspaceID: &ws})
	if err != nil {
		return "", err
	}
	if out.Connect == nil || !out.Connect.OK {
		return "", fmt.Errorf("install %s: %+v", name, out.Connect)
	}
	return out.Connection.Handle, nil
}

func freePort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func start(bin string, env []string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	// Stdout (the gateway's EMF metric lines) goes to /dev/null, not through a pipe this
	// process would drain: that drain is not the load client's work, and it was charged
	// to it only in the gateway's rows.
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &proc{cmd: cmd}, nil
}

func build(dir string) (gw, local string, err error) {
	gw, local = filepath.Join(dir, "mcp"), filepath.Join(dir, "local")
	for out, pkg := range map[string]string{gw: "./functions/mcp", local: "./cmd/local"} {
		c := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
		c.Stderr = os.Stderr
		c.Env = append(os.Environ(), "CGO_ENABLED=0")
		if err := c.Run(); err != nil {
			return "", "", fmt.Errorf("build %s: %w", pkg, err)
		}
	}
	return gw, local, nil
}

// benchDB is the database setup recreates (-only limit uses its own, limit.go).
var benchDB = "agentpack_bench"

// setup creates a fresh database, migrates, seeds, creates the bench workspace, installs
// the upstream and writes the catalog document. It returns the database URL, workspace id
// and catalog directory.
func setup(ctx context.Context, baseURL, upstream, catDir string) (dbURL, ws, handle string, err error) {
	admin, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		return "", "", "", err
	}
	defer admin.Close(ctx)
	_, _ = admin.Exec(ctx, `DROP DATABASE IF EXISTS `+benchDB+` WITH (FORCE)`)
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+benchDB); err != nil {
		return "", "", "", err
	}
	u, _ := url.Parse(baseURL)
	u.Path = "/" + benchDB
	dbURL = u.String()
	pool, err := db.Open(ctx, dbURL, 4)
	if err != nil {
		return "", "", "", err
	}
	defer pool.Close()
	if err := db.Migrate(ctx, pool); err != nil {
		return "", "", "", err
	}
	if err := seed.Load(ctx, pool); err != nil {
		return "", "", "", err
	}
	ws = uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "bench"); err != nil {
		return "", "", "", err
	}
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	up := mcpclient.New(&mcpclient.Options{Guard: guard})
	defer up.Close()
	svc := &connections.Service{Pool: pool, Store: &catalog.DiskStore{Dir: catDir}, Upstreams: up, Guard: guard}
	out, err := svc.Create(ctx, &auth.Principal{Subject: "bench", Role: auth.RoleAdmin, Workspaces: []string{ws}},
		connections.CreateInput{Name: "Bench upstream", URL: upstream, WorkspaceID: &ws})
	if err != nil {
		return "", "", "", err
	}
	if out.Connect == nil || !out.Connect.OK {
		return "", "", "", fmt.Errorf("install upstream: %+v", out.Connect)
	}
	return dbURL, ws, out.Connection.Handle, nil
}

// startDemoUpstream starts the demo upstream (cmd/local's demo-upstream command, binary
// localBin) on a free loopback port and waits until it accepts connections (10 s). It
// returns the process and its MCP endpoint URL.
func startDemoUpstream(localBin string) (*proc, string, error) {
	port := freePort()
	up, err := start(localBin, []string{"DEMO_UPSTREAM_PORT=" + port}, "demo-upstream")
	if err != nil {
		return nil, "", err
	}
	if err := waitHTTP("127.0.0.1:"+port, 10*time.Second); err != nil {
		up.stop()
		return nil, "", err
	}
	return up, "http://127.0.0.1:" + port + "/mcp", nil
}

// waitHTTP waits until addr accepts TCP connections, at most d.
func waitHTTP(addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 50*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("%s did not listen within %s", addr, d)
}

type leg struct {
	name    string
	url     string
	token   string
	body    []byte
	version string            // Mcp-Protocol-Version ("" = protocolVersion)
	session string            // Mcp-Session-Id of a stateful upstream's session (see initSession)
	hdr     map[string]string // further request headers (a 2026-07-28 call's Mcp-Method, Mcp-Name)
}

// initSession opens a session on a stateful upstream at l.version (initialize, then
// notifications/initialized) for the direct leg, as any client of it would once.
func (l *leg) initSession() error {
	body := l.body
	l.body = []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + l.version +
		`","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	req, _ := http.NewRequest(http.MethodPost, l.url, bytes.NewReader(l.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	l.session = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || l.session == "" {
		return fmt.Errorf("initialize: status %d, session %q", resp.StatusCode, l.session)
	}
	req, _ = http.NewRequest(http.MethodPost, l.url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", l.session)
	req.Header.Set("Mcp-Protocol-Version", l.version)
	if resp, err = client.Do(req); err != nil {
		return err
	}
	resp.Body.Close()
	l.body = body
	return nil
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}}

func (l *leg) do() error {
	req, _ := http.NewRequest(http.MethodPost, l.url, bytes.NewReader(l.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	v := l.version
	if v == "" {
		v = protocolVersion
	}
	req.Header.Set("Mcp-Protocol-Version", v)
	if l.session != "" {
		req.Header.Set("Mcp-Session-Id", l.session)
	}
	if l.token != "" {
		req.Header.Set("Authorization", "Bearer "+l.token)
	}
	for k, v := range l.hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = lastEventData(b)
	}
	// Only the top level counts: tool schemas in a tools/list mention "error" too.
	var msg struct {
		Error  json.RawMessage `json:"error"`
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		return fmt.Errorf("answer is not JSON: %.200s", b)
	}
	if msg.Error != nil || msg.Result == nil || msg.Result.IsError {
		return fmt.Errorf("error answer: %.200s", b)
	}
	return nil
}

// lastEventData returns the data of the last event of an SSE body that has data (blank
// data, e.g. a priming event, does not count), read with go-sse as shared/mcpclient does;
// nil when there is none or the body is not a readable event stream.
func lastEventData(b []byte) []byte {
	var last []byte
	for ev, err := range sse.Read(bytes.NewReader(b), &sse.ReadConfig{MaxEventSize: len(b) + 1}) {
		if err != nil {
			break
		}
		if strings.TrimSpace(ev.Data) != "" {
			last = []byte(ev.Data)
		}
	}
	return last
}

type result struct {
	name     string
	conc     int
	p50, p99 time.Duration
	rps      float64
	errors   int64
	firstErr string
	// cpu is the CPU per call of each process group (loadInterleaved with a cpuWatch); "": not measured.
	cpu string
}

func (l *leg) load(n, conc int) result {
	lat := make([]time.Duration, n)
	var next, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				s := time.Now()
				if err := l.do(); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
				lat[i] = time.Since(s)
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0)
	slices.Sort(lat)
	r := result{name: l.name, conc: conc, p50: lat[n/2], p99: lat[n*99/100], rps: float64(n) / el.Seconds(), errors: errs.Load()}
	if v := firstErr.Load(); v != nil {
		r.firstErr = v.(string)
	}
	return r
}

func vmHWM(pid int) string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(sc.Text(), "VmHWM:"))
		}
	}
	return "?"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d.Microseconds())/1000) }

// row is one line of the final table.
type row struct {
	what, p50, p99, rps, allocs, bytes, note string
}

var table []row

func add(r row) { table = append(table, r) }

func printTable() {
	fmt.Printf("\n| measurement | p50 | p99 | req/s | allocs/op | B/op | notes |\n|---|---|---|---|---|---|---|\n")
	for _, r := range table {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", r.what, r.p50, r.p99, r.rps, r.allocs, r.bytes, r.note)
	}
}

// goBench runs the in-process benchmarks of the gateway, rate limiter and db packages (go
// test -bench -benchmem) and adds their rows.
func goBench(dbURL, benchtime string) error {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", benchtime, "-count", "1",
		"./functions/mcp/gateway/", "./shared/ratelimit/", "./shared/policy/", "./shared/db/")
	cmd.Env = append(os.Environ(), "TEST_DATABASE_URL="+dbURL, "REQUIRE_DB=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go test -bench: %w\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		m := map[string]string{}
		for i := 2; i+1 < len(f); i += 2 {
			m[f[i+1]] = f[i]
		}
		nsf := func(k string) string {
			v, err := strconv.ParseFloat(m[k], 64)
			if err != nil {
				return "?"
			}
			return fmt.Sprintf("%.3f ms", v/1e6)
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i]
		}
		ns, _ := strconv.ParseFloat(m["ns/op"], 64)
		note := "in process, full handler"
		if strings.HasPrefix(name, "ProxiedEchoRateLimit") {
			// a proxied call with and without a limit (docs/RATE-LIMITS.md, "Cost"); at c=8
			// ns/op is wall time per call, the inverse of the throughput
			note = "proxied echo through the full handler, with/without a rate limit"
		}
		if strings.HasPrefix(name, "PolicyDecide") {
			// one access-policy decision with 50 policies (docs/POLICIES.md "Cost"; target p50 ≤ 20 µs)
			note = fmt.Sprintf("one call decision, 50 access policies; p50 %.1f µs (target ≤ 20 µs)", mustFloat(m["p50-ns"])/1000)
		}
		if strings.HasPrefix(name, "LimiterTake") {
			// the rate limiter alone (docs/RATE-LIMITS.md): one statement per proxied call
			note = "rate limiter per call, one Postgres round trip; " + m["ns/call-per-caller"] + " ns/call per caller"
		}
		if strings.HasPrefix(name, "StatementMode") {
			// the query mode's cost per statement (docs/DATABASE.md): named prepared
			// statements (pgx's default, pins an RDS Proxy session) against cache-describe
			note = "one statement of the call path, one connection; cache-describe is db.Open's mode"
		}
		if b := m["resp-B"]; b != "" {
			note += ", response " + b + " B"
		}
		add(row{what: "go bench " + name, p50: nsf("p50-ns"), p99: nsf("p99-ns"), rps: fmt.Sprintf("%.0f", 1e9/ns),
			allocs: m["allocs/op"], bytes: m["B/op"], note: note})
	}
	return nil
}

func mustFloat(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// lambdaEvent is events/mcp-tools-list.json aimed at workspace ws with token.
func lambdaEvent(root, ws, token string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(root, "events", "mcp-tools-list.json"))
	if err != nil {
		return nil, err
	}
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, err
	}
	ev["rawPath"] = "/mcp/" + ws
	ev["pathParameters"] = map[string]any{"workspaceId": ws}
	ev["headers"].(map[string]any)["authorization"] = "Bearer " + token
	ev["requestContext"].(map[string]any)["http"].(map[string]any)["path"] = "/mcp/" + ws
	return json.Marshal(ev)
}

// coldRIE starts the bootstrap under the emulator runs times and returns the times from
// emulator start to the first answered tools/list, to its last page (each nextCursor
// followed, in the same execution environment) and the emulator's init durations, each
// sorted.
func coldRIE(ctx context.Context, emulator, bootstrap string, env []string, event []byte, runs int) (first, full, init []time.Duration, err error) {
	for i := 0; i < runs; i++ {
		e, err := rie.Start(ctx, rie.Options{Emulator: emulator, Bootstrap: bootstrap, Env: env, Timeout: 30 * time.Second})
		if err != nil {
			return nil, nil, nil, err
		}
		inv, err := e.Invoke(ctx, event)
		last := inv
		if err == nil {
			last, err = riePages(ctx, e, inv, event)
		}
		d, _ := e.InitDuration()
		e.Stop()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%w\n%s", err, e.Output())
		}
		first, full, init = append(first, inv.SinceStart), append(full, last.SinceStart), append(init, d)
	}
	slices.Sort(first)
	slices.Sort(full)
	slices.Sort(init)
	return first, full, init, nil
}

// riePages checks inv, a tools/list answer, and follows its nextCursor with event's
// tools/list asking for each next page until the last, which it returns.
func riePages(ctx context.Context, e *rie.Emulator, inv rie.Invocation, event []byte) (rie.Invocation, error) {
	for {
		r, err := inv.HTTP()
		if err == nil && (r.StatusCode != 200 || !strings.Contains(r.Body, `"tools"`)) {
			err = fmt.Errorf("emulator answer %d: %.300s", r.StatusCode, r.Body)
		}
		if err != nil {
			return inv, err
		}
		body := []byte(r.Body)
		if r.IsBase64Encoded {
			if body, err = base64.StdEncoding.DecodeString(r.Body); err != nil {
				return inv, err
			}
		}
		if strings.HasPrefix(r.Headers["Content-Type"], "text/event-stream") || strings.HasPrefix(r.Headers["content-type"], "text/event-stream") {
			body = lastEventData(body)
		}
		var msg struct {
			Result struct {
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(body, &msg); err != nil {
			return inv, fmt.Errorf("emulator answer: %w: %.200s", err, body)
		}
		if msg.Result.NextCursor == "" {
			return inv, nil
		}
		var ev map[string]any
		if err := json.Unmarshal(event, &ev); err != nil {
			return inv, err
		}
		ev["body"] = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":` + strconv.Quote(msg.Result.NextCursor) + `}}`
		delete(ev["headers"].(map[string]any), "content-length")
		next, err := json.Marshal(ev)
		if err != nil {
			return inv, err
		}
		if inv, err = e.Invoke(ctx, next); err != nil {
			return inv, err
		}
	}
}

func run(n, warm int, concList, benchtime string, levels []int, scaleOnly bool, scaleProfile string) error {
	ctx := context.Background()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		return errors.New("DATABASE_URL is not set (use make bench)")
	}
	root, err := rie.RepoRoot(".")
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
