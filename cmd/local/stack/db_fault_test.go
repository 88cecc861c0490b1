package stack_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
)

// cluster is a throwaway PostgreSQL cluster of this test alone (never the shared one the
// other tests use), so that it can be stopped and started mid-run.
type cluster struct {
	t    *testing.T
	bin  string
	dir  string
	port int
	URL  string
}

// newCluster runs initdb and starts a cluster on a free loopback port (as the postgres user
// when root, as scripts/pg.sh does); it is stopped and removed at cleanup.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	bin := ""
	if len(bins) > 0 {
		bin = filepath.Dir(bins[len(bins)-1])
	} else if p, err := exec.LookPath("initdb"); err == nil {
		bin = filepath.Dir(p)
	} else {
		if os.Getenv("REQUIRE_DB") == "1" {
			t.Fatal("no PostgreSQL binaries (initdb) for a throwaway cluster")
		}
		t.Skip("no PostgreSQL binaries (initdb)")
	}
	dir, err := os.MkdirTemp("", "agentpack-pgfault-")
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, bin: bin, dir: dir}
	if os.Getuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("root without a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.port = l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	c.run("initdb", "-D", dir+"/data", "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
	t.Cleanup(func() {
		c.exec("pg_ctl", "-D", dir+"/data", "-m", "immediate", "-w", "stop")
		_ = os.RemoveAll(dir)
	})
	c.Start()
	return c
}

func (c *cluster) exec(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	if os.Getuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, name)}, args...)...)
	}
	cmd.Dir = "/"
	return cmd.CombinedOutput()
}

func (c *cluster) run(name string, args ...string) {
	c.t.Helper()
	if out, err := c.exec(name, args...); err != nil {
		c.t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// Start starts the cluster and waits until it accepts connections.
func (c *cluster) Start() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.dir+"/data", "-l", c.dir+"/server.log", "-w", "-t", "30", "start",
		"-o", fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off", c.port, c.dir))
}

// Stop stops the cluster (fast: open connections are cut, as in a failover).
func (c *cluster) Stop() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.dir+"/data", "-m", "fast", "-w", "-t", "30", "stop")
}

// TestPostgresStoppedMidRun (issue 7 "Faults"): with Postgres stopped, REST answers 503
// UNAVAILABLE (retryable), built-ins answer the UNAVAILABLE envelope with retryable true,
// the gateway still lists tools from the catalog, and a proxied call (no limit applies) is
// answered with its audit row queued; once Postgres is back everything works again, the
// queued row is written and no half-written row exists.
func TestPostgresStoppedMidRun(t *testing.T) {
	c := newCluster(t)
	t.Setenv("TEST_DATABASE_URL", c.URL)
	env := stacktest.New(t, nil)
	w := &world{env: env, ws: map[string]*tenant{}}
	ws, project, chat := env.Workspace(t, "P")
	admin := stacktest.Token(t, "admin-p", auth.RoleAdmin, ws)
	fx := testpeer.NewFixture(t, nil)
	_, handle := createConnection(t, w, ws, admin, "Before", fx.URL, "streamable-http")
	path := "/mcp/" + ws
	echo := "mcp_" + handle + "_echo"
	if st, _, out := w.call(t, path, admin, echo, map[string]any{"message": "x"}, nil); st != 200 || out != "ok" {
		t.Fatalf("before: %d %s", st, out)
	}

	// As make run sets it (cmd/local serve, a loopback DATABASE_URL): the 503 names the
	// stopped local Postgres and how to start it, not "retry shortly" (issue 44).
	db.SetLocalCluster(fmt.Sprintf("127.0.0.1:%d", c.port))
	t.Cleanup(func() { db.SetLocalCluster("") })
	c.Stop()
	restCode := func(b map[string]any) string {
		e, _ := b["error"].(map[string]any)
		return fmt.Sprint(e["code"])
	}
	restText := func(b map[string]any) string {
		e, _ := b["error"].(map[string]any)
		return fmt.Sprint(e["message"], " / ", e["hint"])
	}
	if st, b := w.do(t, "GET", "/api/mcp-connections?workspaceId="+ws, admin, nil); st != http.StatusServiceUnavailable ||
		!strings.Contains(restText(b), fmt.Sprintf("the local Postgres at 127.0.0.1:%d is not answering", c.port)) ||
		!strings.Contains(restText(b), "make db-start") || strings.Contains(restText(b), "retry shortly") {
		t.Errorf("down, local: %d %q, want the stopped local Postgres named and make db-start", st, restText(b))
	}
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/mcp-connections?workspaceId=" + ws},
		{"GET", "/api/chats/" + chat + "/pins"},
		{"GET", "/api/mcp-marketplace"},
	} {
		if st, b := w.do(t, r.method, r.path, admin, nil); st != http.StatusServiceUnavailable || restCode(b) != "UNAVAILABLE" {
			t.Errorf("down: %s %s = %d %v, want 503 UNAVAILABLE", r.method, r.path, st, b)
		}
	}
	if st, b := w.do(t, "POST", "/api/mcp-connections", admin, map[string]any{"name": "During", "url": fx.URL, "workspaceId": ws}); st != http.StatusServiceUnavailable {
		t.Errorf("down: create = %d %v, want 503", st, b)
	}
	if st, m := w.rpc(t, path, admin, "tools/list", nil, nil); st != 200 || !hasPrefix(toolNames(m), echo) {
		t.Errorf("down: tools/list = %d %v, want the catalog's tools", st, toolNames(m))
	}
	for _, args := range []map[string]any{{}, {"projectId": project}} {
		st, m, out := w.call(t, path, admin, "agentpack_connections_list", args, nil)
		sc, _ := m["result"].(map[string]any)["structuredContent"].(map[string]any)
		e, _ := sc["error"].(map[string]any)
		if st != 200 || out != "UNAVAILABLE" || e["retryable"] != true {
			t.Errorf("down: connections_list %v = %d %s %v, want UNAVAILABLE retryable", args, st, out, e)
		}
	}
	// A proxied call no limit applies to makes no statement, and its audit row is written
	// after the answer: it is answered, and the row waits in the queue until Postgres is
	// back (docs/DESIGN.md "The audit row after the answer").
	if st, _, out := w.call(t, path, admin, echo, map[string]any{"message": "y"}, nil); st != 200 || out != "ok" {
		t.Errorf("down: a proxied call answered %d %s, want ok", st, out)
	}

	c.Start()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, _ := w.do(t, "GET", "/api/mcp-connections?workspaceId="+ws, admin, nil)
		if st == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery within 20 s after Postgres returned (last %d)", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
	createConnection(t, w, ws, admin, "After", fx.URL, "streamable-http")
	if st, _, out := w.call(t, path, admin, echo, map[string]any{"message": "z"}, nil); st != 200 || out != "ok" {
		t.Errorf("after: %d %s", st, out)
	}
	if st, _, out := w.call(t, path, admin, "agentpack_connections_list", map[string]any{}, nil); st != 200 || out != "ok" {
		t.Errorf("after: connections_list %d %s", st, out)
	}
	// No half-written rows: two connections, each with its tools and its creation event;
	// the audit has exactly the two successful calls.
	if n := w.count(t, `SELECT count(*) FROM mcp_connections WHERE workspace_id = $1`, ws); n != 2 {
		t.Errorf("%d connections, want 2 (Before, After)", n)
	}
	if n := w.count(t, `SELECT count(*) FROM mcp_connections c WHERE workspace_id = $1 AND NOT EXISTS (SELECT 1 FROM mcp_connection_tools t WHERE t.connection_id = c.id)`, ws); n != 0 {
		t.Errorf("%d connections without tools", n)
	}
	if n := w.count(t, `SELECT count(*) FROM mcp_connections c WHERE workspace_id = $1 AND NOT EXISTS (SELECT 1 FROM event_log e WHERE e.entity_id = c.id::text)`, ws); n != 0 {
		t.Errorf("%d connections without their event", n)
	}
	if n := w.count(t, `SELECT count(*) FROM audit_events`); n != 3 {
		t.Errorf("%d audit rows, want 3 (before, during the outage, after)", n)
	}
}

// failingStore is a catalog store whose reads can be made to fail.
type failingStore struct {
	catalog.Store
	fail atomic.Bool
}

func (s *failingStore) GetObject(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	if s.fail.Load() {
		return nil, "", fmt.Errorf("injected: catalog store unreachable")
	}
	return s.Store.GetObject(ctx, key, ifNoneMatch)
}

// TestCatalogStoreFailing (issue 7 "Faults"): with the catalog store failing, a workspace
// whose catalog was loaded keeps being served from the last good copy (tools listed and
// callable); one never loaded answers 503 "catalog unavailable"; both recover.
func TestCatalogStoreFailing(t *testing.T) {
	t.Parallel()
	store := &failingStore{Store: &catalog.DiskStore{Dir: t.TempDir()}}
	env := stacktest.New(t, &stacktest.Options{Store: store})
	w := &world{env: env, ws: map[string]*tenant{}}
	ws, _, _ := env.Workspace(t, "S")
	cold, _, _ := env.Workspace(t, "Cold")
	admin := stacktest.Token(t, "admin-s", auth.RoleAdmin, ws, cold)
	fx := testpeer.NewFixture(t, nil)
	_, handle := createConnection(t, w, ws, admin, "Cached", fx.URL, "streamable-http")
	echo := "mcp_" + handle + "_echo"
	if st, m := w.rpc(t, "/mcp/"+ws, admin, "tools/list", nil, nil); st != 200 || !hasPrefix(toolNames(m), echo) {
		t.Fatalf("warm-up: %d %v", st, toolNames(m))
	}
	store.fail.Store(true)
	for range 3 {
		if st, m := w.rpc(t, "/mcp/"+ws, admin, "tools/list", nil, nil); st != 200 || !hasPrefix(toolNames(m), echo) {
			t.Errorf("store failing: tools/list = %d %v, want the last good catalog", st, toolNames(m))
		}
		if st, _, out := w.call(t, "/mcp/"+ws, admin, echo, map[string]any{"message": "x"}, nil); st != 200 || out != "ok" {
			t.Errorf("store failing: call = %d %s", st, out)
		}
	}
	st, m := w.rpc(t, "/mcp/"+cold, admin, "tools/list", nil, nil)
	e, _ := m["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if st != http.StatusServiceUnavailable || e["code"] != float64(-32603) || data["errorId"] == "" || data["errorId"] == nil ||
		data["retryable"] != true || !strings.Contains(w.env.Logs.String(), fmt.Sprint(data["errorId"])) {
		// The client gets the error id that the log line carries, and a retryable flag.
		t.Errorf("store failing, never loaded: %d %v, want 503, -32603 with a logged errorId, retryable", st, m)
	}
	store.fail.Store(false)
	if st, m := w.rpc(t, "/mcp/"+cold, admin, "tools/list", nil, nil); st != 200 {
		t.Errorf("store back: %d %v", st, m)
	}
}
