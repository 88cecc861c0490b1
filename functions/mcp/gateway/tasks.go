package gateway

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentpack/gateway/functions/mcp/gateway/message"
	"github.com/agentpack/gateway/functions/mcp/gateway/response"
	"github.com/agentpack/gateway/functions/mcp/gateway/tasks"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/mcpclient"
)

// The edge's part of MCP Tasks (docs/TASKS.md): which requests become or concern a task,
// the checks on their headers and declared capabilities, and the answer's HTTP status.
// The tasks themselves — rows, worker, both wire forms — are package tasks.
//
// At 2025-11-25 a "task" member asks for a task (MCP 2025-11-25 "Tasks"). At 2026-07-28
// (the io.modelcontextprotocol/tasks extension, SEP-2663) a client declares the extension
// per request, in _meta["io.modelcontextprotocol/clientCapabilities"].extensions; the
// server alone decides whether a tools/call becomes a task (the "task" member is
// ignored). The gateway makes a task of a call to a tool whose upstream definition says
// execution.taskSupport "optional" or "required", for a client that declared the
// extension; every other call runs synchronously. A "required" tool called by a client
// that did not declare it answers -32021 naming the extension. tasks/get, tasks/update and
// tasks/cancel need the extension declared (-32021) and an Mcp-Name header equal to
// params.taskId (-32020, SEP-2663 "Streamable HTTP: Routing Headers"); tasks/result and
// tasks/list are gone (-32601).

// RunTask runs a gateway task's call: the worker's entry point, called by the
// asynchronous invocation Options.StartTask made (see tasks.Service.Run).
func (g *Gateway) RunTask(ctx context.Context, job tasks.Job) error { return g.tasks.Run(ctx, job) }

// tasksEnabled reports whether the request's protocol revision defines tasks.
func tasksEnabled(st *requestState, version string) bool {
	return st.NewProtocol || version >= tasks.MinVersion
}

// serveToolTask answers a tools/call as a task when the caller's revision and the tool say
// so, and reports whether it answered; false leaves the call to the synchronous path.
func (g *Gateway) serveToolTask(w *response.Writer, r *http.Request, st *requestState, req *message.Request, it *serverItem, name string) bool {
	p := req.Call
	if st.NewProtocol {
		ref, proxied := it.lookup(st, name)
		if !proxied || g.builtins.Lookup(name) != nil {
			return false // built-ins answer at once; unknown tools get go-sdk's answer
		}
		ts := tasks.Support(ref.Tool.Definition)
		if ts != "optional" && ts != "required" {
			return false
		}
		if !tasks.ClientDeclares(req.Params) {
			if ts != "required" {
				return false
			}
			g.reply(w, st, req, nil, tasks.ErrMissingExtension)
			return true
		}
		row, other, err := g.tasks.Create(r.Context(), st.State, name, &ref, nil, req.Params, p)
		if row != nil {
			g.reply(w, st, req, tasks.CreateResult(row), nil)
			return true
		}
		g.reply(w, st, req, other, err)
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
		row, other, err = g.tasks.Create(r.Context(), st.State, name, nil, b, req.Params, p)
	case proxied:
		row, other, err = g.tasks.Create(r.Context(), st.State, name, &ref, nil, req.Params, p)
	default:
		return false // unknown tool: go-sdk's answer
	}
	if row != nil {
		other = map[string]any{"task": tasks.Object(row)}
	}
	g.reply(w, st, req, other, err)
	return true
}

// serveTaskMethod answers a tasks/* request and reports whether it did (false: a method
// the 2025-11-25 form does not define, left to go-sdk).
func (g *Gateway) serveTaskMethod(w *response.Writer, r *http.Request, st *requestState, req *message.Request) bool {
	if !st.NewProtocol {
		switch req.Method {
		case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
			res, rerr := g.tasks.Serve(r.Context(), st.State, req.Method, req.Params)
			g.reply(w, st, req, res, rerr)
			return true
		}
		return false
	}
	switch req.Method {
	case "tasks/get", "tasks/update", "tasks/cancel":
	default:
		// tasks/result and tasks/list are removed (SEP-2663 "Backward Compatibility"); the
		// tasks/ prefix is the extension's.
		g.reply(w, st, req, nil, wire.Refusal(jsonrpc.CodeMethodNotFound, "method not found: "+req.Method+" is not part of the "+tasks.Extension+" extension"))
		return true
	}
	var p struct {
		TaskID *string `json:"taskId"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.TaskID == nil {
		g.reply(w, st, req, nil, wire.InvalidParams("taskId must be a string"))
		return true
	}
	// An Mcp-Name in the Base64 sentinel form (=?base64?…?=) is decoded before the
	// comparison (2026-07-28 transport, "Value Encoding").
	if name, ok := mcpclient.DecodeHeaderValue(r.Header.Get("Mcp-Name")); !ok || name != *p.TaskID {
		g.reply(w, st, req, nil, wire.Refusal(mcp.CodeHeaderMismatch, "header mismatch: Mcp-Name must equal params.taskId"))
		return true
	}
	if !tasks.ClientDeclares(req.Params) {
		g.reply(w, st, req, nil, tasks.ErrMissingExtension)
		return true
	}
	res, rerr := g.tasks.ServeExtension(r.Context(), st.State, req.Method, *p.TaskID)
	g.reply(w, st, req, res, rerr)
	return true
}
