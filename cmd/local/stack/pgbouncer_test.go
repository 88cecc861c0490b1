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
	"github.com/agentpack/gateway/shared/testpeer"
)

// TestThroughPgBouncerTransactionMode (issue 31): the stack's database traffic goes through
// PgBouncer in transaction mode (Debian's 1.18, which tracks no prepared statements, with
// testpeer.PgBouncerPoolSize server connections), the nearest runnable stand-in for RDS
// Proxy's multiplexing, behind a wire inspector (testpeer.PgWire). Setup (catalog entry,
// installs, pins, a rate limit) and 16 concurrent workers mixing proxied calls (limited and
// not), tools/list, built-ins, REST reads and installs: no request fails, every proxied call
// has its audit row, and the inspector saw no named prepared statement and no statement
// that sets session state (SET, session advisory lock, LISTEN, …) — what would pin an RDS
// Proxy session.
func TestThroughPgBouncerTransactionMode(t *testing.T) {
	t.Parallel()
	var wire *testpeer.PgWire
	w := newWorld(t, &stacktest.Options{DatabaseVia: func(t testing.TB, direct string) string {
		wire = testpeer.NewPgWire(t, testpeer.PgBouncer(t, direct))
		return wire.URL
	}})
	a, b := w.ws["A"], w.ws["B"]
	st, body := w.do(t, "POST", "/api/rate-limits", b.admin, map[string]any{"workspaceId": b.id, "principal": "*", "perMinute": 100000})
	mustStatus(t, "rate limit", st, http.StatusCreated, body)

	const workers, rounds = 16, 10
	var proxied atomic.Int64
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range workers {
		wg.Go(func() {
			<-start
			for r := range rounds {
				tn := a
				if (i+r)%2 == 1 {
					tn = b
				}
				path := "/mcp/" + tn.id
				var st int
				var out string
				switch (i + r) % 6 {
				case 0, 1:
					st, _, out = w.call(t, path, tn.member, "mcp_"+tn.handle+"_echo", map[string]any{"message": fmt.Sprint(i, r)}, nil)
					if st == http.StatusOK && out == "ok" {
						proxied.Add(1)
					}
				case 2:
					var m map[string]any
					st, m = w.rpc(t, path, tn.member, "tools/list", nil, nil)
					out = "ok"
					if !hasPrefix(toolNames(m), "mcp_"+tn.handle+"_") {
						out = "tools missing"
					}
				case 3:
					st, _, out = w.call(t, path, tn.admin, "agentpack_connections_list", map[string]any{}, nil)
				case 4:
					st, _ = w.do(t, "GET", "/api/chats/"+tn.chat+"/pins", tn.member, nil)
					out = "ok"
				case 5:
					ws, _, _ := w.env.Workspace(t, fmt.Sprintf("W%d-%d", i, r))
					admin := stacktest.Token(t, "admin", auth.RoleAdmin, ws)
					st, _ = w.do(t, "POST", "/api/mcp-marketplace/"+w.entry+"/install", admin, map[string]any{
						"workspaceId": ws, "headers": map[string]string{"X-Api-Key": "k"}})
					if st == http.StatusCreated {
						st, out = http.StatusOK, "ok"
					}
				}
				if st != http.StatusOK || out != "ok" {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("worker %d round %d: %d %s", i, r, st, out))
					mu.Unlock()
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if len(failed) > 0 {
		t.Errorf("%d of %d requests failed through PgBouncer: %s", len(failed), workers*rounds, strings.Join(failed[:min(len(failed), 10)], "; "))
	}
	if n := w.count(t, `SELECT count(*) FROM audit_events WHERE kind = 'proxied'`); int64(n) != proxied.Load() || n == 0 {
		t.Errorf("%d proxied audit rows for %d proxied calls answered", n, proxied.Load())
	}
	if v := wire.Violations(); len(v) > 0 {
		t.Errorf("%d statements would pin an RDS Proxy session (of %d):\n%s", len(v), wire.Statements(), strings.Join(v[:min(len(v), 20)], "\n"))
	}
	t.Logf("%d statements through PgBouncer, %d proxied calls", wire.Statements(), proxied.Load())
}
