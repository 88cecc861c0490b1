package main

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/seed"
)

// TestRunRefusesSecondInstance: while a make run holds this checkout's lock (an flock on
// .state/run.lock holding its pid), scripts/run.sh refuses at once, naming that pid, and
// touches nothing: no Postgres started, no build, no migration.
func TestRunRefusesSecondInstance(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	lock, err := os.OpenFile(filepath.Join(state, "run.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.WriteString("4242\n"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("../../scripts/run.sh")
	cmd.Env = append(os.Environ(), "PG_STATE_DIR="+state, "DATABASE_URL=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another make run (pid 4242) is using") {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "migrating") || strings.Contains(string(out), "building") {
		t.Errorf("the refused run went on:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(state, "pgdir")); err == nil {
		t.Error("the refused run started a Postgres cluster")
	}
}

// TestServeChecksPortsFirst: serve (and check-ports) with a port taken stops before the
// database is opened — DATABASE_URL points nowhere here, and the error is about the port,
// naming the variable to change — and releases the ports it did bind.
func TestServeChecksPortsFirst(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	}
	appPort := free()
	t.Setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none?sslmode=disable")
	t.Setenv("JWT_SECRET", "ports-test-secret")
	t.Setenv("PORT", appPort)
	t.Setenv("DEMO_UPSTREAM_PORT", free())
	t.Setenv("OAUTH_DEMO_PORT", busyPort)
	for name, run := range map[string]func() error{"serve": func() error { return cmdServe(t.Context()) }, "check-ports": cmdCheckPorts} {
		err := run()
		if err == nil || !strings.Contains(err.Error(), "port "+busyPort+" (OAUTH_DEMO_PORT) is not free") || !strings.Contains(err.Error(), "set OAUTH_DEMO_PORT") {
			t.Errorf("%s: %v", name, err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+appPort)
	if err != nil {
		t.Errorf("PORT was not released: %v", err)
	} else {
		l.Close()
	}
}

// TestSeedKeepsUserInstalls: a make run with other demo ports points the demo connections
// at the new URLs in place — the user's install of the OAuth demo keeps its id, its creator
// and its stored grants; the demo upstream's connection keeps its id — and never
// uninstalls them.
func TestSeedKeepsUserInstalls(t *testing.T) {
	env := stacktest.New(t, nil)
	ctx := t.Context()
	if err := db.InTx(ctx, env.Pool, func(tx db.Tx) error { return seedDemo(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	d := env.Deps
	demo := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		u, stop := startDemoUpstream(ln)
		t.Cleanup(stop)
		return u
	}
	url1 := demo()
	if err := ensureDemoConnection(ctx, d, url1); err != nil {
		t.Fatal(err)
	}
	p1, err := demoupstream.StartProtected("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p1.Close() })
	if err := ensureOAuthDemo(ctx, d, p1); err != nil {
		t.Fatal(err)
	}
	// The user (an admin of the demo workspace) installs the OAuth demo.
	user := &auth.Principal{Subject: "alice", Role: auth.RoleAdmin, Workspaces: []string{demoWorkspace}}
	entry, err := db.CatalogEntryGetByName(ctx, env.Pool, seed.OAuthDemoName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Connections.Install(ctx, user, entry.ID, connections.InstallInput{WorkspaceID: demoWorkspace}); err != nil {
		t.Fatal(err)
	}
	before := conns(t, env)
	grants := func() int {
		var n int
		if err := env.Pool.QueryRow(ctx, `SELECT count(*) FROM mcp_oauth_grants`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	g0 := grants()

	// The next run, on other demo ports.
	url2 := demo()
	p2, err := demoupstream.StartProtected("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p2.Close() })
	if err := ensureDemoConnection(ctx, d, url2); err != nil {
		t.Fatal(err)
	}
	if err := ensureOAuthDemo(ctx, d, p2); err != nil {
		t.Fatal(err)
	}
	after := conns(t, env)
	for name, c := range before {
		a, ok := after[name]
		if !ok {
			t.Errorf("%s was uninstalled", name)
			continue
		}
		if a.ID != c.ID || a.CreatedBy != c.CreatedBy {
			t.Errorf("%s replaced: %s by %s → %s by %s", name, c.ID, c.CreatedBy, a.ID, a.CreatedBy)
		}
	}
	if after[demoConnName].URL != url2 || after[seed.OAuthDemoName].URL != p2.MCPURL() {
		t.Errorf("not repointed: %s %s", after[demoConnName].URL, after[seed.OAuthDemoName].URL)
	}
	if g := grants(); g != g0 {
		t.Errorf("grants %d → %d", g0, g)
	}
	// The demo upstream answers at its new URL through the gateway's REST test.
	st, _ := env.Do(t, "POST", "/api/mcp-connections/"+after[demoConnName].ID+"/test",
		stacktest.Token(t, "alice", auth.RoleAdmin, demoWorkspace), nil)
	if st != http.StatusOK {
		t.Errorf("test of the repointed demo connection: %d", st)
	}
}

// conns is the demo workspace's connections by name.
func conns(t *testing.T, env *stacktest.Env) map[string]db.Connection {
	t.Helper()
	rows, err := db.ConnectionList(t.Context(), env.Pool, db.ConnectionFilter{WorkspaceIDs: []string{demoWorkspace}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]db.Connection{}
	for _, c := range rows {
		out[c.Name] = c
	}
	return out
}
