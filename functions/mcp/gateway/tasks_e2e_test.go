package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/mcp/gateway"
	"github.com/agentpack/gateway/functions/mcp/gateway/tasks"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
)

// taskEnv is a stack with a RawUpstream (its tools/call waits arguments.delayMs) installed
// in workspace ws, and a second workspace.
type taskEnv struct {
	env           *stacktest.Env
	ws, ws2       string
	admin, member string
	other         string // a member of ws2
	tool, connID  string
	up            *testpeer.RawUpstream
	hdr           map[string]string
}

func newTaskEnv(t *testing.T, callTimeout time.Duration) *taskEnv {
	t.Helper()
	var o *stacktest.Options
	if callTimeout > 0 {
		o = &stacktest.Options{Stack: &stack.Options{Gateway: func(g *gateway.Options) { g.CallTimeout = callTimeout }}}
	}
	env := stacktest.New(t, o)
	ws, _, _ := env.Workspace(t, "Tasks")
	ws2, _, _ := env.Workspace(t, "Other")
	e := &taskEnv{env: env, ws: ws, ws2: ws2,
		admin:  stacktest.Token(t, "alice", auth.RoleAdmin, ws),
		member: stacktest.Token(t, "mallory", auth.RoleMember, ws),
		other:  stacktest.Token(t, "oscar", auth.RoleAdmin, ws2),
		up:     testpeer.NewRawUpstream(t, false),
		hdr:    map[string]string{"Mcp-Protocol-Version": "2025-11-25"}}
	c := env.Connection(t, stacktest.Admin("alice", ws), connections.CreateInput{Name: "Long", URL: e.up.URL, WorkspaceID: &ws}).Connection
	e.tool, e.connID = "mcp_"+c.Handle+"_report", c.ID
	return e
}

// rpc posts one request to ws's aggregate endpoint as token and returns the raw result or
// the error code.
func (e *taskEnv) rpc(t *testing.T, token, method, params string) (json.RawMessage, int) {
	t.Helper()
	resp, body := e.env.RPC(t, "/mcp/"+e.wsOf(token), token, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`, e.hdr)
	var m struct {
		Result json.RawMessage
		Error  *struct{ Code int }
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &m) != nil {
		t.Fatalf("%s: %d %s", method, resp.StatusCode, body)
	}
	if m.Error != nil {
		return nil, m.Error.Code
	}
	return m.Result, 0
}

func (e *taskEnv) wsOf(token string) string {
	if token == e.other {
		return e.ws2
	}
	return e.ws
}

type wireTask struct {
	TaskID, Status, StatusMessage, CreatedAt, LastUpdatedAt string
	TTL, PollInterval                                       int64
}

func (e *taskEnv) create(t *testing.T, token, tool, args string, ttl int) wireTask {
	t.Helper()
	res, code := e.rpc(t, token, "tools/call", `{"name":"`+tool+`","arguments":`+args+`,"task":{"ttl":`+strconv.Itoa(ttl)+`}}`)
	var ct struct{ Task wireTask }
	if code != 0 || json.Unmarshal(res, &ct) != nil || ct.Task.TaskID == "" {
		t.Fatalf("task-augmented call: code %d, %s", code, res)
	}
	return ct.Task
}

func (e *taskEnv) get(t *testing.T, token, id string) (wireTask, int) {
	t.Helper()
	res, code := e.rpc(t, token, "tasks/get", `{"taskId":"`+id+`"}`)
	var w wireTask
	_ = json.Unmarshal(res, &w)
	return w, code
}

func (e *taskEnv) waitStatus(t *testing.T, id, want string, within time.Duration) wireTask {
	t.Helper()
	within = testpeer.Scaled(within)
	deadline := time.Now().Add(within)
	for {
		w, code := e.get(t, e.admin, id)
		if code == 0 && w.Status == want {
			return w
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: status %q (code %d), want %q within %v", id, w.Status, code, want, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *taskEnv) auditRows(t *testing.T, tool string) int {
	t.Helper()
	var n int
	e.env.FlushAudit(t)
	if err := e.env.Pool.QueryRow(t.Context(), `SELECT count(*) FROM audit_events WHERE tool = $1`, tool).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTasks: a task-augmented tools/call of a proxied tool answers at once with a working
// task; tasks/get shows working then completed; tasks/result is the upstream's result byte
// for byte; one audit row. Cancel while working ends the upstream call; a failing
// upstream gives failed with the envelope and one audit row (outcome unavailable); built-ins run as complete tasks; another
// principal's or workspace's task answers like an unknown id; an expired task is gone and
// the cleanup deletes it; capabilities and tool execution hints are advertised from
// 2025-11-25 on.
func TestTasks(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 0)
	t.Run("completes", func(t *testing.T) {
		// "working" proves the answer did not wait for the upstream's 2.5 s (no clock needed).
		tk := e.create(t, e.admin, e.tool, `{"delayMs":2500,"q":"a"}`, 60000)
		if tk.Status != "working" || tk.TTL != 60000 || tk.PollInterval <= 0 || len(tk.TaskID) < 20 {
			t.Fatalf("created %+v", tk)
		}
		if w, _ := e.get(t, e.admin, tk.TaskID); w.Status != "working" {
			t.Fatalf("tasks/get right after creation: %+v", w)
		}
		e.waitStatus(t, tk.TaskID, "completed", 15*time.Second)
		res, code := e.rpc(t, e.admin, "tasks/result", `{"taskId":"`+tk.TaskID+`"}`)
		if code != 0 || string(res) != testpeer.RawCallResult {
			t.Fatalf("tasks/result: code %d\n got %s\nwant %s", code, res, testpeer.RawCallResult)
		}
		if n := e.auditRows(t, e.tool); n != 1 {
			t.Errorf("%d audit rows, want 1", n)
		}
	})
	t.Run("tasks/result waits for the outcome", func(t *testing.T) {
		tk := e.create(t, e.admin, e.tool, `{"delayMs":1500}`, 60000)
		res, code := e.rpc(t, e.admin, "tasks/result", `{"taskId":"`+tk.TaskID+`"}`)
		if code != 0 || string(res) != testpeer.RawCallResult {
			t.Fatalf("tasks/result on a working task: code %d %s", code, res)
		}
	})
	t.Run("cancel while working", func(t *testing.T) {
		before := len(e.up.Received("notifications/cancelled"))
		calls := len(e.up.Received("tools/call"))
		tk := e.create(t, e.admin, e.tool, `{"delayMs":60000}`, 60000)
		// Cancel once the worker's call is upstream, however loaded the machine is.
		for deadline := time.Now().Add(20 * time.Second); len(e.up.Received("tools/call")) == calls; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the task's call never reached the upstream")
			}
		}
		res, code := e.rpc(t, e.admin, "tasks/cancel", `{"taskId":"`+tk.TaskID+`"}`)
		var w wireTask
		_ = json.Unmarshal(res, &w)
		if code != 0 || w.Status != "cancelled" {
			t.Fatalf("tasks/cancel: %d %s", code, res)
		}
		deadline := time.Now().Add(testpeer.Scaled(15 * time.Second))
		for len(e.up.Received("notifications/cancelled")) == before {
			if time.Now().After(deadline) {
				t.Fatal("the upstream call was not cancelled")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, code := e.rpc(t, e.admin, "tasks/result", `{"taskId":"`+tk.TaskID+`"}`); code != -32602 {
			t.Errorf("tasks/result of a cancelled task: code %d", code)
		}
		if w, _ := e.get(t, e.admin, tk.TaskID); w.Status != "cancelled" {
			t.Errorf("after cancel: %+v", w)
		}
	})
	t.Run("failing upstream", func(t *testing.T) {
		dead := testpeer.NewRawUpstream(t, false)
		c := e.env.Connection(t, stacktest.Admin("alice", e.ws), connections.CreateInput{Name: "Dead", URL: dead.URL, WorkspaceID: &e.ws}).Connection
		dead.Server.Close()
		tk := e.create(t, e.admin, "mcp_"+c.Handle+"_report", `{}`, 60000)
		w := e.waitStatus(t, tk.TaskID, "failed", 15*time.Second)
		if w.StatusMessage == "" {
			t.Error("failed task without statusMessage")
		}
		res, code := e.rpc(t, e.admin, "tasks/result", `{"taskId":"`+tk.TaskID+`"}`)
		if code != 0 || !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), "UPSTREAM_UNAVAILABLE") {
			t.Errorf("tasks/result of the failed task: %d %s", code, res)
		}
		// The failed call is audited with its outcome, as a synchronous one is.
		e.env.FlushAudit(t)
		var outcomes []string
		if err := e.env.Pool.QueryRow(t.Context(), `SELECT array_agg(outcome) FROM audit_events WHERE tool = $1`,
			"mcp_"+c.Handle+"_report").Scan(&outcomes); err != nil || len(outcomes) != 1 || outcomes[0] != "unavailable" {
			t.Errorf("audit outcomes %v, %v; want one unavailable", outcomes, err)
		}
	})
	t.Run("upstream runs tasks itself", func(t *testing.T) {
		native := testpeer.NewRawUpstream(t, false).WithTasks()
		c := e.env.Connection(t, stacktest.Admin("alice", e.ws), connections.CreateInput{Name: "Native", URL: native.URL, WorkspaceID: &e.ws}).Connection
		tool := "mcp_" + c.Handle + "_report"
		tk := e.create(t, e.admin, tool, `{"delayMs":1500}`, 60000)
		calls := native.Received("tools/call")
		if len(calls) != 1 || !strings.Contains(string(calls[0].Params), `"task"`) || strings.HasPrefix(tk.TaskID, "up-task") {
			t.Fatalf("task %+v; upstream received %d calls: %v", tk, len(calls), calls)
		}
		if w, _ := e.get(t, e.admin, tk.TaskID); w.Status != "working" || w.TaskID != tk.TaskID {
			t.Fatalf("tasks/get: %+v", w)
		}
		e.waitStatus(t, tk.TaskID, "completed", 10*time.Second)
		res, code := e.rpc(t, e.admin, "tasks/result", `{"taskId":"`+tk.TaskID+`"}`)
		if code != 0 || string(res) != testpeer.RawCallResult {
			t.Fatalf("tasks/result: %d %s", code, res)
		}
		if n := e.auditRows(t, tool); n != 1 {
			t.Errorf("%d audit rows, want 1", n)
		}
		if gets := native.Received("tasks/get"); len(gets) == 0 || !strings.Contains(string(gets[0].Params), `"up-task-`) {
			t.Errorf("tasks/get did not reach the upstream under its own id: %v", gets)
		}
		tk2 := e.create(t, e.admin, tool, `{"delayMs":30000}`, 60000)
		res, code = e.rpc(t, e.admin, "tasks/cancel", `{"taskId":"`+tk2.TaskID+`"}`)
		if code != 0 || !strings.Contains(string(res), `"cancelled"`) || len(native.Received("tasks/cancel")) != 1 {
			t.Errorf("tasks/cancel: %d %s", code, res)
		}
	})
	t.Run("upstream ttl null", func(t *testing.T) {
		// Issue 34: the upstream gives its task an unlimited lifetime (ttl null). The
		// caller asked 60000; the create answer, tasks/get, tasks/list and tasks/cancel show
		// the upstream's null, not a number; the row still expires (the gateway's bound).
		native := testpeer.NewRawUpstream(t, false).WithTasks()
		native.TaskTTLNull = true
		c := e.env.Connection(t, stacktest.Admin("alice", e.ws), connections.CreateInput{Name: "Forever", URL: native.URL, WorkspaceID: &e.ws}).Connection
		tool := "mcp_" + c.Handle + "_report"
		res, code := e.rpc(t, e.admin, "tools/call", `{"name":"`+tool+`","arguments":{"delayMs":30000},"task":{"ttl":60000}}`)
		var ct struct {
			Task map[string]json.RawMessage
		}
		if code != 0 || json.Unmarshal(res, &ct) != nil {
			t.Fatalf("task-augmented call: %d %s", code, res)
		}
		if got := string(ct.Task["ttl"]); got != "null" {
			t.Errorf("create answer ttl %s, want null: %s", got, res)
		}
		id := ""
		_ = json.Unmarshal(ct.Task["taskId"], &id)
		calls := native.Received("tools/call")
		if len(calls) != 1 || !strings.Contains(string(calls[0].Params), `"task":{"ttl":60000}`) {
			t.Errorf("upstream received %v, want the caller's task ttl 60000", calls)
		}
		for _, m := range []struct{ method, params string }{
			{"tasks/get", `{"taskId":"` + id + `"}`},
			{"tasks/list", `{}`},
			{"tasks/cancel", `{"taskId":"` + id + `"}`},
		} {
			res, code := e.rpc(t, e.admin, m.method, m.params)
			// Members in key order (the gateway writes a map): the task's own ttl is next to its id.
			if code != 0 || !bytes.Contains(res, []byte(`"taskId":"`+id+`","ttl":null`)) {
				t.Errorf("%s: %d %s, want ttl null", m.method, code, res)
			}
		}
		var unlimited, expires bool
		if err := e.env.Pool.QueryRow(t.Context(), `SELECT ttl_unlimited, expires_at <= now() + interval '1 minute' FROM mcp_tasks WHERE id = $1`, id).Scan(&unlimited, &expires); err != nil || !unlimited || !expires {
			t.Errorf("stored row: ttl_unlimited %v, expires within the caller's 60 s %v (%v)", unlimited, expires, err)
		}
	})
	t.Run("built-in", func(t *testing.T) {
		tk := e.create(t, e.member, "agentpack_toolsets_list", `{}`, 60000)
		if tk.Status != "completed" {
			t.Fatalf("built-in task: %+v", tk)
		}
		res, code := e.rpc(t, e.member, "tasks/result", `{"taskId":"`+tk.TaskID+`"}`)
		if code != 0 || !strings.Contains(string(res), `"ok":true`) {
			t.Errorf("built-in tasks/result: %d %s", code, res)
		}
	})
	t.Run("isolation", func(t *testing.T) {
		tk := e.create(t, e.admin, e.tool, `{"delayMs":1500}`, 60000)
		for _, token := range []string{e.member, e.other} {
			for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
				_, code := e.rpc(t, token, method, `{"taskId":"`+tk.TaskID+`"}`)
				_, unknown := e.rpc(t, token, method, `{"taskId":"AAAAAAAAAAAAAAAAAAAAAA"}`)
				if code == 0 || code != unknown {
					t.Errorf("%s of another's task: code %d, an unknown id gives %d", method, code, unknown)
				}
			}
			res, _ := e.rpc(t, token, "tasks/list", `{}`)
			if strings.Contains(string(res), tk.TaskID) {
				t.Errorf("tasks/list of another principal shows the task: %s", res)
			}
		}
		res, _ := e.rpc(t, e.admin, "tasks/list", `{}`)
		if !strings.Contains(string(res), tk.TaskID) {
			t.Errorf("the owner's tasks/list lacks the task: %s", res)
		}
		// The foreign tasks/cancel calls above touched nothing: the owner's task completes.
		e.waitStatus(t, tk.TaskID, "completed", 10*time.Second)
		if _, code := e.rpc(t, e.admin, "tasks/cancel", `{"taskId":"`+tk.TaskID+`"}`); code != -32602 {
			t.Errorf("tasks/cancel of a completed task: code %d, want -32602", code)
		}
	})
	t.Run("ttl is clamped", func(t *testing.T) {
		for ttl, want := range map[string]int64{"1e13": 86_400_000, "0.5": 1, "1500": 1500} {
			res, code := e.rpc(t, e.admin, "tools/call", `{"name":"agentpack_toolsets_list","arguments":{},"task":{"ttl":`+ttl+`}}`)
			var ct struct{ Task wireTask }
			if code != 0 || json.Unmarshal(res, &ct) != nil || ct.Task.TTL != want {
				t.Errorf("ttl %s: code %d task %+v, want ttl %d", ttl, code, ct.Task, want)
			}
		}
	})
	t.Run("no task before 2025-11-25", func(t *testing.T) {
		native := testpeer.NewRawUpstream(t, false).WithTasks()
		c := e.env.Connection(t, stacktest.Admin("alice", e.ws), connections.CreateInput{Name: "Old", URL: native.URL, WorkspaceID: &e.ws}).Connection
		resp, body := e.env.RPC(t, "/mcp/"+e.ws, e.admin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_`+c.Handle+`_report","arguments":{},"task":{}}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
		if string(resultOf(t, resp, body)) != testpeer.RawCallResult {
			t.Errorf("a 2025-06-18 call with a task member: %s", body)
		}
		if calls := native.Received("tools/call"); len(calls) != 1 || strings.Contains(string(calls[0].Params), `"task"`) {
			t.Errorf("the upstream received %v", calls)
		}
	})
	t.Run("expiry and cleanup", func(t *testing.T) {
		tk := e.create(t, e.admin, "agentpack_toolsets_list", `{}`, 1)
		time.Sleep(50 * time.Millisecond)
		if _, code := e.get(t, e.admin, tk.TaskID); code != -32602 {
			t.Errorf("expired task: code %d, want unknown", code)
		}
		n, err := db.TasksDeleteExpired(t.Context(), e.env.Pool)
		if err != nil || n < 1 {
			t.Errorf("cleanup deleted %d (%v)", n, err)
		}
	})
	t.Run("capabilities", func(t *testing.T) {
		for _, v := range []struct {
			version string
			want    bool
		}{{"2025-11-25", true}, {"2025-06-18", false}} {
			resp, body := e.env.RPC(t, "/mcp/"+e.ws, e.admin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+v.version+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, map[string]string{"Mcp-Protocol-Version": v.version})
			if got := strings.Contains(string(resultOf(t, resp, body)), `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`); got != v.want {
				t.Errorf("%s: tasks capability advertised %v, want %v: %s", v.version, got, v.want, body)
			}
		}
		res, _ := e.rpc(t, e.admin, "tools/list", `{}`)
		var l struct {
			Tools []struct {
				Name      string
				Execution struct{ TaskSupport string }
			}
		}
		_ = json.Unmarshal(res, &l)
		for _, tool := range l.Tools {
			if tool.Execution.TaskSupport != "optional" {
				t.Errorf("%s: execution.taskSupport %q", tool.Name, tool.Execution.TaskSupport)
			}
		}
	})
}

// TestTaskStartFails: when the worker cannot be started (in Lambda: the asynchronous
// invocation is refused), the task is answered at once as failed, with a reason and an
// errorId, and nothing reaches the upstream.
func TestTaskStartFails(t *testing.T) {
	t.Parallel()
	env := stacktest.New(t, &stacktest.Options{Stack: &stack.Options{Gateway: func(g *gateway.Options) {
		g.StartTask = func(context.Context, tasks.Job) error { return errors.New("invoke refused") }
	}}})
	ws, _, _ := env.Workspace(t, "NoStart")
	admin := stacktest.Token(t, "alice", auth.RoleAdmin, ws)
	up := testpeer.NewRawUpstream(t, false)
	c := env.Connection(t, stacktest.Admin("alice", ws), connections.CreateInput{Name: "Up", URL: up.URL, WorkspaceID: &ws}).Connection
	resp, body := env.RPC(t, "/mcp/"+ws, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_`+c.Handle+`_report","arguments":{},"task":{}}}`,
		map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	var ct struct{ Task wireTask }
	if err := json.Unmarshal(resultOf(t, resp, body), &ct); err != nil || ct.Task.Status != "failed" || ct.Task.StatusMessage == "" {
		t.Fatalf("task %+v (%v): %s", ct.Task, err, body)
	}
	resp, body = env.RPC(t, "/mcp/"+ws, admin, `{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"`+ct.Task.TaskID+`"}}`,
		map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "could not be started") || !strings.Contains(string(body), "errorId") {
		t.Errorf("tasks/result: %s", body)
	}
	if n := len(up.Received("tools/call")); n != 0 {
		t.Errorf("%d calls reached the upstream", n)
	}
}

// TestSyncBudget: a plain tools/call that runs past the synchronous budget answers an
// isError envelope (UPSTREAM_TIMEOUT, naming tasks) soon after the budget, long before the
// upstream would answer —
// never a gateway 504.
func TestSyncBudget(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2*time.Second)
	start := time.Now()
	res, code := e.rpc(t, e.admin, "tools/call", `{"name":"`+e.tool+`","arguments":{"delayMs":40000}}`)
	d := time.Since(start)
	if code != 0 || !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), "UPSTREAM_TIMEOUT") || !strings.Contains(string(res), "task") {
		t.Fatalf("code %d %s", code, res)
	}
	if max := 2*time.Second + testpeer.Scaled(10*time.Second); d > max { // the upstream would answer after 40 s
		t.Errorf("answered after %v, want within the 2 s budget (at most %v with a loaded machine's slack)", d, max)
	}
}

// TestTasksTypeScriptClient: the official TypeScript SDK's task API against an upstream tool
// that takes twice the gateway's synchronous budget (3 s here; 25 s deployed, under API
// Gateway's 29 s): the task is created at once, polling shows working then completed, the
// result is the upstream's, and one audit row is written.
func TestTasksTypeScriptClient(t *testing.T) {
	t.Parallel()
	const budget = 3 * time.Second
	e := newTaskEnv(t, budget)
	plain := strings.TrimSuffix(e.tool, "report") + "plain"
	res := testpeer.TSClient(t, testpeer.TSClientOptions{URL: e.env.URL + "/mcp/" + e.ws, Authorization: "Bearer " + e.admin,
		Timeout: 120 * time.Second,
		Plan:    []map[string]any{{"op": "callToolTask", "name": plain, "arguments": map[string]any{"delayMs": 2 * budget.Milliseconds()}, "ttl": 120000}}})
	if res.ConnectError != nil || res.Steps[0].Error != nil {
		t.Fatalf("TS client: %+v %+v", res.ConnectError, res.Steps[0].Error)
	}
	var out struct {
		Messages []struct {
			Type   string
			AtMs   int `json:"atMs"`
			Task   wireTask
			Result json.RawMessage
			Error  *testpeer.TSError
		}
	}
	_ = json.Unmarshal(res.Steps[0].Result, &out)
	msgs := out.Messages
	if len(msgs) < 3 || msgs[0].Type != "taskCreated" || msgs[0].AtMs > 3000 {
		t.Fatalf("stream %+v", msgs)
	}
	sawWorking := false
	for _, m := range msgs {
		sawWorking = sawWorking || (m.Type == "taskStatus" && m.Task.Status == "working")
	}
	last := msgs[len(msgs)-1]
	prev := msgs[len(msgs)-2]
	if !sawWorking || prev.Type != "taskStatus" || prev.Task.Status != "completed" || last.Type != "result" || int64(last.AtMs) < 2*budget.Milliseconds() {
		t.Fatalf("stream ends with %+v (error %+v) after %+v", last, last.Error, prev)
	}
	if !jsonEqual(t, last.Result, []byte(testpeer.RawPlainResult)) {
		t.Errorf("result %s, want the upstream's %s", last.Result, testpeer.RawPlainResult)
	}
	if n := e.auditRows(t, plain); n != 1 {
		t.Errorf("%d audit rows, want 1", n)
	}
}
