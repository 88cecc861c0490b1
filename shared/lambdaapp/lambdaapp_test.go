package lambdaapp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
)

// helperEnv makes the test binary act as a function process (helperMain) instead of
// running the tests.
const helperEnv = "LAMBDAAPP_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		helperMain()
		return
	}
	os.Exit(m.Run())
}

// helperMain is a warm function process: it opens an upstream MCP session (the URL in
// FIXTURE_URL), prints "ready", and serves (locally on ADDR) with lambdaapp.Start and a shutdown hook that
// closes the pool (as functions/mcp does), printing "hook done" when it returns.
func helperMain() {
	ctx := context.Background()
	pool := mcpclient.New(&mcpclient.Options{Guard: urlguard.New(&urlguard.Options{AllowPrivate: true})})
	if _, _, err := pool.ListTools(ctx, mcpclient.Target{ConnectionID: "c", URL: os.Getenv("FIXTURE_URL")}); err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	err := lambdaapp.Start(ctx, http.NotFoundHandler(), os.Getenv("ADDR"), logger, func(context.Context) {
		_ = pool.Close()
		fmt.Println("hook done")
	})
	fmt.Println("start returned:", err)
}

// TestShutdownEndsUpstreamSessions (issue 14 item 6): when a warm process is told to stop,
// the sessions it opened upstream are ended with an HTTP DELETE that reaches the upstream —
// locally on SIGTERM, and under Lambda on the SIGTERM that Lambda sends to a function with a
// registered extension. The Lambda runtime and extensions APIs are a small fake here (the
// Lambda service's shutdown phase cannot run on this machine); it checks that the process
// registers the extension that makes Lambda send SIGTERM.
func TestShutdownEndsUpstreamSessions(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"local", "lambda"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			f := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: testpeer.ModeStateful})
			env := append(os.Environ(), helperEnv+"=1", "FIXTURE_URL="+f.URL)
			var registered atomic.Int32
			if mode == "lambda" {
				api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/2020-01-01/extension/register" {
						registered.Add(1)
						w.Header().Set("Lambda-Extension-Identifier", "ext-1")
						return
					}
					<-r.Context().Done() // /next: no event and no invocation ever comes
				}))
				t.Cleanup(api.Close)
				env = append(env, "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(api.URL, "http://"))
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			l.Close()
			if mode == "local" {
				env = append(env, "AWS_LAMBDA_RUNTIME_API=", "ADDR="+addr)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = env
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			lines := make(chan string, 16)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			wait := func(want string) {
				t.Helper()
				deadline := time.After(60 * time.Second) // a readiness wait: ends at the line, not the deadline
				for {
					select {
					case l, ok := <-lines:
						if !ok {
							t.Fatalf("helper exited before %q", want)
						}
						if l == want {
							return
						}
						if strings.HasPrefix(l, "error:") {
							t.Fatal(l)
						}
					case <-deadline:
						t.Fatalf("helper did not print %q", want)
					}
				}
			}
			wait("ready")
			sid := ""
			for _, r := range f.Requests() {
				if s := r.Header.Get("Mcp-Session-Id"); s != "" {
					sid = s
				}
			}
			if sid == "" {
				t.Fatal("no session was opened")
			}
			if mode == "lambda" {
				for i := 0; registered.Load() == 0 && i < 200; i++ {
					time.Sleep(10 * time.Millisecond)
				}
				if registered.Load() != 1 {
					t.Fatalf("the process registered %d extensions, want 1 (without one Lambda sends no SIGTERM)", registered.Load())
				}
			} else {
				// Start installs its signal handler before it listens.
				for i := 0; ; i++ {
					c, err := net.Dial("tcp", addr)
					if err == nil {
						c.Close()
						break
					}
					if i == 500 {
						t.Fatalf("the helper does not listen on %s", addr)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			if n := f.CountRequests(http.MethodDelete, ""); n != 0 {
				t.Fatalf("%d DELETEs before the signal", n)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			wait("hook done")
			deletes := 0
			for _, r := range f.Requests() {
				if r.Method == http.MethodDelete && r.Header.Get("Mcp-Session-Id") == sid {
					deletes++
				}
			}
			if deletes != 1 {
				t.Errorf("%d DELETEs of the session reached the upstream, want 1", deletes)
			}
		})
	}
}
