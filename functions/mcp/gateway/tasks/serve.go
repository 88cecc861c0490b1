package tasks

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Serve answers tasks/get, tasks/result, tasks/list and tasks/cancel for st's owner in the
// 2025-11-25 form (MCP 2025-11-25 "Tasks"). params are the request's params as sent. The
// result is the method's result (a Task, a task list page, or the call's own result bytes
// for tasks/result); the error a JSON-RPC error: -32602 for invalid params, an unknown,
// foreign or expired task, a cancel of a finished task, a task still working past the
// request's budget, or a cancelled task's result.
func (s *Service) Serve(ctx context.Context, st *request.State, method string, params json.RawMessage) (any, error) {
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
			t, id, ok := parseCursor(p.Cursor)
			if !ok {
				return nil, wire.Refusal(jsonrpc.CodeInvalidParams, "invalid cursor")
			}
			before, beforeID = t, id
		}
		rows, err := db.TaskList(ctx, s.o.Pool, st.Workspace, owner, pageSize+1, before, beforeID)
		if err != nil {
			return nil, s.storeError(ctx, err)
		}
		out := map[string]any{}
		tasks := []map[string]any{}
		for i := range rows {
			if i == pageSize {
				last := rows[i-1]
				out["nextCursor"] = last.CreatedAt.UTC().Format(time.RFC3339Nano) + "|" + last.ID
				break
			}
			tasks = append(tasks, Object(&rows[i]))
		}
		out["tasks"] = tasks
		return out, nil
	case "tasks/cancel":
		before, err := db.TaskGet(ctx, s.o.Pool, p.TaskID, st.Workspace, owner)
		if err != nil {
			return nil, s.lookupError(ctx, err)
		}
		if before.UpstreamTaskID != nil {
			row, up, err := s.upstreamStatus(ctx, st, method, before)
			if err != nil {
				return nil, err
			}
			return withUpstreamTiming(Object(row), up, "ttl", "pollInterval"), nil
		}
		if before.Terminal() {
			// 2025-11-25 "Tasks": a cancel of a terminal task is -32602.
			return nil, wire.Refusal(jsonrpc.CodeInvalidParams, "task is already "+before.Status)
		}
		row, err := s.cancel(ctx, st, p.TaskID)
		if err != nil {
			return nil, err
		}
		return Object(row), nil
	}
	row, err := db.TaskGet(ctx, s.o.Pool, p.TaskID, st.Workspace, owner)
	if err != nil {
		return nil, s.lookupError(ctx, err)
	}
	if row.UpstreamTaskID != nil {
		if method == "tasks/result" {
			res, err := s.upstreamResult(ctx, st, row)
			if err != nil {
				return nil, err
			}
			return s.view(st, row, res), nil
		}
		row, up, err := s.upstreamStatus(ctx, st, method, row)
		if err != nil {
			return nil, err
		}
		return withUpstreamTiming(Object(row), up, "ttl", "pollInterval"), nil
	}
	if method == "tasks/get" {
		return Object(row), nil
	}
	// tasks/result: wait (polling the row) while the task works, within the request's
	// budget; a client that gets "still working" polls tasks/get and asks again.
	deadline := time.Now().Add(s.o.CallTimeout)
	if dl := st.Deadline.Add(-time.Second); !st.Deadline.IsZero() && dl.Before(deadline) {
		deadline = dl
	}
	for !row.Terminal() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if row, err = db.TaskGet(ctx, s.o.Pool, p.TaskID, st.Workspace, owner); err != nil {
			return nil, s.lookupError(ctx, err)
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
	return s.view(st, row, row.Result), nil
}

// ServeExtension answers tasks/get (a DetailedTask), tasks/update and tasks/cancel (empty
// acknowledgements) of task id for st's owner, in the 2026-07-28 extension form
// (SEP-2663). The edge has already checked the method, the Mcp-Name header and the
// declared extension. An unknown, expired or foreign id is -32602.
func (s *Service) ServeExtension(ctx context.Context, st *request.State, method, id string) (any, error) {
	row, err := db.TaskGet(ctx, s.o.Pool, id, st.Workspace, st.Principal.Subject)
	if err != nil {
		return nil, s.lookupError(ctx, err)
	}
	switch method {
	case "tasks/update":
		// The gateway's tasks never wait on input (no inputRequests are issued), so every
		// inputResponses key is one no request is outstanding for: ignored, as SEP-2663
		// "Task Update Requests" says.
		return map[string]any{}, nil
	case "tasks/cancel":
		// An acknowledgement, whatever the task's status (SEP-2663 "Task Cancellation":
		// the server MUST acknowledge; a finished task stays as it is).
		switch {
		case row.Terminal():
		case row.UpstreamTaskID != nil:
			if _, _, err := s.upstreamStatus(ctx, st, method, row); err != nil && mcpclient.RPCError(err) == nil {
				return nil, err
			}
		default:
			if _, err := s.cancel(ctx, st, row.ID); err != nil {
				return nil, err
			}
		}
		return map[string]any{}, nil
	}
	var up *upstreamTask
	if row.UpstreamTaskID != nil && len(row.Result) == 0 && len(row.Error) == 0 && row.Status != db.TaskCancelled {
		if row, up, err = s.upstreamStatus(ctx, st, method, row); err != nil {
			return nil, err
		}
		if row.Status == db.TaskCompleted || row.Status == db.TaskFailed {
			// Inline the outcome: fetch it once from the upstream (2025-11-25 tasks/result).
			res, err := s.upstreamResult(ctx, st, row)
			if je := mcpclient.RPCError(err); je != nil {
				b, _ := json.Marshal(je)
				if err := db.TaskKeepError(context.WithoutCancel(ctx), s.o.Pool, row.ID, b, je.Message); err != nil {
					return nil, s.storeError(ctx, err)
				}
				row.Error = b
			} else if err != nil {
				return nil, err
			} else {
				row.Result = res
			}
		}
	}
	shown := *row
	shown.Result = s.view(st, row, row.Result) // only what is shown; the row is not written
	return withUpstreamTiming(detailed(&shown), up, "ttlMs", "pollIntervalMs"), nil
}

func parseCursor(c string) (time.Time, string, bool) {
	ts, id, ok := strings.Cut(c, "|")
	if !ok {
		return time.Time{}, "", false
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	return t, id, err == nil && id != ""
}
