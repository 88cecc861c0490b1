package testpeer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentpack/gateway/shared/reporoot"
)

// RequirePeersEnv names the environment variable that turns "npm peers missing" from a skip
// into a test failure (`make test` sets REQUIRE_PEERS=1).
const RequirePeersEnv = "REQUIRE_PEERS"

// peerStartTimeout bounds how long a node peer may take to print its listening line
// (scaled by TEST_TIMEOUT_SCALE): a second or two on an idle machine, far more when the
// suite's own builds load it.
const peerStartTimeout = 60 * time.Second

// RepoRoot returns the repository root: the nearest directory at or above the working
// directory (a test runs in its package directory) whose go.mod declares this module
// (reporoot.Find). It fails the test if there is none.
func RepoRoot(t TB) string {
	t.Helper()
	root, err := reporoot.Find(".")
	if err != nil {
		t.Fatalf("testpeer: %v", err)
	}
	return root
}

// NPMDir returns test/npm under the repository root, after checking that its node_modules
// is installed and node is on PATH. When either is missing the test is skipped with a
// message, or failed when REQUIRE_PEERS=1.
func NPMDir(t TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "test", "npm")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol")); err != nil {
		missingPeer(t, "test/npm/node_modules is not installed: run `make npm-deps`")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missingPeer(t, "node is not on PATH")
	}
	return dir
}

func missingPeer(t TB, why string) {
	t.Helper()
	if os.Getenv(RequirePeersEnv) == "1" {
		t.Fatalf("testpeer: %s (%s=1)", why, RequirePeersEnv)
	}
	t.Skipf("testpeer: %s; skipping (set %s=1 to fail instead)", why, RequirePeersEnv)
}

var listeningLine = regexp.MustCompile(`bind-loopback: listening on (127\.0\.0\.1:\d+)`)

// Everything starts @modelcontextprotocol/server-everything (pinned in test/npm) with
// `node --require bind-loopback.cjs <entry> <mode>` and PORT=0, so it binds a free port on
// 127.0.0.1; mode is "streamable" (its streamableHttp transport, stateful, endpoint /mcp) or
// "sse" (legacy HTTP+SSE, endpoint /sse). It returns the MCP endpoint URL, e.g.
// http://127.0.0.1:PORT/mcp, once the server listens. t.Cleanup kills the process group.
// Missing node_modules: skip, or fail with REQUIRE_PEERS=1.
func Everything(t TB, mode string) string {
	t.Helper()
	dir, entry, arg, path := everythingArgs(t, mode)
	addr := StartNode(t, dir, []string{"PORT=0"}, entry, arg)
	return "http://" + addr + path
}

// everythingArgs resolves server-everything's npm folder, entry script, transport argument
// and endpoint path for mode ("streamable" or "sse").
func everythingArgs(t TB, mode string) (dir, entry, arg, path string) {
	t.Helper()
	switch mode {
	case "streamable", "streamable-http", "streamableHttp":
		arg, path = "streamableHttp", "/mcp"
	case "sse":
		arg, path = "sse", "/sse"
	default:
		t.Fatalf("testpeer: server-everything mode %q, want streamable or sse", mode)
	}
	dir = NPMDir(t)
	entry = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	return dir, entry, arg, path
}

// StartNode runs `node --require <dir>/bind-loopback.cjs args...` in dir with the extra
// environment env, waits (≤ 60 s, scaled) until the preload reports that a server listens, and
// returns its "127.0.0.1:PORT". The process runs in its own process group, which t.Cleanup
// kills (SIGKILL) and reaps. The last lines of its output are logged if it fails to start.
func StartNode(t TB, dir string, env []string, args ...string) string {
	t.Helper()
	addr, _ := startNode(t, dir, env, args...)
	return addr
}

// StartNodeBinary is StartNode with the node binary named by bin (a path, e.g. test/npm's
// pinned Node 22, whose type stripping runs a .mts file directly) instead of the node on
// PATH.
func StartNodeBinary(t TB, bin, dir string, env []string, args ...string) string {
	t.Helper()
	addr, _ := startNodeBinary(t, bin, dir, env, args...)
	return addr
}

// startNode is StartNode that also returns a stop function (SIGKILL to the process group,
// then reap; safe to call more than once, and called by t.Cleanup anyway).
func startNode(t TB, dir string, env []string, args ...string) (string, func()) {
	t.Helper()
	return startNodeBinary(t, "node", dir, env, args...)
}

func startNodeBinary(t TB, bin, dir string, env []string, args ...string) (string, func()) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--require", filepath.Join(dir, "bind-loopback.cjs")}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &tail{max: 40}
	cmd.Stdout = out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatalf("testpeer: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testpeer: starting node: %v", err)
	}
	pid := cmd.Process.Pid
	var stopOnce sync.Once
	stop := func() {
		stopOnce.Do(func() {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)

	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			out.add(line)
			if m := listeningLine.FindStringSubmatch(line); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case addr, ok := <-found:
		if ok {
			return addr, stop
		}
		stop()
		t.Fatalf("testpeer: node %s exited before listening; output:\n%s", strings.Join(args, " "), out)
	case <-time.After(Scaled(peerStartTimeout)):
		stop()
		t.Fatalf("testpeer: node %s did not listen within %s; output:\n%s", strings.Join(args, " "), Scaled(peerStartTimeout), out)
	}
	return "", stop
}

// TSClientOptions configures TSClient.
type TSClientOptions struct {
	URL             string            // MCP endpoint (required)
	Authorization   string            // Authorization header value, e.g. "Bearer …" (optional)
	Headers         map[string]string // other request headers (optional)
	ProtocolVersion string            // version to offer in initialize ("" = the SDK's latest)
	Plan            []map[string]any  // steps; nil = [{"op":"listTools"}] (see ts-client.mjs)
	Timeout         time.Duration     // whole run; 0 = 60 s
}

// TSClientResult is ts-client.mjs's output.
type TSClientResult struct {
	ServerInfo      map[string]any `json:"serverInfo"`
	ProtocolVersion string         `json:"protocolVersion"`
	ConnectError    *TSError       `json:"connectError,omitempty"`
	Steps           []TSStep       `json:"steps"`
}

// TSStep is the outcome of one plan step: Result or Error.
type TSStep struct {
	Op     string          `json:"op"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *TSError        `json:"error,omitempty"`
}

// TSError is a JSON-RPC (or transport) error as the TypeScript SDK reported it.
type TSError struct {
	Code    *int            `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
	// MCPError is true for a JSON-RPC error (the SDK's McpError), false for a transport
	// error (e.g. an HTTP status the SDK did not read as a JSON-RPC answer).
	MCPError bool `json:"mcpError"`
}

// TSClient runs the official TypeScript SDK client (test/npm/ts-client.mjs: Client +
// StreamableHTTPClientTransport) against opts.URL and returns its parsed output. A failed
// connect is reported in ConnectError, not as a test failure; a crash or unparsable output
// fails the test. Skips like Everything when the npm peers are missing.
func TSClient(t TB, opts TSClientOptions) *TSClientResult {
	t.Helper()
	dir := NPMDir(t)
	plan := opts.Plan
	if plan == nil {
		plan = []map[string]any{{"op": "listTools"}}
	}
	planJSON, err := json.Marshal(plan)
	if err != nil {
		t.Fatalf("testpeer: plan: %v", err)
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	timeout = Scaled(timeout)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "ts-client.mjs"), opts.URL, string(planJSON))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MCP_URL=", "MCP_PLAN=")
	if opts.Authorization != "" {
		cmd.Env = append(cmd.Env, "MCP_AUTHORIZATION="+opts.Authorization)
	}
	if len(opts.Headers) > 0 {
		h, _ := json.Marshal(opts.Headers)
		cmd.Env = append(cmd.Env, "MCP_HEADERS="+string(h))
	}
	if opts.ProtocolVersion != "" {
		cmd.Env = append(cmd.Env, "MCP_PROTOCOL_VERSION="+opts.ProtocolVersion)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var exitErr *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &exitErr) && exitErr.ExitCode() == 1) {
		t.Fatalf("testpeer: ts-client: %v\nstderr:\n%s", runErr, stderr.String())
	}
	var res TSClientResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("testpeer: ts-client output is not JSON (%v):\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return &res
}

// tail keeps the last max lines written to it, for diagnostics.
type tail struct {
	mu    sync.Mutex
	max   int
	lines []string
	part  string
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	s := w.part + string(p)
	parts := strings.Split(s, "\n")
	w.part = parts[len(parts)-1]
	w.mu.Unlock()
	for _, l := range parts[:len(parts)-1] {
		w.add(l)
	}
	return len(p), nil
}

func (w *tail) add(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, line)
	if len(w.lines) > w.max {
		w.lines = w.lines[len(w.lines)-w.max:]
	}
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprint(strings.Join(w.lines, "\n"))
}
