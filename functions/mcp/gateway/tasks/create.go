package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Create runs a tools/call of ref (proxied) or b (built-in; exactly one is non-nil) as a
// task for st's caller. params is the call's params as sent and p their members. It
// returns the task's row, or — when no task was made — the answer the caller gets
// instead (the way to authorize, a rate limit's envelope), or a JSON-RPC error. The
// task's ttl is the client's "task.ttl" at 2025-11-25 and the default at 2026-07-28,
// where that member is ignored (SEP-2663 "Backward Compatibility").
func (s *Service) Create(ctx context.Context, st *request.State, name string, ref *forward.Ref, b *builtin.Compiled, params json.RawMessage, p map[string]json.RawMessage) (*db.Task, any, error) {
	ttl := defaultTTL
	if !st.NewProtocol {
		ttl = requestedTTL(p["task"])
	}
	plain, err := jsonobj.DeleteMember(params, "task")
	if err != nil {
		return nil, nil, wire.Refusal(jsonrpc.CodeInvalidParams, "invalid params")
	}
	if ref != nil {
		name = ref.Canonical() // the name its audit row counts it under
	}
	row := &db.Task{ID: newID(), WorkspaceID: st.Workspace, Principal: st.Principal.Subject, Tool: name,
		TTLMS: ttl.Milliseconds(), PollIntervalMS: int(pollInterval.Milliseconds())}
	if b != nil {
		// A built-in answers quickly: run it now and store the complete task.
		res, err := s.o.Builtins.Call(ctx, b, p["arguments"])
		if err != nil {
			return nil, nil, err
		}
		if row.Result, err = json.Marshal(res); err != nil {
			return nil, nil, wire.Internal(ctx, s.log, "tools/call", err, nil)
		}
		row.Status = db.TaskCompleted
		saved, err := db.TaskInsert(ctx, s.o.Pool, row)
		if err != nil {
			return nil, nil, s.storeError(ctx, err)
		}
		return saved, nil, nil
	}
	if refused := s.o.Forward.Limit(ctx, st, *ref, time.Now()); refused != nil {
		return nil, refused, nil // the rate limit's envelope, not a task: nothing was started
	}
	if ts := Support(ref.Tool.Definition); (ts == "optional" || ts == "required") && upstreamRunsTasks(ref.Conn) {
		saved, err := s.createUpstream(ctx, st, ref, params, row)
		return saved, nil, err
	}
	if def := ref.Tool.Definition; len(def) > 0 && Support(def) == "forbidden" {
		return nil, nil, wire.Refusal(jsonrpc.CodeInvalidParams, "this tool does not support task-augmented calls (execution.taskSupport is forbidden)")
	}
	up, err := forward.UpstreamParams(plain, ref.Tool.UpstreamName)
	if err != nil {
		return nil, nil, wire.InvalidParams(err.Error())
	}
	// A caller without a usable upstream token gets the way to authorize, not a task.
	if pc, err := s.o.Forward.Prepare(ctx, st, ref.Conn); err != nil {
		return nil, nil, s.storeError(ctx, err)
	} else if pc.AnswerErr != nil {
		return nil, nil, pc.AnswerErr
	} else if pc.Answer != nil {
		return nil, pc.Answer, nil
	}
	connID := ref.Conn.ID
	row.ConnectionID = &connID
	saved, err := db.TaskInsert(ctx, s.o.Pool, row)
	if err != nil {
		return nil, nil, s.storeError(ctx, err)
	}
	job := Job{TaskID: saved.ID, WorkspaceID: st.Workspace, Principal: st.Principal.Subject,
		RequestID: st.RequestID, ConnectionID: connID, ChatID: st.ChatID, Tool: name, Params: up}
	if err := s.start(ctx, job); err != nil {
		errorID := httpapi.NewID()
		s.log.ErrorContext(ctx, "task could not be started", "task_id", saved.ID, "error_id", errorID, "err", err)
		msg, _ := json.Marshal(wire.Refusal(jsonrpc.CodeInternalError, "the task could not be started (errorId "+errorID+")"))
		if saved, err = db.TaskFinish(context.WithoutCancel(ctx), s.o.Pool, saved.ID, db.TaskFailed, nil, msg, "the task could not be started"); err != nil {
			return nil, nil, s.storeError(ctx, err)
		}
	}
	return saved, nil, nil
}

// requestedTTL reads a 2025-11-25 task-augmented request's "task" member: the requested
// ttl (ms), clamped to the gateway's bounds; the default when absent or invalid.
func requestedTTL(raw json.RawMessage) time.Duration {
	var p struct {
		TTL *float64 `json:"ttl"`
	}
	if json.Unmarshal(raw, &p) != nil || p.TTL == nil || *p.TTL <= 0 {
		return defaultTTL
	}
	// Clamped as a float first: a huge ttl must not overflow time.Duration.
	ms := min(max(*p.TTL, 1), float64(maxTTL/time.Millisecond))
	return time.Duration(ms) * time.Millisecond
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

// createUpstream forwards a task-augmented call to an upstream that runs tasks itself
// (the 2025-11-25 form: a "task" member, which a 2026-07-28 caller does not send, so the
// gateway sets it) and records its task under a gateway task id (naming the connection),
// so that tasks/* can be routed back statelessly. The upstream's ttl and pollInterval are
// kept: they are its promise, not the gateway's. An upstream answering the 2026-07-28 flat
// CreateTaskResult (resultType "task", ttlMs, pollIntervalMs) is read the same way.
func (s *Service) createUpstream(ctx context.Context, st *request.State, ref *forward.Ref, params json.RawMessage, row *db.Task) (*db.Task, error) {
	if st.NewProtocol {
		var err error
		if params, err = jsonobj.SetMember(params, "task", json.RawMessage(`{"ttl":`+strconv.FormatInt(row.TTLMS, 10)+`}`)); err != nil {
			return nil, wire.Refusal(jsonrpc.CodeInvalidParams, "invalid params")
		}
	}
	up, err := forward.UpstreamParams(params, ref.Tool.UpstreamName)
	if err != nil {
		return nil, wire.InvalidParams(err.Error())
	}
	res, err := s.o.Forward.Raw(ctx, st, ref.Conn.ID, "tools/call", up)
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
		return nil, wire.Internal(ctx, s.log, "tools/call", errors.New("upstream answered a task-augmented call without a task"), nil)
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
	row.TTLUnlimited = ut.ttlUnlimited() // shown as null; the row keeps the gateway's bound
	if pi, ok := ut.pollInterval(); ok {
		row.PollIntervalMS = pi
	}
	saved, err := db.TaskInsert(ctx, s.o.Pool, row)
	if err != nil {
		return nil, s.storeError(ctx, err)
	}
	return saved, nil
}

// upstreamTask is a Task as an upstream sends it: the 2025-11-25 names (ttl, pollInterval)
// or the 2026-07-28 ones (ttlMs, pollIntervalMs).
type upstreamTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	TTL            json.RawMessage `json:"ttl"`
	TTLMs          json.RawMessage `json:"ttlMs"`
	PollInterval   *float64        `json:"pollInterval"`
	PollIntervalMs *float64        `json:"pollIntervalMs"`
}

// ttl returns the upstream's ttl in ms, clamped to the gateway's bounds (a row must
// expire; an unlimited ttl, null, keeps the gateway's default); false when absent.
func (u *upstreamTask) ttl() (int64, bool) {
	var v float64
	if json.Unmarshal(u.ttlRaw(), &v) != nil || v <= 0 {
		return 0, false // absent, null or not a number
	}
	return int64(min(max(v, 1), float64(maxTTL/time.Millisecond))), true
}

// ttlRaw is the upstream's ttlMs (2026-07-28) or else ttl (2025-11-25), as sent; nil when
// it sent neither.
func (u *upstreamTask) ttlRaw() json.RawMessage {
	if len(u.TTLMs) > 0 {
		return u.TTLMs
	}
	return u.TTL
}

// ttlUnlimited reports whether the upstream gave its task an unlimited lifetime: ttl (or
// ttlMs) null (2025-11-25 "Tasks": "ttl: number | null"). The caller is shown null too.
func (u *upstreamTask) ttlUnlimited() bool { return string(u.ttlRaw()) == "null" }

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

// Support returns a tool definition's execution.taskSupport ("" when absent).
func Support(def json.RawMessage) string {
	var d struct {
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	_ = json.Unmarshal(def, &d)
	return d.Execution.TaskSupport
}
