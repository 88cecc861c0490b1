// Command bench is the load driver behind `make bench` (issue 8): it builds the gateway
// and the demo upstream as separate processes on loopback, installs the upstream into a
// fresh benchmark workspace, and measures, in one run and with one load client:
//
//   - a proxied tools/call (echo) through the gateway next to the same call made directly
//     to the upstream, at concurrency 1, 8 and 32 (p50, p99, requests/s, errors, ratio);
//   - tools/list through the gateway next to a direct tools/list to the upstream;
//   - cold start: process start → first tools/list answered (local process);
//   - the gateway's peak RSS under the proxied load (VmHWM).
//
// It needs DATABASE_URL (make bench provides one). Every server binds 127.0.0.1; every
// loop is bounded by -n requests per leg and stops by itself.
package main

import (
	"bufio"
	"bytes"
	"context"
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

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

const (
	secret          = "bench-secret"
	protocolVersion = "2025-11-25"
)

func main() {
	n := flag.Int("n", 3000, "requests per leg and concurrency")
	conc := flag.String("c", "1,8,32", "concurrency levels")
	warm := flag.Int("warm", 300, "warm-up requests per leg")
	flag.Parse()
	if err := run(*n, *warm, *conc); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type proc struct {
	cmd  *exec.Cmd
	addr string
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
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
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

// setup creates a fresh database, migrates, seeds, creates the bench workspace, installs
// the upstream and writes the catalog document. It returns the database URL, workspace id
// and catalog directory.
func setup(ctx context.Context, baseURL, upstream, catDir string) (dbURL, ws, handle string, err error) {
	admin, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		return "", "", "", err
	}
	defer admin.Close(ctx)
	_, _ = admin.Exec(ctx, `DROP DATABASE IF EXISTS agentpack_bench WITH (FORCE)`)
	if _, err := admin.Exec(ctx, `CREATE DATABASE agentpack_bench`); err != nil {
		return "", "", "", err
	}
	u, _ := url.Parse(baseURL)
	u.Path = "/agentpack_bench"
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
	name  string
	url   string
	token string
	body  []byte
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}}

func (l *leg) do() error {
	req, _ := http.NewRequest(http.MethodPost, l.url, bytes.NewReader(l.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	if l.token != "" {
		req.Header.Set("Authorization", "Bearer "+l.token)
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
	if bytes.Contains(b, []byte(`"error":`)) || bytes.Contains(b, []byte(`"isError":true`)) {
		return fmt.Errorf("error answer: %.200s", b)
	}
	return nil
}

type result struct {
	name     string
	conc     int
	p50, p99 time.Duration
	rps      float64
	errors   int64
	firstErr string
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

func run(n, warm int, concList string) error {
	ctx := context.Background()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		return errors.New("DATABASE_URL is not set (use make bench)")
	}
	dir, err := os.MkdirTemp("", "agentpack-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	gwBin, localBin, err := build(dir)
	if err != nil {
		return err
	}
	upPort, gwPort := freePort(), freePort()
	up, err := start(localBin, []string{"DEMO_UPSTREAM_PORT=" + upPort}, "demo-upstream")
	if err != nil {
		return err
	}
	defer up.stop()
	if err := waitHTTP("127.0.0.1:"+upPort, 10*time.Second); err != nil {
		return err
	}
	upURL := "http://127.0.0.1:" + upPort + "/mcp"
	catDir := filepath.Join(dir, "catalog")
	dbURL, ws, handle, err := setup(ctx, base, upURL, catDir)
	if err != nil {
		return err
	}
	token, _ := auth.Mint(secret, auth.Principal{Subject: "bench", Role: auth.RoleAdmin, Workspaces: []string{ws}}, time.Hour)
	gwEnv := []string{"DATABASE_URL=" + dbURL, "JWT_SECRET=" + secret, "CATALOG_DIR=" + catDir,
		"PORT=" + gwPort, "LOG_LEVEL=warn", "APP_ENV=local", "ALLOW_PRIVATE_UPSTREAMS=true"}
	gwURL := "http://127.0.0.1:" + gwPort + "/mcp/" + ws
	list := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	echo := func(name string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + name + `","arguments":{"message":"hello"}}}`)
	}

	// Cold start: exec → first tools/list answered, best of 5.
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
			if err := l.do(); err == nil {
				break
			}
			if time.Since(t0) > 10*time.Second {
				p.stop()
				return errors.New("gateway did not answer within 10 s")
			}
			time.Sleep(500 * time.Microsecond)
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

	legs := [][2]*leg{
		{{name: "direct echo", url: upURL, body: echo("echo")}, {name: "gateway echo", url: gwURL, token: token, body: echo("mcp_" + handle + "_echo")}},
		{{name: "direct tools/list", url: upURL, body: list}, {name: "gateway tools/list", url: gwURL, token: token, body: list}},
	}
	var concs []int
	for _, s := range strings.Split(concList, ",") {
		c, _ := strconv.Atoi(strings.TrimSpace(s))
		if c > 0 {
			concs = append(concs, c)
		}
	}
	fmt.Printf("\n| leg | conc | p50 ms | p99 ms | req/s | errors | gateway/direct |\n|---|---|---|---|---|---|---|\n")
	for _, pair := range legs {
		for _, c := range concs {
			var rs [2]result
			for i, l := range pair {
				l.load(warm, c)
				rs[i] = l.load(n, c)
			}
			for i, r := range rs {
				ratio := ""
				if i == 1 {
					ratio = fmt.Sprintf("p50 +%s ms, %.2f× req/s", ms(r.p50-rs[0].p50), r.rps/rs[0].rps)
				}
				fmt.Printf("| %s | %d | %s | %s | %.0f | %d | %s |\n", r.name, r.conc, ms(r.p50), ms(r.p99), r.rps, r.errors, ratio)
				if r.firstErr != "" {
					fmt.Fprintf(os.Stderr, "  first error (%s c=%d): %s\n", r.name, r.conc, r.firstErr)
				}
			}
		}
	}
	fmt.Printf("\ncold start (local process, exec → first tools/list answered): min %s ms, median %s ms (5 runs)\n", ms(cold[0]), ms(cold[2]))
	fmt.Printf("gateway peak RSS (VmHWM) after the loads: %s\n", vmHWM(gw.cmd.Process.Pid))
	return nil
}
