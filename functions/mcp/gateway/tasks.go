package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Tasks (MCP 2025-11-25 "Tasks", docs/TASKS.md; the 2026-07-28 extension form is in
// tasks_extension.go). API Gateway gives up on a request after
// about 29 s; a task-augmented tools/call ("task" in its params) answers at once with a
// task, and the client polls tasks/get and fetches tasks/result. The gateway runs the call
// itself: a row in mcp_tasks (db/tasks.go) and a worker started out of the request
// (Options.StartTask: in Lambda an asynchronous invocation of the same function, locally a
// goroutine) that forwards the call through the same path as a synchronous one (Forward,
// metrics, the audit row for a result without isError) under TaskTimeout, and stores the
// result. Built-ins run as tasks too, synchronously: their task is complete when created.
//
// Task ids are 128 random bits; every read is scoped to the caller's workspace and
// principal, and another owner's id answers exactly like an unknown one.

// taskCapability is advertised in initialize / server/discover results of the revisions
// with the 2025-11-25 form of tasks (2026-07-28 advertises the extension instead, see
// tasks_extension.go).
var taskCapability = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

// taskMinVersion is the first protocol revision with tasks.
const taskMinVersion = "2025-11-25"

// Task defaults: how long a task is kept (the client may ask for less, never more), and
// the poll interval hint.
const (
	defaultTaskTTL   = time.Hour
	maxTaskTTL       = 24 * time.Hour
	taskPollInterval = time.Second
	tasksPageSize    = 50
)

// TaskJob is what a worker needs to run a gateway task: the row's id and owner, the
// connection, and the tools/call params to forward (upstream tool name set, "task"
// removed). It travels in the asynchronous invocation's event, so arguments are never
// stored.
type TaskJob struct {
	TaskID       string          `json:"taskId"`
	WorkspaceID  string          `json:"workspaceId"`
	Principal    string          `json:"principal"`
	RequestID    string          `json:"requestId"`
	ConnectionID string          `json:"connectionId"`
	Tool         string          `json:"tool"`
	Params       json.RawMessage `json:"params"`
}

// newTaskID returns 128 random bits, base64url.
func newTaskID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// taskObject is the wire Task of row t.
func taskObject(t *db.Task) map[string]any {
	o := map[string]any{
		"taskId": t.ID, "status": t.Status, "ttl": t.TTLMS,
		"createdAt":     t.CreatedAt.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": t.LastUpdatedAt.UTC().Format(time.RFC3339Nano),
		"pollInterval":  t.PollIntervalMS,
	}
	if t.StatusMessage != nil {
		o["statusMessage"] = *t.StatusMessage
	}
	return o
}

// taskParams reads a task-augmented request's "task" member: requested ttl (ms).
func taskTTL(raw json.RawMessage) time.Duration {
	var p struct {
		TTL *float64 `json:"ttl"`
	}
	if json.Unmarshal(raw, &p) != nil || p.TTL == nil || *p.TTL <= 0 {
		return defaultTaskTTL
	}
	// Clamped as a float first: a huge ttl must not overflow time.Duration.
	ms := min(max(*p.TTL, 1), float64(maxTaskTTL/time.Millisecond))
	return time.Duration(ms) * time.Millisecond
}

// tasksEnabled reports whether the request's protocol revision defines tasks.
func tasksEnabled(st *requestState, version string) bool {
	return st.NewProtocol || version >= taskMinVersion
}

var errUnknownTask = wire.Refusal(jsonrpc.CodeInvalidParams, "unknown task")

// createTask runs a tools/call of ref (proxied) or b (built-in) as a task and returns its
// row, or — when no task was made — the answer the caller gets instead (the way to
// authorize). The task's ttl is the client's "task.ttl" at 2025-11-25 and the default at
// 2026-07-28, where that member is ignored (SEP-2663 "Backward Compatibility").
func (g *Gateway) createTask(ctx context.Context, st *requestState, name string, ref *forward.Ref, b *builtin.Compiled, params json.RawMessage, p map[string]json.RawMessage) (*db.Task, any, error) {
	ttl := defaultTaskTTL
	if !st.NewProtocol {
		ttl = taskTTL(p["task"])
	}
	plain, err := mcpclient.DeleteMember(params, "task")
	if err != nil {
		return nil, nil, wire.Refusal(jsonrpc.CodeInvalidParams, "invalid params")
	}
	row := &db.Task{ID: newTaskID(), WorkspaceID: st.Workspace, Principal: st.Principal.Subject, Tool: name,
		TTLMS: ttl.Milliseconds(), PollIntervalMS: int(taskPollInterval.Milliseconds())}
	if b != nil {
		// A built-in answers quickly: run it now and store the complete task.
		res, err := g.builtins.Call(ctx, b, p["arguments"])
		if err != nil {
			return nil, nil, err
		}
		if row.Result, err = json.Marshal(res); err != nil {
			return nil, nil, wire.Internal(ctx, g.log, "tools/call", err, nil)
		}
		row.Status = db.TaskCompleted
		saved, err := db.TaskInsert(ctx, g.o.Pool, row)
		if err != nil {
			return nil, nil, g.taskStoreError(ctx, err)
		}
		return saved, nil, nil
	}
	if refused := g.forward.Limit(ctx, st.State, *ref, time.Now()); refused != nil {
		return nil, refused, nil // the rate limit's envelope, not a task: nothing was started
	}
	if ts := taskSupport(ref.Tool.Definition); (ts == "optional" || ts == "required") && upstreamRunsTasks(ref.Conn) {
		saved, err := g.createUpstreamTask(ctx, st, ref, params, row)
		return saved, nil, err
	}
	if def := ref.Tool.Definition; len(def) > 0 && taskSupport(def) == "forbidden" {
		return nil, nil, wire.Refusal(jsonrpc.CodeInvalidParams, "this tool does not support task-augmented calls (execution.taskSupport is forbidden)")
	}
	up, err := forward.UpstreamParams(plain, ref.Tool.UpstreamName)
	if err != nil {
		return nil, nil, wire.InvalidParams(err.Error())
	}
	// A caller without a usable upstream token gets the way to authorize, not a task.
	if pc, err := g.forward.Prepare(ctx, st.State, ref.Conn); err != nil {
		return nil, nil, g.taskStoreError(ctx, err)
	} else if pc.AnswerErr != nil {
		return nil, nil, pc.AnswerErr
	} else if pc.Answer != nil {
		return nil, pc.Answer, nil
	}
	connID := ref.Conn.ID
	row.ConnectionID = &connID
	saved, err := db.TaskInsert(ctx, g.o.Pool, row)
	if err != nil {
		return nil, nil, g.taskStoreError(ctx, err)
	}
	job := TaskJob{TaskID: saved.ID, WorkspaceID: st.Workspace, Principal: st.Principal.Subject,
		RequestID: st.RequestID, ConnectionID: connID, Tool: name, Params: up}
	if err := g.startTask(ctx, job); err != nil {
		errorID := httpapi.NewID()
		g.log.ErrorContext(ctx, "task could not be started", "task_id", saved.ID, "error_id", errorID, "err", err)
		msg, _ := json.Marshal(wire.Refusal(jsonrpc.CodeInternalError, "the task could not be started (errorId "+errorID+")"))
		if saved, err = db.TaskFinish(context.WithoutCancel(ctx), g.o.Pool, saved.ID, db.TaskFailed, nil, msg, "the task could not be started"); err != nil {
			return nil, nil, g.taskStoreError(ctx, err)
		}
	}
	return saved, nil, nil
}

// upstreamRunsTasks reports whether connection c's upstream declared task-augmented
// tools/call (capabilities.tasks.requests.tools.call).
func upstreamRunsTasks(c *catalog.Connection) bool {
	var caps struct {
		Tasks struct {
			Requests struct {
				Tools struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
	}
	return json.Unmarshal(c.Capabilities, &caps) == nil && caps.Tasks.Requests.Tools.Call != nil
}

// createUpstreamTask forwards a task-augmented call to an upstream that runs tasks itself
// (the 2025-11-25 form: a "task" member, which a 2026-07-28 caller does not send, so the
// gateway sets it) and records its task under a gateway task id (naming the connection),
// so that tasks/* can be routed back statelessly. The upstream's ttl and pollInterval are
// kept: they are its promise, not the gateway's. An upstream answering the 2026-07-28 flat
// CreateTaskResult (resultType "task", ttlMs, pollIntervalMs) is read the same way.
func (g *Gateway) createUpstreamTask(ctx context.Context, st *requestState, ref *forward.Ref, params json.RawMessage, row *db.Task) (*db.Task, error) {
	if st.NewProtocol {
		var err error
		if params, err = mcpclient.SetMember(params, "task", json.RawMessage(`{"ttl":`+strconv.FormatInt(row.TTLMS, 10)+`}`)); err != nil {
			return nil, wire.Refusal(jsonrpc.CodeInvalidParams, "invalid params")
		}
	}
	up, err := forward.UpstreamParams(params, ref.Tool.UpstreamName)
	if err != nil {
		return nil, wire.InvalidParams(err.Error())
	}
	res, err := g.forward.Raw(ctx, st.State, ref.Conn.ID, "tools/call", up)
	if err != nil {
		return nil, err
	}
	var ct struct {
		Task *upstreamTask `json:"task"`
		upstreamTask
	}
	if json.Unmarshal(res, &ct) != nil {
		ct.Task = nil
	}
	ut := ct.Task
	if ut == nil && ct.ResultType == "task" {
		ut = &ct.upstreamTask
	}
	if ut == nil || ut.TaskID == "" {
		return nil, wire.Internal(ctx, g.log, "tools/call", errors.New("upstream answered a task-augmented call without a task"), nil)
	}
	connID, upID := ref.Conn.ID, ut.TaskID
	row.ConnectionID, row.UpstreamTaskID, row.Status = &connID, &upID, ut.Status
	if row.Status == "" {
		row.Status = db.TaskWorking
	}
	if ut.StatusMessage != "" {
		row.StatusMessage = &ut.StatusMessage
	}
	if ttl, ok := ut.ttl(); ok {
		row.TTLMS = ttl
	}
	if pi, ok := ut.pollInterval(); ok {
		row.PollIntervalMS = pi
	}
	saved, err := db.TaskInsert(ctx, g.o.Pool, row)
	if err != nil {
		return nil, g.taskStoreError(ctx, err)
	}
	return saved, nil
}

// upstreamTask is a Task as an upstream sends it: the 2025-11-25 names (ttl, pollInterval)
// or the 2026-07-28 ones (ttlMs, pollIntervalMs).
type upstreamTask struct {
	ResultType     string   `json:"resultType"`
	TaskID         string   `json:"taskId"`
	Status         string   `json:"status"`
	StatusMessage  string   `json:"statusMessage"`
	TTL            *float64 `json:"ttl"`
	TTLMs          *float64 `json:"ttlMs"`
	PollInterval   *float64 `json:"pollInterval"`
	PollIntervalMs *float64 `json:"pollIntervalMs"`
}

// ttl returns the upstream's ttl in ms, clamped to the gateway's bounds (a row must
// expire; an unlimited ttl, null, keeps the gateway's default); false when absent.
func (u *upstreamTask) ttl() (int64, bool) {
	v := u.TTLMs
	if v == nil {
		v = u.TTL
	}
	if v == nil || *v <= 0 {
		return 0, false
	}
	return int64(min(max(*v, 1), float64(maxTaskTTL/time.Millisecond))), true
}

// pollInterval returns the upstream's poll interval in ms (at most an hour); false when
// absent.
func (u *upstreamTask) pollInterval() (int, bool) {
	v := u.PollIntervalMs
	if v == nil {
		v = u.PollInterval
	}
	if v == nil || *v <= 0 {
		return 0, false
	}
	return int(min(*v, float64(time.Hour/time.Millisecond))), true
}

// upstreamTaskResult fetches a routed task's result from its upstream (tasks/result under
// the upstream's own task id) and stores it the first time, with the audit row for a
// result without isError. An upstream JSON-RPC error comes back as the error (see
// mcpclient.RPCError).
func (g *Gateway) upstreamTaskResult(ctx context.Context, st *requestState, row *db.Task) (json.RawMessage, error) {
	if row.ConnectionID == nil {
		return nil, errUnknownTask // the connection was deleted
	}
	idParams, _ := json.Marshal(map[string]string{"taskId": *row.UpstreamTaskID})
	start := time.Now()
	res, err := g.forward.Raw(ctx, st.State, *row.ConnectionID, "tasks/result", idParams)
	if err != nil {
		return nil, err
	}
	first, err := db.TaskKeepResult(context.WithoutCancel(ctx), g.o.Pool, row.ID, res)
	if err != nil {
		return nil, g.taskStoreError(ctx, err)
	}
	if first && !forward.ResultIsError(res) {
		// The arguments went to the upstream when the task was created and are not kept:
		// the row's digest is that of no arguments.
		if err := g.forward.Audit(st.State, row.Tool, *row.ConnectionID, time.Since(start), nil); err != nil {
			return nil, wire.Internal(ctx, g.log, "tasks/result", err, nil)
		}
	}
	return res, nil
}

// upstreamTaskStatus asks a routed task's upstream (tasks/get or tasks/cancel, under the
// upstream's own task id), records the status it reports and returns the row with the
// upstream's task (its ttl and pollInterval are shown as sent).
func (g *Gateway) upstreamTaskStatus(ctx context.Context, st *requestState, method string, row *db.Task) (*db.Task, *upstreamTask, error) {
	if row.ConnectionID == nil {
		return nil, nil, errUnknownTask // the connection was deleted
	}
	idParams, _ := json.Marshal(map[string]string{"taskId": *row.UpstreamTaskID})
	res, err := g.forward.Raw(ctx, st.State, *row.ConnectionID, method, idParams)
	if err != nil {
		return nil, nil, err
	}
	up := &upstreamTask{}
	_ = json.Unmarshal(res, up)
	if up.Status != "" {
		if row, err = db.TaskSetStatus(context.WithoutCancel(ctx), g.o.Pool, row.ID, up.Status, up.StatusMessage); err != nil {
			return nil, nil, g.taskStoreError(ctx, err)
		}
	}
	return row, up, nil
}

// taskSupport returns a tool definition's execution.taskSupport ("" when absent).
func taskSupport(def json.RawMessage) string {
	var d struct {
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	_ = json.Unmarshal(def, &d)
	return d.Execution.TaskSupport
}

// startTask hands job to Options.StartTask, or runs it on a goroutine of this process.
func (g *Gateway) startTask(ctx context.Context, job TaskJob) error {
	if g.o.StartTask != nil {
		return g.o.StartTask(ctx, job)
	}
	go func() { _ = g.RunTask(context.Background(), job) }()
	return nil
}

// RunTask runs a gateway task's call (the worker: a goroutine locally, an asynchronous
// invocation in Lambda) and stores its outcome: completed with the upstream's result
// (audited once when it is not isError), or failed with the upstream's JSON-RPC error or
// the envelope of a gateway-side failure. A task cancelled meanwhile keeps its status.
// It returns an error only when the outcome could not be stored.
func (g *Gateway) RunTask(ctx context.Context, job TaskJob) error {
	ctx, cancel := context.WithTimeout(ctx, g.o.TaskTimeout)
	defer cancel()
	// Claim the task: a worker runs each task once, even if the invocation is delivered
	// again (Lambda's asynchronous delivery is at least once; the template also sets no
	// retries).
	if claimed, err := db.TaskClaim(ctx, g.o.Pool, job.TaskID); err != nil || !claimed {
		return err
	}
	g.taskCancels.Store(job.TaskID, &cancel)
	defer g.taskCancels.Delete(job.TaskID)
	start := time.Now()
	var res json.RawMessage
	row, err := db.ConnectionGet(ctx, g.o.Pool, job.ConnectionID)
	if err == nil {
		up := mcpclient.WithCallTimeout(logx.WithRequestID(ctx, job.RequestID), g.o.TaskTimeout)
		res, err = g.forward.Send(up, g.forward.TargetFor(ctx, row, job.Principal), "tools/call", job.Params)
	}
	d := time.Since(start)
	store := context.WithoutCancel(ctx)
	if err == nil && !forward.ResultIsError(res) {
		// The upstream ran the call: one audit row, whatever became of the task meanwhile
		// (cancelled too late to stop it, or expired).
		var args struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(job.Params, &args)
		st := &request.State{Principal: &auth.Principal{Subject: job.Principal}, Workspace: job.WorkspaceID, RequestID: job.RequestID}
		if aerr := g.forward.Audit(st, job.Tool, job.ConnectionID, d, args.Arguments); aerr != nil {
			g.log.ErrorContext(ctx, "task audit failed", "task_id", job.TaskID, "err", aerr)
		}
	}
	status, serr := db.TaskStatusOf(store, g.o.Pool, job.TaskID)
	if serr != nil {
		return serr
	}
	if status != db.TaskWorking {
		return nil // cancelled (or expired) meanwhile
	}
	if err != nil {
		if je := mcpclient.RPCError(err); je != nil {
			g.metrics.ToolCall("proxied", job.Tool, "error", job.RequestID, d)
			b, _ := json.Marshal(je)
			_, err := db.TaskFinish(store, g.o.Pool, job.TaskID, db.TaskFailed, nil, b, je.Message)
			return err
		}
		errorID := httpapi.NewID()
		fail := wire.UpstreamFailure(err, errorID, "call")
		g.log.WarnContext(ctx, "task call failed", "task_id", job.TaskID, "tool", job.Tool, "connection_id", job.ConnectionID, "error_id", errorID, "err", err)
		g.metrics.ToolCall("proxied", job.Tool, "error", job.RequestID, d)
		b := wire.SealJSON(wire.EnvelopeMeta{Tool: job.Tool, Version: "upstream"}, fail)
		_, err := db.TaskFinish(store, g.o.Pool, job.TaskID, db.TaskFailed, b, nil, fail.Message)
		return err
	}
	outcome := "ok"
	if forward.ResultIsError(res) {
		outcome = "tool_error"
	}
	g.metrics.ToolCall("proxied", job.Tool, outcome, job.RequestID, d)
	_, err = db.TaskFinish(store, g.o.Pool, job.TaskID, db.TaskCompleted, res, nil, "")
	return err
}

// serveTasks answers tasks/get, tasks/result, tasks/list and tasks/cancel for st's owner in
// the 2025-11-25 form (MCP 2025-11-25 "Tasks").
func (g *Gateway) serveTasks(ctx context.Context, st *requestState, method string, params json.RawMessage) (any, error) {
	var p struct {
		TaskID string `json:"taskId"`
		Cursor string `json:"cursor"`
	}
	if len(params) > 0 && string(params) != "null" && json.Unmarshal(params, &p) != nil {
		return nil, wire.Refusal(jsonrpc.CodeInvalidParams, "invalid params")
	}
	owner := st.Principal.Subject
	switch method {
	case "tasks/list":
		var before time.Time
		var beforeID string
		if p.Cursor != "" {
			t, id, ok := parseTaskCursor(p.Cursor)
			if !ok {
				return nil, wire.Refusal(jsonrpc.CodeInvalidParams, "invalid cursor")
			}
			before, beforeID = t, id
		}
		rows, err := db.TaskList(ctx, g.o.Pool, st.Workspace, owner, tasksPageSize+1, before, beforeID)
		if err != nil {
			return nil, g.taskStoreError(ctx, err)
		}
		out := map[string]any{}
		tasks := []map[string]any{}
		for i := range rows {
			if i == tasksPageSize {
				last := rows[i-1]
				out["nextCursor"] = last.CreatedAt.UTC().Format(time.RFC3339Nano) + "|" + last.ID
				break
			}
			tasks = append(tasks, taskObject(&rows[i]))
		}
		out["tasks"] = tasks
		return out, nil
	case "tasks/cancel":
		before, err := db.TaskGet(ctx, g.o.Pool, p.TaskID, st.Workspace, owner)
		if err != nil {
			return nil, g.taskLookupError(ctx, err)
		}
		if before.UpstreamTaskID != nil {
			row, up, err := g.upstreamTaskStatus(ctx, st, method, before)
			if err != nil {
				return nil, err
			}
			return withUpstreamTiming(taskObject(row), up, "ttl", "pollInterval"), nil
		}
		if before.Terminal() {
			// 2025-11-25 "Tasks": a cancel of a terminal task is -32602.
			return nil, wire.Refusal(jsonrpc.CodeInvalidParams, "task is already "+before.Status)
		}
		row, err := g.cancelTask(ctx, st, p.TaskID)
		if err != nil {
			return nil, err
		}
		return taskObject(row), nil
	}
	row, err := db.TaskGet(ctx, g.o.Pool, p.TaskID, st.Workspace, owner)
	if err != nil {
		return nil, g.taskLookupError(ctx, err)
	}
	if row.UpstreamTaskID != nil {
		if method == "tasks/result" {
			return g.upstreamTaskResult(ctx, st, row)
		}
		row, up, err := g.upstreamTaskStatus(ctx, st, method, row)
		if err != nil {
			return nil, err
		}
		return withUpstreamTiming(taskObject(row), up, "ttl", "pollInterval"), nil
	}
	if method == "tasks/get" {
		return taskObject(row), nil
	}
	// tasks/result: wait (polling the row) while the task works, within the request's
	// budget; a client that gets "still working" polls tasks/get and asks again.
	deadline := time.Now().Add(g.o.CallTimeout)
	if dl := st.Deadline.Add(-time.Second); !st.Deadline.IsZero() && dl.Before(deadline) {
		deadline = dl
	}
	for !row.Terminal() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if row, err = db.TaskGet(ctx, g.o.Pool, p.TaskID, st.Workspace, owner); err != nil {
			return nil, g.taskLookupError(ctx, err)
		}
	}
	switch {
	case !row.Terminal():
		return nil, wire.Refusal(jsonrpc.CodeInvalidParams, "task is still working: poll tasks/get and ask again")
	case row.Status == db.TaskCancelled:
		return nil, wire.Refusal(jsonrpc.CodeInvalidParams, "task was cancelled")
	case len(row.Error) > 0:
		je := &jsonrpc.Error{}
		if json.Unmarshal(row.Error, je) != nil {
			je = wire.Refusal(jsonrpc.CodeInternalError, "task failed")
		}
		return nil, je
	}
	return json.RawMessage(row.Result), nil
}

// cancelTask marks the owner's gateway-run task cancelled (a terminal one is left as it is)
// and, the caller owning the task, stops its call when this process runs it.
func (g *Gateway) cancelTask(ctx context.Context, st *requestState, id string) (*db.Task, error) {
	row, err := db.TaskCancel(ctx, g.o.Pool, id, st.Workspace, st.Principal.Subject)
	if err != nil {
		return nil, g.taskLookupError(ctx, err)
	}
	if c, ok := g.taskCancels.Load(row.ID); ok && row.Status == db.TaskCancelled {
		(*c.(*context.CancelFunc))()
	}
	return row, nil
}

// withUpstreamTiming shows a routed task's ttl and poll interval as its upstream last
// reported them (under the names ttlKey and pollKey of the caller's revision), when it did.
func withUpstreamTiming(o map[string]any, up *upstreamTask, ttlKey, pollKey string) map[string]any {
	if up == nil {
		return o
	}
	if v, ok := up.ttl(); ok {
		o[ttlKey] = v
	}
	if v, ok := up.pollInterval(); ok {
		o[pollKey] = v
	}
	return o
}

func parseTaskCursor(c string) (time.Time, string, bool) {
	ts, id, ok := strings.Cut(c, "|")
	if !ok {
		return time.Time{}, "", false
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	return t, id, err == nil && id != ""
}

// taskLookupError maps a lookup failure: not found (or another owner's) → unknown task.
func (g *Gateway) taskLookupError(ctx context.Context, err error) error {
	if apperr.CodeOf(err) == apperr.NotFound {
		return errUnknownTask
	}
	return g.taskStoreError(ctx, err)
}

// taskStoreError answers a failure while reading or writing a task, or preparing its
// call: a classified error (the database UNAVAILABLE, the connection removed) is
// wire.Failure with its own code and retryable flag; anything else is wire.Internal. Both
// carry an errorId, logged under the same id.
func (g *Gateway) taskStoreError(ctx context.Context, err error) error {
	if apperr.As(err) == nil {
		return wire.Internal(ctx, g.log, "tasks", err, nil)
	}
	id := httpapi.NewID()
	logx.Annotate(ctx, logx.FieldErrorID, id)
	g.log.ErrorContext(ctx, "task request failed", "error_id", id, "err", err)
	return wire.Failure(wire.ToolError(err, id), id)
}

// withTaskCapability adds the tasks capability to a buffered initialize or
// server/discover answer of a revision that defines tasks: at 2025-11-25 (and later
// revisions before 2026-07-28) capabilities.tasks; at 2026-07-28 (newProtocol) the
// extension under capabilities.extensions (SEP-2663 "Capability Negotiation"), next to any
// extension already advertised, and never capabilities.tasks.
func (w *limitedWriter) withTaskCapability(newProtocol bool) {
	if w.tooBig || w.status != 200 {
		return
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(w.buf.Bytes(), &msg) != nil || msg["result"] == nil {
		return
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(msg["result"], &res) != nil {
		return
	}
	var v string
	_ = json.Unmarshal(res["protocolVersion"], &v)
	if !newProtocol && v != "" && v < taskMinVersion {
		return
	}
	caps := res["capabilities"]
	if len(caps) == 0 || string(caps) == "null" {
		caps = json.RawMessage(`{}`)
	}
	var err error
	if newProtocol {
		ext := json.RawMessage(`{}`)
		if m, ok := mcpclient.Members(caps); ok && len(m["extensions"]) > 0 && string(m["extensions"]) != "null" {
			ext = m["extensions"]
		}
		if ext, err = mcpclient.SetMember(ext, tasksExtension, json.RawMessage(`{}`)); err != nil {
			return
		}
		if caps, err = mcpclient.DeleteMember(caps, "tasks"); err != nil {
			return
		}
		caps, err = mcpclient.SetMember(caps, "extensions", ext)
	} else {
		caps, err = mcpclient.SetMember(caps, "tasks", taskCapability)
	}
	if err != nil {
		return
	}
	result, err := mcpclient.SetMember(msg["result"], "capabilities", caps)
	if err != nil {
		return
	}
	out, err := mcpclient.SetMember(w.buf.Bytes(), "result", result)
	if err != nil {
		return
	}
	w.buf.Reset()
	w.buf.Write(out)
}

// withTaskExecution adds execution.taskSupport "optional" to a tool definition that has no
// execution member: the gateway runs any such tool as a task. Definitions that say
// anything about execution are kept as sent.
func withTaskExecution(def []byte) []byte {
	if bytes.Contains(def, []byte(`"execution"`)) {
		var d map[string]json.RawMessage
		if json.Unmarshal(def, &d) == nil && d["execution"] != nil {
			return def
		}
	}
	out, err := mcpclient.SetMember(def, "execution", json.RawMessage(`{"taskSupport":"optional"}`))
	if err != nil {
		return def
	}
	return out
}
