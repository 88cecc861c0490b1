package gateway_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/testpeer"
)

// extToolsList is the tools/list of the extension tests' upstream: a task-supporting tool
// ("report", waits arguments.delayMs), one that requires tasks, one without a hint, and
// two task-supporting tools that end with an isError result and a JSON-RPC error.
const extToolsList = `{"tools":[
 {"name":"report","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},
 {"name":"must","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},
 {"name":"plain","inputSchema":{"type":"object"}},
 {"name":"oops","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},
 {"name":"boom","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`

const (
	extOopsResult = `{"content":[{"type":"text","text":"the tool failed"}],"isError":true}`
	extBoomError  = `{"code":-32050,"message":"upstream exploded","data":{"why":"test"}}`
)

// completed is the upstream's result res as a CompletedTask inlines it at 2026-07-28: with
// resultType "complete", as the synchronous answer carries it.
func completed(res string) []byte {
	return []byte(strings.Replace(res, "{", `{"resultType":"complete",`, 1))
}

// extEnv is a stack with extToolsList's upstream installed in a workspace, speaking
// 2026-07-28.
type extEnv struct {
	env           *stacktest.Env
	ws            string
	admin, member string
	prefix        string // "mcp_<handle>_"
	up            *testpeer.RawUpstream
}

func newExtEnv(t *testing.T) *extEnv {
	t.Helper()
	env := stacktest.New(t, nil)
	ws, _, _ := env.Workspace(t, "TasksExt")
	e := &extEnv{env: env, ws: ws,
		admin:  stacktest.Token(t, "alice", auth.RoleAdmin, ws),
		member: stacktest.Token(t, "mallory", auth.RoleMember, ws),
		up:     testpeer.NewRawUpstream(t, false)}
	e.up.ToolsList = extToolsList
	e.up.CallResults = map[string]string{"oops": extOopsResult}
	e.up.CallErrors = map[string]string{"boom": extBoomError}
	e.prefix = e.install(t, "Ext", e.up)
	return e
}

// install creates a workspace connection to up and returns its tools' name prefix.
func (e *extEnv) install(t *testing.T, name string, up *testpeer.RawUpstream) string {
	t.Helper()
	c := e.env.Connection(t, stacktest.Admin("alice", e.ws), connections.CreateInput{Name: name, URL: up.URL, WorkspaceID: &e.ws}).Connection
	return "mcp_" + c.Handle + "_"
}

// extAnswer is one 2026-07-28 answer: HTTP status, result members, or the error.
type extAnswer struct {
	status int
	raw    json.RawMessage
	result map[string]json.RawMessage
	err    *struct {
		Code int
		Data json.RawMessage
	}
}

func (a extAnswer) str(k string) string {
	var s string
	_ = json.Unmarshal(a.result[k], &s)
	return s
}

// rpc posts one 2026-07-28 request as token: params get the per-request _meta (the tasks
// extension declared when declare is set) and the headers are the ones the revision
// requires, Mcp-Name being name ("" sends none).
func (e *extEnv) rpc(t *testing.T, token, method, name, params string, declare bool) extAnswer {
	t.Helper()
	caps := `{}`
	if declare {
		caps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	params = strings.Replace(params, "{", "{"+meta+",", 1)
	params = strings.Replace(params, ",}", "}", 1)
	hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		hdr["Mcp-Name"] = name
	}
	resp, body := e.env.RPC(t, "/mcp/"+e.ws, token, `{"jsonrpc":"2.0","id":"r-7","method":"`+method+`","params":`+params+`}`, hdr)
	var m struct {
		ID     string
		Result json.RawMessage
		Error  *struct {
			Code int
			Data json.RawMessage
		}
	}
	if err := json.Unmarshal(body, &m); err != nil || m.ID != "r-7" {
		t.Fatalf("%s: %d %s", method, resp.StatusCode, body)
	}
	a := extAnswer{status: resp.StatusCode, raw: m.Result, err: m.Error}
	_ = json.Unmarshal(m.Result, &a.result)
	return a
}

// call is a tools/call of the upstream's tool.
func (e *extEnv) call(t *testing.T, tool, args string, declare bool) extAnswer {
	t.Helper()
	return e.rpc(t, e.admin, "tools/call", e.prefix+tool, `{"name":"`+e.prefix+tool+`","arguments":`+args+`}`, declare)
}

func (e *extEnv) get(t *testing.T, id string) extAnswer {
	t.Helper()
	return e.rpc(t, e.admin, "tasks/get", id, `{"taskId":"`+id+`"}`, true)
}

func (e *extEnv) waitTerminal(t *testing.T, id string) extAnswer {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := e.get(t, id)
		if s := a.str("status"); s == "completed" || s == "failed" || s == "cancelled" {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s not terminal: %d %s", id, a.status, a.raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// created checks a flat CreateTaskResult (SEP-2663 "Task Creation") and returns its id.
func created(t *testing.T, a extAnswer) string {
	t.Helper()
	if a.err != nil || a.str("resultType") != "task" || a.str("taskId") == "" || a.str("status") == "" ||
		a.str("createdAt") == "" || a.str("lastUpdatedAt") == "" {
		t.Fatalf("not a CreateTaskResult: %d %s (error %+v)", a.status, a.raw, a.err)
	}
	for _, k := range []string{"task", "ttl", "pollInterval", "result", "error", "requestState"} {
		if a.result[k] != nil {
			t.Errorf("CreateTaskResult carries %q: %s", k, a.raw)
		}
	}
	return a.str("taskId")
}

func wantError(t *testing.T, what string, a extAnswer, status, code int) {
	t.Helper()
	if a.status != status || a.err == nil || a.err.Code != code {
		t.Errorf("%s: HTTP %d %s error %+v, want HTTP %d code %d", what, a.status, a.raw, a.err, status, code)
	}
}

func wantAck(t *testing.T, what string, a extAnswer) {
	t.Helper()
	if a.status != 200 || a.err != nil || len(a.result) != 1 || a.str("resultType") != "complete" {
		t.Errorf("%s: want the empty ack {resultType:complete}, got HTTP %d %s (error %+v)", what, a.status, a.raw, a.err)
	}
}

// TestTasksExtension: at protocol 2026-07-28 tasks are the io.modelcontextprotocol/tasks
// extension (SEP-2663): advertised under capabilities.extensions; a client that declared it
// per request gets a flat CreateTaskResult (ttlMs, pollIntervalMs) for a task-supporting
// tool and tasks/get inlines the outcome; a client that did not gets synchronous results,
// -32021 for a tool that requires tasks and for tasks/*; tasks/result and tasks/list are
// -32601; Mcp-Name must be the task id; cancel and update acknowledge, also for finished
// tasks; isError results (the upstream's and the gateway's own envelope) are completed
// tasks, JSON-RPC errors failed ones.
func TestTasksExtension(t *testing.T) {
	t.Parallel()
	e := newExtEnv(t)

	t.Run("capability under extensions", func(t *testing.T) {
		a := e.rpc(t, e.admin, "server/discover", "", `{}`, false)
		var res struct {
			Capabilities map[string]json.RawMessage
		}
		_ = json.Unmarshal(a.raw, &res)
		var ext map[string]json.RawMessage
		_ = json.Unmarshal(res.Capabilities["extensions"], &ext)
		if a.err != nil || string(ext["io.modelcontextprotocol/tasks"]) != "{}" || res.Capabilities["tasks"] != nil {
			t.Errorf("server/discover capabilities: %s", a.raw)
		}
	})

	t.Run("not declared: synchronous, -32021 where a task is needed", func(t *testing.T) {
		calls := len(e.up.Received("tools/call"))
		a := e.call(t, "report", `{"q":"x"}`, false)
		if a.err != nil || a.str("resultType") != "complete" || a.result["taskId"] != nil || a.result["content"] == nil {
			t.Fatalf("optional tool without the extension: %d %s", a.status, a.raw)
		}
		got := e.up.Received("tools/call")
		if len(got) != calls+1 || strings.Contains(string(got[len(got)-1].Params), `"task"`) {
			t.Fatalf("the upstream received %v", got[calls:])
		}
		// A legacy "task" member changes nothing (SEP-2663: ignored).
		a = e.rpc(t, e.admin, "tools/call", e.prefix+"report", `{"name":"`+e.prefix+`report","arguments":{},"task":{"ttl":60000}}`, false)
		if a.err != nil || a.result["taskId"] != nil || a.result["task"] != nil {
			t.Errorf("legacy task member without the extension: %s", a.raw)
		}
		calls = len(e.up.Received("tools/call"))
		a = e.call(t, "must", `{}`, false)
		wantError(t, "required tool without the extension", a, 400, -32021)
		if a.err != nil && !strings.Contains(string(a.err.Data), `"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
			t.Errorf("-32021 data: %s", a.err.Data)
		}
		if n := len(e.up.Received("tools/call")); n != calls {
			t.Errorf("the upstream received %d calls for a refused one", n-calls)
		}
		id := created(t, e.call(t, "report", `{}`, true))
		for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			wantError(t, m+" without the extension", e.rpc(t, e.admin, m, id, `{"taskId":"`+id+`","inputResponses":{}}`, false), 400, -32021)
		}
	})

	t.Run("declared: task, polled, result inlined", func(t *testing.T) {
		calls := len(e.up.Received("tools/call"))
		a := e.rpc(t, e.admin, "tools/call", e.prefix+"report",
			`{"name":"`+e.prefix+`report","arguments":{"delayMs":1500},"task":{"ttl":5}}`, true)
		id := created(t, a)
		if string(a.result["ttlMs"]) != "3600000" || string(a.result["pollIntervalMs"]) != "1000" || a.str("status") != "working" {
			t.Errorf("created %s (the legacy ttl 5 must be ignored)", a.raw)
		}
		w := e.get(t, id)
		if w.err != nil || w.str("taskId") != id || w.str("resultType") != "complete" || w.result["result"] != nil || string(w.result["ttlMs"]) != "3600000" {
			t.Errorf("tasks/get right after creation: %s", w.raw)
		}
		done := e.waitTerminal(t, id)
		if done.str("status") != "completed" || !jsonEqual(t, done.result["result"], completed(testpeer.RawCallResult)) || done.result["error"] != nil {
			t.Errorf("completed task: %s", done.raw)
		}
		// Other subtests' tasks may reach the upstream meanwhile: this task's call is the one
		// with delayMs 1500, received once and without the legacy member.
		n := 0
		for _, r := range e.up.Received("tools/call")[calls:] {
			if strings.Contains(string(r.Params), `"delayMs":1500`) {
				n++
				if strings.Contains(string(r.Params), `"task"`) {
					t.Errorf("the upstream received the task member: %s", r.Params)
				}
			}
		}
		if n != 1 {
			t.Errorf("the upstream received the task's call %d times", n)
		}
	})

	t.Run("no task for a tool without a hint, nor for a built-in", func(t *testing.T) {
		a := e.call(t, "plain", `{}`, true)
		if a.err != nil || a.str("resultType") != "complete" || a.result["taskId"] != nil {
			t.Errorf("plain tool: %s", a.raw)
		}
		a = e.rpc(t, e.admin, "tools/call", "agentpack_toolsets_list", `{"name":"agentpack_toolsets_list","arguments":{}}`, true)
		if a.err != nil || a.result["taskId"] != nil || a.result["content"] == nil {
			t.Errorf("built-in: %s", a.raw)
		}
	})

	t.Run("Mcp-Name must be the task id", func(t *testing.T) {
		id := created(t, e.call(t, "report", `{}`, true))
		wantError(t, "mismatched Mcp-Name", e.rpc(t, e.admin, "tasks/get", "another-id", `{"taskId":"`+id+`"}`, true), 400, -32020)
		wantError(t, "missing Mcp-Name", e.rpc(t, e.admin, "tasks/get", "", `{"taskId":"`+id+`"}`, true), 400, -32020)
		wantError(t, "mismatched Mcp-Name on cancel", e.rpc(t, e.admin, "tasks/cancel", "x"+id, `{"taskId":"`+id+`"}`, true), 400, -32020)
		if w := e.get(t, id); w.str("status") == "cancelled" {
			t.Error("a refused cancel cancelled the task")
		}
		// The Base64 sentinel form is decoded before the comparison (2026-07-28 transport,
		// "Value Encoding"); an encoding of another id is still a mismatch.
		b64 := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(id)) + "?="
		if a := e.rpc(t, e.admin, "tasks/get", b64, `{"taskId":"`+id+`"}`, true); a.err != nil || a.str("taskId") != id {
			t.Errorf("Base64 Mcp-Name of the task id: %d %s %+v", a.status, a.raw, a.err)
		}
		wantError(t, "Base64 Mcp-Name of another id", e.rpc(t, e.admin, "tasks/get", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("x"+id))+"?=", `{"taskId":"`+id+`"}`, true), 400, -32020)
	})

	t.Run("removed methods and unknown ids", func(t *testing.T) {
		id := created(t, e.call(t, "report", `{}`, true))
		wantError(t, "tasks/result", e.rpc(t, e.admin, "tasks/result", id, `{"taskId":"`+id+`"}`, true), 404, -32601)
		wantError(t, "tasks/list", e.rpc(t, e.admin, "tasks/list", "", `{}`, true), 404, -32601)
		for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			wantError(t, m+" of an unknown id", e.rpc(t, e.admin, m, "AAAAAAAAAAAAAAAAAAAAAA", `{"taskId":"AAAAAAAAAAAAAAAAAAAAAA","inputResponses":{}}`, true), 400, -32602)
			wantError(t, m+" of another member's task", e.rpc(t, e.member, m, id, `{"taskId":"`+id+`","inputResponses":{}}`, true), 400, -32602)
		}
		wantError(t, "tasks/get without taskId", e.rpc(t, e.admin, "tasks/get", "", `{}`, true), 400, -32602)
	})

	t.Run("cancel and update acknowledge", func(t *testing.T) {
		before := len(e.up.Received("notifications/cancelled"))
		id := created(t, e.call(t, "report", `{"delayMs":60000}`, true))
		// Cancel once this task's call is upstream (other subtests' calls may arrive too).
		upstream := func() bool {
			for _, r := range e.up.Received("tools/call") {
				if strings.Contains(string(r.Params), `"delayMs":60000`) {
					return true
				}
			}
			return false
		}
		for deadline := time.Now().Add(20 * time.Second); !upstream(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the task's call never reached the upstream")
			}
		}
		wantAck(t, "tasks/update", e.rpc(t, e.admin, "tasks/update", id, `{"taskId":"`+id+`","inputResponses":{"k":{"action":"accept"}}}`, true))
		wantAck(t, "tasks/cancel", e.rpc(t, e.admin, "tasks/cancel", id, `{"taskId":"`+id+`"}`, true))
		if w := e.get(t, id); w.str("status") != "cancelled" || w.result["result"] != nil {
			t.Errorf("after cancel: %s", w.raw)
		}
		for deadline := time.Now().Add(10 * time.Second); len(e.up.Received("notifications/cancelled")) == before; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the upstream call was not cancelled")
			}
		}
		wantAck(t, "tasks/cancel of a cancelled task", e.rpc(t, e.admin, "tasks/cancel", id, `{"taskId":"`+id+`"}`, true))
		done := created(t, e.call(t, "report", `{}`, true))
		e.waitTerminal(t, done)
		wantAck(t, "tasks/cancel of a completed task", e.rpc(t, e.admin, "tasks/cancel", done, `{"taskId":"`+done+`"}`, true))
		if w := e.get(t, done); w.str("status") != "completed" || w.result["result"] == nil {
			t.Errorf("a completed task after cancel: %s", w.raw)
		}
	})

	t.Run("isError results are completed, JSON-RPC errors failed", func(t *testing.T) {
		oops := e.waitTerminal(t, created(t, e.call(t, "oops", `{}`, true)))
		if oops.str("status") != "completed" || !jsonEqual(t, oops.result["result"], completed(extOopsResult)) || oops.result["error"] != nil {
			t.Errorf("isError result: %s", oops.raw)
		}
		boom := e.waitTerminal(t, created(t, e.call(t, "boom", `{}`, true)))
		if boom.str("status") != "failed" || !jsonEqual(t, boom.result["error"], []byte(extBoomError)) || boom.result["result"] != nil {
			t.Errorf("JSON-RPC error: %s", boom.raw)
		}
		// An upstream that cannot be reached: the gateway's isError envelope, a completed
		// task at this revision.
		dead := testpeer.NewRawUpstream(t, false)
		dead.ToolsList = extToolsList
		prefix := e.install(t, "Dead", dead)
		dead.Server.Close()
		a := e.rpc(t, e.admin, "tools/call", prefix+"report", `{"name":"`+prefix+`report","arguments":{}}`, true)
		w := e.waitTerminal(t, created(t, a))
		if w.str("status") != "completed" || !strings.Contains(string(w.result["result"]), `"isError":true`) ||
			!strings.Contains(string(w.result["result"]), "UPSTREAM_UNAVAILABLE") {
			t.Errorf("unreachable upstream: %s", w.raw)
		}
	})

	t.Run("upstream's unlimited ttl is null", func(t *testing.T) {
		// Issue 34: an upstream task's ttl null is ttlMs null in the CreateTaskResult and in
		// tasks/get, never the gateway's 1 h bound (3600000), which only the row keeps.
		native := testpeer.NewRawUpstream(t, false).WithTasks()
		native.TaskTTLNull = true
		prefix := e.install(t, "Unlimited", native)
		a := e.rpc(t, e.admin, "tools/call", prefix+"report", `{"name":"`+prefix+`report","arguments":{"delayMs":1000}}`, true)
		id := created(t, a)
		if string(a.result["ttlMs"]) != "null" {
			t.Errorf("created %s, want ttlMs null", a.raw)
		}
		if w := e.get(t, id); string(w.result["ttlMs"]) != "null" {
			t.Errorf("tasks/get: %s, want ttlMs null", w.raw)
		}
	})
	t.Run("upstream's own task keeps its ttl and poll interval", func(t *testing.T) {
		native := testpeer.NewRawUpstream(t, false).WithTasks()
		native.TaskTTL, native.TaskPollInterval = 90000, 2500
		prefix := e.install(t, "Native", native)
		a := e.rpc(t, e.admin, "tools/call", prefix+"report", `{"name":"`+prefix+`report","arguments":{"delayMs":1000}}`, true)
		id := created(t, a)
		if string(a.result["ttlMs"]) != "90000" || string(a.result["pollIntervalMs"]) != "2500" || strings.HasPrefix(id, "up-task") {
			t.Errorf("created %s", a.raw)
		}
		calls := native.Received("tools/call")
		if len(calls) != 1 || !strings.Contains(string(calls[0].Params), `"task":{"ttl":3600000}`) {
			t.Fatalf("the upstream received %v", calls)
		}
		w := e.get(t, id)
		if string(w.result["ttlMs"]) != "90000" || string(w.result["pollIntervalMs"]) != "2500" {
			t.Errorf("tasks/get: %s", w.raw)
		}
		done := e.waitTerminal(t, id)
		if done.str("status") != "completed" || !jsonEqual(t, done.result["result"], completed(testpeer.RawCallResult)) {
			t.Errorf("completed routed task: %s", done.raw)
		}
		if r := native.Received("tasks/result"); len(r) != 1 || !strings.Contains(string(r[0].Params), `"up-task-1"`) {
			t.Errorf("tasks/result reached the upstream as %v", r)
		}
		// Polled again: the stored result, no second fetch.
		if again := e.get(t, id); !jsonEqual(t, again.result["result"], completed(testpeer.RawCallResult)) || len(native.Received("tasks/result")) != 1 {
			t.Errorf("second tasks/get: %s", again.raw)
		}
		// The upstream's JSON-RPC error for its task's result: a failed task, error inlined.
		failing := testpeer.NewRawUpstream(t, false).WithTasks()
		failing.ToolsList, failing.CallErrors = extToolsList, map[string]string{"boom": extBoomError}
		fp := e.install(t, "NativeBoom", failing)
		boom := e.waitTerminal(t, created(t, e.rpc(t, e.admin, "tools/call", fp+"boom", `{"name":"`+fp+`boom","arguments":{}}`, true)))
		if boom.str("status") != "failed" || !jsonEqual(t, boom.result["error"], []byte(extBoomError)) || boom.result["result"] != nil {
			t.Errorf("routed task whose result is an error: %s", boom.raw)
		}
		if again := e.get(t, boom.str("taskId")); again.str("status") != "failed" || len(failing.Received("tasks/result")) != 1 {
			t.Errorf("second tasks/get of the failed routed task: %s (%d tasks/result upstream)", again.raw, len(failing.Received("tasks/result")))
		}
		tk2 := created(t, e.rpc(t, e.admin, "tools/call", prefix+"report", `{"name":"`+prefix+`report","arguments":{"delayMs":30000}}`, true))
		wantAck(t, "tasks/cancel of a routed task", e.rpc(t, e.admin, "tasks/cancel", tk2, `{"taskId":"`+tk2+`"}`, true))
		if n := len(native.Received("tasks/cancel")); n != 1 {
			t.Errorf("%d tasks/cancel reached the upstream", n)
		}
		if w := e.get(t, tk2); w.str("status") != "cancelled" {
			t.Errorf("routed task after cancel: %s", w.raw)
		}
	})
}

// TestTasksLegacyFormUnchanged: a 2025-11-25 client keeps that revision's form next to
// the extension: capabilities.tasks, the "task" member as the opt-in, the nested
// {"task": Task} with ttl/pollInterval, tasks/result and tasks/list, -32602 for a cancel
// of a finished task — and an upstream's own ttl and pollInterval shown as it sent them.
func TestTasksLegacyFormUnchanged(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 0)
	resp, body := e.env.RPC(t, "/mcp/"+e.ws, e.admin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, e.hdr)
	res := string(resultOf(t, resp, body))
	if !strings.Contains(res, `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`) || strings.Contains(res, "io.modelcontextprotocol/tasks") {
		t.Errorf("2025-11-25 capabilities: %s", res)
	}
	// Without the "task" member a task-supporting tool runs synchronously.
	if r, code := e.rpc(t, e.admin, "tools/call", `{"name":"`+e.tool+`","arguments":{}}`); code != 0 || string(r) != testpeer.RawCallResult {
		t.Errorf("plain call: %d %s", code, r)
	}
	tk := e.create(t, e.admin, e.tool, `{}`, 60000)
	if tk.TTL != 60000 || tk.PollInterval != 1000 {
		t.Errorf("created %+v", tk)
	}
	e.waitStatus(t, tk.TaskID, "completed", 15*time.Second)
	if r, code := e.rpc(t, e.admin, "tasks/get", `{"taskId":"`+tk.TaskID+`"}`); code != 0 || strings.Contains(string(r), `"result"`) || strings.Contains(string(r), "ttlMs") {
		t.Errorf("tasks/get: %d %s", code, r)
	}
	if r, code := e.rpc(t, e.admin, "tasks/result", `{"taskId":"`+tk.TaskID+`"}`); code != 0 || string(r) != testpeer.RawCallResult {
		t.Errorf("tasks/result: %d %s", code, r)
	}
	if r, code := e.rpc(t, e.admin, "tasks/list", `{}`); code != 0 || !strings.Contains(string(r), tk.TaskID) {
		t.Errorf("tasks/list: %d %s", code, r)
	}
	if _, code := e.rpc(t, e.admin, "tasks/cancel", `{"taskId":"`+tk.TaskID+`"}`); code != -32602 {
		t.Errorf("tasks/cancel of a completed task: code %d, want -32602", code)
	}
	native := testpeer.NewRawUpstream(t, false).WithTasks()
	native.TaskTTL, native.TaskPollInterval = 90000, 2500
	c := e.env.Connection(t, stacktest.Admin("alice", e.ws), connections.CreateInput{Name: "Native", URL: native.URL, WorkspaceID: &e.ws}).Connection
	up := e.create(t, e.admin, "mcp_"+c.Handle+"_report", `{"delayMs":20000}`, 60000)
	if up.TTL != 90000 || up.PollInterval != 2500 {
		t.Errorf("routed task created %+v, want the upstream's ttl 90000 and pollInterval 2500", up)
	}
	if w, _ := e.get(t, e.admin, up.TaskID); w.TTL != 90000 || w.PollInterval != 2500 || w.Status != "working" {
		t.Errorf("routed tasks/get %+v", w)
	}
}
