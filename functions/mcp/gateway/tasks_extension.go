package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tasks at protocol 2026-07-28: the io.modelcontextprotocol/tasks extension (SEP-2663,
// docs/TASKS.md). The same rows and worker as the 2025-11-25 form (tasks.go); what
// differs is the wire:
//
//   - the capability is capabilities.extensions["io.modelcontextprotocol/tasks"], never
//     capabilities.tasks;
//   - a client declares the extension per request, in
//     _meta["io.modelcontextprotocol/clientCapabilities"].extensions; the server alone
//     decides whether a tools/call becomes a task (the "task" member is ignored). The
//     gateway makes a task of a call to a tool whose upstream definition says
//     execution.taskSupport "optional" or "required", for a client that declared the
//     extension; every other call runs synchronously. A "required" tool called by a client
//     that did not declare it answers -32021 naming the extension;
//   - the CreateTaskResult is flat (resultType "task", ttlMs, pollIntervalMs), tasks/get
//     inlines the result ("completed", isError results included) or the JSON-RPC error
//     ("failed"); tasks/result and tasks/list are gone (-32601); tasks/cancel and
//     tasks/update answer an empty acknowledgement, also for a finished task;
//   - tasks/get, tasks/update and tasks/cancel need the extension declared (-32021) and an
//     Mcp-Name header equal to params.taskId (-32020, SEP-2663 "Streamable HTTP: Routing
//     Headers").

// tasksExtension is the extension identifier (SEP-2663).
const tasksExtension = "io.modelcontextprotocol/tasks"

// errMissingTasksExtension is SEP-2663's answer to a client that did not declare the
// extension on a request the server cannot serve without it (-32021, SEP-2575 "Missing
// Required Client Capabilities", data.requiredCapabilities naming the extension).
var errMissingTasksExtension = &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
	Message: "missing required client capability: this request needs the " + tasksExtension + " extension declared in _meta." + mcp.MetaKeyClientCapabilities,
	Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + tasksExtension + `":{}}}}`)}

// clientDeclaresTasks reports whether a 2026-07-28 request's params declare the tasks
// extension in their per-request client capabilities.
func clientDeclaresTasks(params json.RawMessage) bool {
	var p struct {
		Meta struct {
			Caps struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	v, ok := p.Meta.Caps.Extensions[tasksExtension]
	return ok && string(v) != "null"
}

// serveToolTask answers a tools/call as a task when the caller's revision and the tool say
// so, and reports whether it answered; false leaves the call to the synchronous path.
// 2025-11-25: a "task" member asks for one (MCP 2025-11-25 "Tasks"). 2026-07-28: see the
// comment at the top of this file.
func (g *Gateway) serveToolTask(w *limitedWriter, r *http.Request, st *requestState, req *rpcRequest, it *serverItem, name string) bool {
	p := req.call
	if st.NewProtocol {
		ref, proxied := it.lookup(st, name)
		if !proxied || g.builtins.Lookup(name) != nil {
			return false // built-ins answer at once; unknown tools get go-sdk's answer
		}
		ts := taskSupport(ref.Tool.Definition)
		if ts != "optional" && ts != "required" {
			return false
		}
		if !clientDeclaresTasks(req.params) {
			if ts != "required" {
				return false
			}
			g.replyTask(w, st, req, nil, errMissingTasksExtension)
			return true
		}
		row, other, err := g.createTask(r.Context(), st, name, &ref, nil, req.params, p)
		if row != nil {
			g.replyTask(w, st, req, createTaskResult(row), nil)
			return true
		}
		g.replyTask(w, st, req, other, err)
		return true
	}
	if p["task"] == nil || !tasksEnabled(st, r.Header.Get("Mcp-Protocol-Version")) {
		return false
	}
	if string(p["task"]) == "null" || p["task"][0] != '{' {
		g.reply(w, st, req, nil, wire.InvalidParams("task must be an object"))
		return true
	}
	ref, proxied := it.lookup(st, name)
	b := g.builtins.Lookup(name)
	var row *db.Task
	var other any
	var err error
	switch {
	case b != nil && st.Single == nil:
		row, other, err = g.createTask(r.Context(), st, name, nil, b, req.params, p)
	case proxied:
		row, other, err = g.createTask(r.Context(), st, name, &ref, nil, req.params, p)
	default:
		return false // unknown tool: go-sdk's answer
	}
	if row != nil {
		other = map[string]any{"task": taskObject(row)}
	}
	g.reply(w, st, req, other, err)
	return true
}

// serveTaskMethod answers a tasks/* request and reports whether it did (false: a method
// the 2025-11-25 form does not define, left to go-sdk).
func (g *Gateway) serveTaskMethod(w *limitedWriter, r *http.Request, st *requestState, req *rpcRequest) bool {
	if !st.NewProtocol {
		switch req.method {
		case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
			res, rerr := g.serveTasks(r.Context(), st, req.method, req.params)
			g.reply(w, st, req, res, rerr)
			return true
		}
		return false
	}
	switch req.method {
	case "tasks/get", "tasks/update", "tasks/cancel":
	default:
		// tasks/result and tasks/list are removed (SEP-2663 "Backward Compatibility"); the
		// tasks/ prefix is the extension's.
		g.replyTask(w, st, req, nil, wire.Refusal(jsonrpc.CodeMethodNotFound, "method not found: "+req.method+" is not part of the "+tasksExtension+" extension"))
		return true
	}
	var p struct {
		TaskID *string `json:"taskId"`
	}
	if json.Unmarshal(req.params, &p) != nil || p.TaskID == nil {
		g.replyTask(w, st, req, nil, wire.InvalidParams("taskId must be a string"))
		return true
	}
	if r.Header.Get("Mcp-Name") != *p.TaskID {
		g.replyTask(w, st, req, nil, wire.Refusal(mcp.CodeHeaderMismatch, "header mismatch: Mcp-Name must equal params.taskId"))
		return true
	}
	if !clientDeclaresTasks(req.params) {
		g.replyTask(w, st, req, nil, errMissingTasksExtension)
		return true
	}
	res, rerr := g.serveTasksExtension(r.Context(), st, req.method, *p.TaskID)
	g.replyTask(w, st, req, res, rerr)
	return true
}

// serveTasksExtension answers tasks/get (a DetailedTask), tasks/update and tasks/cancel
// (empty acknowledgements) for st's owner (SEP-2663). An unknown, expired or foreign id
// is -32602.
func (g *Gateway) serveTasksExtension(ctx context.Context, st *requestState, method, id string) (any, error) {
	row, err := db.TaskGet(ctx, g.o.Pool, id, st.Workspace, st.Principal.Subject)
	if err != nil {
		return nil, g.taskLookupError(ctx, err)
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
			if _, _, err := g.upstreamTaskStatus(ctx, st, method, row); err != nil && mcpclient.RPCError(err) == nil {
				return nil, err
			}
		default:
			if _, err := g.cancelTask(ctx, st, row.ID); err != nil {
				return nil, err
			}
		}
		return map[string]any{}, nil
	}
	var up *upstreamTask
	if row.UpstreamTaskID != nil && len(row.Result) == 0 && len(row.Error) == 0 && row.Status != db.TaskCancelled {
		if row, up, err = g.upstreamTaskStatus(ctx, st, method, row); err != nil {
			return nil, err
		}
		if row.Status == db.TaskCompleted || row.Status == db.TaskFailed {
			// Inline the outcome: fetch it once from the upstream (2025-11-25 tasks/result).
			res, err := g.upstreamTaskResult(ctx, st, row)
			if je := mcpclient.RPCError(err); je != nil {
				b, _ := json.Marshal(je)
				if err := db.TaskKeepError(context.WithoutCancel(ctx), g.o.Pool, row.ID, b, je.Message); err != nil {
					return nil, g.taskStoreError(ctx, err)
				}
				row.Error = b
			} else if err != nil {
				return nil, err
			} else {
				row.Result = res
			}
		}
	}
	return withUpstreamTiming(detailedTask(row), up, "ttlMs", "pollIntervalMs"), nil
}

// taskFields is the SEP-2663 Task of row t: integer milliseconds under ttlMs and
// pollIntervalMs.
func taskFields(t *db.Task) map[string]any {
	o := map[string]any{
		"taskId": t.ID, "status": t.Status, "ttlMs": t.TTLMS,
		"createdAt":      t.CreatedAt.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt":  t.LastUpdatedAt.UTC().Format(time.RFC3339Nano),
		"pollIntervalMs": t.PollIntervalMS,
	}
	if t.StatusMessage != nil {
		o["statusMessage"] = *t.StatusMessage
	}
	return o
}

// createTaskResult is the flat CreateTaskResult of row t (SEP-2663 "Task Creation").
func createTaskResult(t *db.Task) map[string]any {
	o := detailedTask(t)
	delete(o, "result")
	delete(o, "error")
	o["resultType"] = "task"
	return o
}

// detailedTask is the tasks/get answer of row t (SEP-2663 DetailedTask): a finished call
// with a result is "completed" with the result inlined — isError results too, and the
// gateway's own isError envelope for a call it could not complete (stored as failed for
// the 2025-11-25 form); a JSON-RPC error is "failed" with the error inlined;
// "input_required" from a routed upstream is shown as "working" (the gateway cannot
// relay its input requests).
func detailedTask(t *db.Task) map[string]any {
	o := taskFields(t)
	switch {
	case t.Status == db.TaskCancelled:
	case len(t.Error) > 0:
		o["status"] = db.TaskFailed
		o["error"] = json.RawMessage(t.Error)
	case len(t.Result) > 0 && (t.Status == db.TaskCompleted || t.Status == db.TaskFailed):
		o["status"] = db.TaskCompleted
		o["result"] = json.RawMessage(t.Result)
	case t.Status == db.TaskFailed:
		msg := "task failed"
		if t.StatusMessage != nil {
			msg = *t.StatusMessage
		}
		o["error"] = wire.Refusal(jsonrpc.CodeInternalError, msg)
	default:
		o["status"] = db.TaskWorking
	}
	return o
}

// replyTask is reply, with a 2026-07-28 JSON-RPC error sent under the HTTP status
// SEP-2575 gives its code (as go-sdk does for its own answers): 404 for -32601, 400 for
// -32602, -32020 and -32021.
func (g *Gateway) replyTask(w *limitedWriter, st *requestState, req *rpcRequest, result any, rerr error) {
	var je *jsonrpc.Error
	if st.NewProtocol && errors.As(rerr, &je) {
		switch je.Code {
		case jsonrpc.CodeMethodNotFound:
			wire.WriteHTTP(w, http.StatusNotFound, req.id, je)
			return
		case jsonrpc.CodeInvalidParams, mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapabilities:
			wire.WriteHTTP(w, http.StatusBadRequest, req.id, je)
			return
		}
	}
	g.reply(w, st, req, result, rerr)
}
