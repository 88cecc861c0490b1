package main

// The bench's processes and database: building the binaries, starting them on free loopback
// ports (and testpeer's npm peers, through benchTB), the fresh benchmark database, and
// installing an upstream into its workspace.

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
