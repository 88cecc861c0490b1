package stack_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
	"go.uber.org/goleak"
)

// TestConcurrentInstalls (issue 7 "Concurrency"): 20 concurrent installs of one entry into
// one workspace → exactly one 201, nineteen 409, one connection row, one install counted,
// one install event.
func TestConcurrentInstalls(t *testing.T) {
	t.Parallel()
	env := stacktest.New(t, nil)
	w := &world{env: env, ws: map[string]*tenant{}}
	ws, _, _ := env.Workspace(t, "I")
	admin := stacktest.Token(t, "admin-i", auth.RoleAdmin, ws)
	su := stacktest.Token(t, "root", auth.RoleSuperuser)
	fx := testpeer.NewFixture(t, nil)
	st, b := w.do(t, "POST", "/api/mcp-marketplace", su, map[string]any{"name": "Racy", "url": fx.URL, "transportType": "streamable-http", "category": "testing"})
	mustStatus(t, "entry", st, 201, b)
	entry := b["id"].(string)
	codes := make([]int, 20)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range codes {
		wg.Go(func() {
			<-start
			codes[i], _ = env.Do(t, "POST", "/api/mcp-marketplace/"+entry+"/install", admin, map[string]any{"workspaceId": ws})
		})
	}
	close(start)
	wg.Wait()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	if count[201] != 1 || count[409] != 19 {
		t.Errorf("codes %v: want one 201 and nineteen 409", count)
	}
	if n := w.count(t, `SELECT count(*) FROM mcp_connections WHERE workspace_id = $1 AND catalog_entry_id = $2`, ws, entry); n != 1 {
		t.Errorf("%d connection rows, want 1", n)
	}
	if n := w.count(t, `SELECT install_count FROM mcp_catalog_entries WHERE id = $1`, entry); n != 1 {
		t.Errorf("install_count = %d, want 1", n)
	}
	if n := w.count(t, `SELECT count(*) FROM event_log WHERE workspace_id = $1 AND action LIKE '%install%'`, ws); n != 1 {
		t.Errorf("%d install events, want 1", n)
	}
}

// TestConcurrentGatewayCalls (issue 7 "Concurrency"): 200 concurrent mixed gateway requests
// (tools/list, read-only built-ins, proxied calls, search) from members and admins → no
// error at all, and audit rows exactly equal to the successful writes (proxied calls; the
// read-only built-ins are not audited).
func TestConcurrentGatewayCalls(t *testing.T) {
	t.Parallel()
	env := stacktest.New(t, nil)
	w := &world{env: env, ws: map[string]*tenant{}}
	ws, _, _ := env.Workspace(t, "L")
	admin := stacktest.Token(t, "admin-l", auth.RoleAdmin, ws)
	member := stacktest.Token(t, "member-l", auth.RoleMember, ws)
	fx := testpeer.NewFixture(t, nil)
	_, h := createConnection(t, w, ws, admin, "Loaded", fx.URL, "streamable-http")
	path := "/mcp/" + ws
	var writes atomic.Int64
	errs := make(chan string, 200)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 200 {
		tok := member
		if i%3 == 0 {
			tok = admin
		}
		wg.Go(func() {
			<-start
			var st int
			var out string
			switch i % 5 {
			case 0:
				var m map[string]any
				st, m = w.rpc(t, path, tok, "tools/list", nil, nil)
				out = "ok"
				if !hasPrefix(toolNames(m), "mcp_"+h+"_echo") {
					out = "tools missing"
				}
			case 1:
				st, _, out = w.call(t, path, tok, "agentpack_catalog_list", map[string]any{"limit": 5}, nil)
			case 2:
				st, _, out = w.call(t, path, tok, "mcp_"+h+"_echo", map[string]any{"message": fmt.Sprint(i)}, nil)
				if st == 200 && out == "ok" {
					writes.Add(1)
				}
			case 3:
				st, _, out = w.call(t, path, tok, "mcp_"+h+"_add", map[string]any{"a": i, "b": 1}, nil)
				if st == 200 && out == "ok" {
					writes.Add(1)
				}
			case 4:
				st, _, out = w.call(t, path, tok, "agentpack_tools_search", map[string]any{"query": "echo"}, nil)
			}
			if st != http.StatusOK || out != "ok" {
				errs <- fmt.Sprintf("request %d: %d %s", i, st, out)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	var failed []string
	for e := range errs {
		failed = append(failed, e)
	}
	if len(failed) > 0 {
		t.Errorf("%d of 200 failed: %s", len(failed), strings.Join(failed[:min(len(failed), 10)], "; "))
	}
	if writes.Load() != 80 {
		t.Errorf("%d successful writes, want 80", writes.Load())
	}
	if n := w.count(t, `SELECT count(*) FROM audit_events WHERE workspace_id = $1 AND kind = 'proxied'`, ws); int64(n) != writes.Load() {
		t.Errorf("%d audit rows for %d successful writes", n, writes.Load())
	}
	if n := w.count(t, `SELECT count(*) FROM audit_events`); int64(n) != writes.Load() {
		t.Errorf("%d audit rows in all, want %d", n, writes.Load())
	}
}

// TestNoGoroutineLeaks (issue 7): once the stack's HTTP server, the gateway handler's
// upstream client and the upstream are shut down, no goroutine of theirs is left.
func TestNoGoroutineLeaks(t *testing.T) {
	// Not parallel: goroutines of tests running alongside would count as leaks. It runs
	// alone, before the parallel tests of this package start.
	// Other tests of this binary may have left idle keep-alive connections in the default
	// client; they are not the stack's.
	http.DefaultClient.CloseIdleConnections()
	opt := goleak.IgnoreCurrent()
	t.Run("work", func(t *testing.T) {
		up := mcpclient.New(&mcpclient.Options{Guard: urlguard.New(&urlguard.Options{AllowPrivate: true})})
		env := faultEnvWith(t, up)
		w := &world{env: env, ws: map[string]*tenant{}}
		ws, _, _ := env.Workspace(t, "G")
		admin := stacktest.Token(t, "admin-g", auth.RoleAdmin, ws)
		for _, mode := range []string{testpeer.ModeStreamable, testpeer.ModeStateful, testpeer.ModeSSE} {
			fx := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: mode})
			transport := "streamable-http"
			if mode == testpeer.ModeSSE {
				transport = "sse"
			}
			_, h := createConnection(t, w, ws, admin, "Leak "+mode, fx.URL, transport)
			if st, _, out := w.call(t, "/mcp/"+ws, admin, "mcp_"+h+"_echo", map[string]any{"message": "x"}, nil); st != 200 || out != "ok" {
				t.Fatalf("%s: %d %s", mode, st, out)
			}
		}
		sess := env.MCP(t, "/mcp/"+ws, admin, "", nil)
		if _, err := sess.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = up.Close() })
	})
	http.DefaultClient.CloseIdleConnections()
	goleak.VerifyNone(t, opt)
}
