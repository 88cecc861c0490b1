package stack_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/testpeer"
)

// auditHelperEnv makes this test binary serve the stack as TestAuditKilledAfterAnswer's
// child process (auditHelper).
const auditHelperEnv = "AGENTPACK_AUDIT_KILL_HELPER"

// auditHelper serves the stack over HELPER_DB with lambdaapp.Start (SIGTERM: graceful
// shutdown, then the gateway's CloseAudit hook), its logs on stderr, and prints
// "ready <url> <workspace> <token> <tool>".
func auditHelper(t *testing.T) {
	env := stacktest.New(t, &stacktest.Options{DatabaseVia: func(testing.TB, string) string { return os.Getenv("HELPER_DB") }})
	w := &world{env: env, ws: map[string]*tenant{}}
	ws, _, _ := env.Workspace(t, "K")
	admin := stacktest.Token(t, "admin-k", auth.RoleAdmin, ws)
	fx := testpeer.NewFixture(t, nil)
	_, handle := createConnection(t, w, ws, admin, "Killed", fx.URL, "streamable-http")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	go func() {
		for i := 0; i < 500; i++ {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				fmt.Printf("ready http://%s %s %s mcp_%s_echo\n", addr, ws, admin, handle)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if err := lambdaapp.Start(context.Background(), env.Stack.Handler, addr, logger, env.Stack.Gateway.CloseAudit); err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(os.Stderr, env.Logs.String()) // the gateway's log lines (lost rows among them)
	st := env.Stack.Gateway.AuditStats()
	fmt.Printf("stats recorded=%d written=%d lost=%d\n", st.Recorded, st.Written, st.Lost)
}

// TestAuditKilledAfterAnswer (issue 31): the stack in a child process over a database
// behind a proxy the test can cut (testpeer.PgWire). N proxied calls, each answered; the
// process is told to stop (SIGTERM) right after the last answer.
//
//   - Database up: the N rows are all committed by the shutdown flush; none lost.
//   - Database cut after the first call (a stopped database): the other N-1 calls are still
//     answered (the answer does not wait on the audit write, and a call no limit applies to
//     makes no statement), and at SIGTERM the rows that cannot be written are counted and
//     each is logged by key: committed + logged = N, logged ≥ N-1 (the first row commits
//     only if its batch ran before the cut). Recorded = written + lost in both.
func TestAuditKilledAfterAnswer(t *testing.T) {
	if os.Getenv(auditHelperEnv) == "1" {
		auditHelper(t)
		return
	}
	t.Parallel()
	pool, direct := dbtest.Fresh(t)
	const n = 40
	for _, cut := range []bool{false, true} {
		wire := testpeer.NewPgWire(t, direct)
		cmd := exec.Command(os.Args[0], "-test.run=^TestAuditKilledAfterAnswer$", "-test.count=1")
		cmd.Env = append(os.Environ(), auditHelperEnv+"=1", "HELPER_DB="+wire.URL)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var logs strings.Builder
		logsDone := make(chan struct{})
		stderr, _ := cmd.StderrPipe()
		go func() { _, _ = io.Copy(&logs, stderr); close(logsDone) }()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		var url, ws, token, tool string
		deadline := time.Now().Add(testpeer.Scaled(120 * time.Second))
		for url == "" && lines.Scan() {
			if f := strings.Fields(lines.Text()); len(f) == 5 && f[0] == "ready" {
				url, ws, token, tool = f[1], f[2], f[3], f[4]
			}
			if time.Now().After(deadline) {
				break
			}
		}
		if url == "" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			<-logsDone
			t.Fatalf("the helper did not start:\n%s", logs.String())
		}
		answered := 0
		for i := range n {
			if cut && i == 1 {
				// After one call: the connection's target (URL, headers) is read from
				// Postgres once per process and cached; a warm process needs no statement.
				wire.Cut()
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"message":"m%d"}}}`, i, tool, i)
			req, _ := http.NewRequest(http.MethodPost, url+"/mcp/"+ws, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(string(b), `"result"`) && !strings.Contains(string(b), `"isError":true`) {
				answered++
			} else {
				t.Errorf("cut=%v: call %d answered %d %s", cut, i, resp.StatusCode, b)
			}
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		var stats string
		for lines.Scan() {
			if strings.HasPrefix(lines.Text(), "stats ") {
				stats = lines.Text()
			}
		}
		_ = cmd.Wait()
		<-logsDone
		if cut {
			wire.Restore()
		}
		var committed int
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM audit_events WHERE workspace_id = $1`, ws).Scan(&committed); err != nil {
			t.Fatal(err)
		}
		logged := strings.Count(logs.String(), `"msg":"audit row not written"`)
		t.Logf("database cut=%v: %d calls answered, %d rows committed, %d logged lost; helper %s", cut, answered, committed, logged, stats)
		switch {
		case answered != n:
			t.Errorf("cut=%v: %d of %d calls answered", cut, answered, n)
		case !cut && (committed != n || logged != 0):
			t.Errorf("database up: %d committed and %d logged lost, want %d and 0", committed, logged, n)
		case cut && (committed+logged != n || logged < n-1):
			t.Errorf("database cut: %d committed and %d logged lost, want %d in all, at least %d logged", committed, logged, n, n-1)
		}
		if want := fmt.Sprintf("stats recorded=%d written=%d lost=%d", n, committed, logged); stats != want {
			t.Errorf("helper %q, want %q", stats, want)
		}
	}
}
