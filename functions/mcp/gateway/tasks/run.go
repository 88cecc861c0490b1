package tasks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/mcpclient"
)

// start hands job to Options.Start, or runs it on a goroutine of this process.
func (s *Service) start(ctx context.Context, job Job) error {
	if s.o.Start != nil {
		return s.o.Start(ctx, job)
	}
	go func() { _ = s.Run(context.Background(), job) }()
	return nil
}

// Run runs a gateway task's call (the worker: a goroutine locally, an asynchronous
// invocation in Lambda) and stores its outcome: completed with the upstream's result
// (audited once when it is not isError), or failed with the upstream's JSON-RPC error or
// the envelope of a gateway-side failure. A task cancelled meanwhile keeps its status; a
// job delivered twice runs once (the row is claimed first). It returns an error only when
// the outcome could not be stored.
func (s *Service) Run(ctx context.Context, job Job) error {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	// Claim the task: a worker runs each task once, even if the invocation is delivered
	// again (Lambda's asynchronous delivery is at least once; the template also sets no
	// retries).
	if claimed, err := db.TaskClaim(ctx, s.o.Pool, job.TaskID); err != nil || !claimed {
		return err
	}
	s.cancels.Store(job.TaskID, &cancel)
	defer s.cancels.Delete(job.TaskID)
	start := time.Now()
	var res json.RawMessage
	outcome := "" // the audit row's; none when nothing went upstream
	row, err := db.ConnectionGet(ctx, s.o.Pool, job.ConnectionID)
	if err == nil {
		up := mcpclient.WithCallTimeout(logx.WithRequestID(ctx, job.RequestID), s.o.Timeout)
		res, err = s.o.Forward.Send(up, s.o.Forward.TargetFor(ctx, row, job.Principal), "tools/call", job.Params)
		outcome = taskOutcome(res, err)
	}
	d := time.Since(start)
	store := context.WithoutCancel(ctx)
	if outcome != "" {
		// The upstream ran the call (or failed to): one audit row with its outcome, whatever
		// became of the task meanwhile (cancelled too late to stop it, or expired).
		var args struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(job.Params, &args)
		st := &request.State{Principal: &auth.Principal{Subject: job.Principal}, Workspace: job.WorkspaceID, ChatID: job.ChatID, RequestID: job.RequestID}
		if aerr := s.o.Forward.Audit(st, job.Tool, job.ConnectionID, d, args.Arguments, outcome); aerr != nil {
			s.log.ErrorContext(ctx, "task audit failed", "task_id", job.TaskID, "err", aerr)
		}
	}
	status, serr := db.TaskStatusOf(store, s.o.Pool, job.TaskID)
	if serr != nil {
		return serr
	}
	if status != db.TaskWorking {
		return nil // cancelled (or expired) meanwhile
	}
	if err != nil {
		if je := mcpclient.RPCError(err); je != nil {
			s.o.Metrics.ToolCall("proxied", job.Tool, "error", job.RequestID, d)
			b, _ := json.Marshal(je)
			_, err := db.TaskFinish(store, s.o.Pool, job.TaskID, db.TaskFailed, nil, b, je.Message)
			return err
		}
		errorID := httpapi.NewID()
		fail := wire.UpstreamFailure(err, errorID, "call")
		s.log.WarnContext(ctx, "task call failed", "task_id", job.TaskID, "tool", job.Tool, "connection_id", job.ConnectionID, "error_id", errorID, "err", err)
		s.o.Metrics.ToolCall("proxied", job.Tool, "error", job.RequestID, d)
		b := wire.SealJSON(wire.EnvelopeMeta{Tool: job.Tool, Version: "upstream"}, fail)
		_, err := db.TaskFinish(store, s.o.Pool, job.TaskID, db.TaskFailed, b, nil, fail.Message)
		return err
	}
	s.o.Metrics.ToolCall("proxied", job.Tool, outcome, job.RequestID, d) // "ok" or "tool_error"
	_, err = db.TaskFinish(store, s.o.Pool, job.TaskID, db.TaskCompleted, res, nil, "")
	return err
}

// cancel marks the owner's gateway-run task cancelled (a terminal one is left as it is)
// and, the caller owning the task, stops its call when this process runs it.
func (s *Service) cancel(ctx context.Context, st *request.State, id string) (*db.Task, error) {
	row, err := db.TaskCancel(ctx, s.o.Pool, id, st.Workspace, st.Principal.Subject)
	if err != nil {
		return nil, s.lookupError(ctx, err)
	}
	if c, ok := s.cancels.Load(row.ID); ok && row.Status == db.TaskCancelled {
		(*c.(*context.CancelFunc))()
	}
	return row, nil
}

// upstreamResult fetches a routed task's result from its upstream (tasks/result under the
// upstream's own task id) and stores it the first time, with the audit row for a result
// without isError. An upstream JSON-RPC error comes back as the error (see
// mcpclient.RPCError).
func (s *Service) upstreamResult(ctx context.Context, st *request.State, row *db.Task) (json.RawMessage, error) {
	if row.ConnectionID == nil {
		return nil, errUnknownTask // the connection was deleted
	}
	idParams, _ := json.Marshal(map[string]string{"taskId": *row.UpstreamTaskID})
	start := time.Now()
	res, err := s.o.Forward.Raw(ctx, st, *row.ConnectionID, "tasks/result", idParams)
	if err != nil {
		return nil, err
	}
	first, err := db.TaskKeepResult(context.WithoutCancel(ctx), s.o.Pool, row.ID, res)
	if err != nil {
		return nil, s.storeError(ctx, err)
	}
	if first {
		// The arguments went to the upstream when the task was created and are not kept:
		// the row's digest is that of no arguments.
		outcome := forward.AuditOK
		if forward.ResultIsError(res) {
			outcome = forward.AuditToolError
		}
		if err := s.o.Forward.Audit(st, row.Tool, *row.ConnectionID, time.Since(start), nil, outcome); err != nil {
			return nil, wire.Internal(ctx, s.log, "tasks/result", err, nil)
		}
	}
	return res, nil
}

// upstreamStatus asks a routed task's upstream (tasks/get or tasks/cancel, under the
// upstream's own task id), records the status it reports and returns the row with the
// upstream's task (its ttl and pollInterval are shown as sent).
func (s *Service) upstreamStatus(ctx context.Context, st *request.State, method string, row *db.Task) (*db.Task, *upstreamTask, error) {
	if row.ConnectionID == nil {
		return nil, nil, errUnknownTask // the connection was deleted
	}
	idParams, _ := json.Marshal(map[string]string{"taskId": *row.UpstreamTaskID})
	res, err := s.o.Forward.Raw(ctx, st, *row.ConnectionID, method, idParams)
	if err != nil {
		return nil, nil, err
	}
	up := &upstreamTask{}
	_ = json.Unmarshal(res, up)
	if up.Status != "" {
		if row, err = db.TaskSetStatus(context.WithoutCancel(ctx), s.o.Pool, row.ID, up.Status, up.StatusMessage); err != nil {
			return nil, nil, s.storeError(ctx, err)
		}
	}
	return row, up, nil
}

// taskOutcome is the audit outcome of a task's upstream call that answered res or failed
// with err: forward.AuditOK, AuditToolError, AuditRPCError, or FailureOutcome of the
// failure envelope's code (what the synchronous call records).
func taskOutcome(res json.RawMessage, err error) string {
	switch {
	case err == nil && forward.ResultIsError(res):
		return forward.AuditToolError
	case err == nil:
		return forward.AuditOK
	case mcpclient.RPCError(err) != nil:
		return forward.AuditRPCError
	}
	return forward.FailureOutcome(wire.UpstreamFailure(err, "", "call").Code)
}
