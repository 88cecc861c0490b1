package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentpack/gateway/functions/mcp/gateway/access"
	"github.com/agentpack/gateway/functions/mcp/gateway/apps"
	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/message"
	"github.com/agentpack/gateway/functions/mcp/gateway/response"
	"github.com/agentpack/gateway/functions/mcp/gateway/skills"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A route answers one request the edge serves itself (edgeRoutes) and reports whether it
// did; false leaves the request to go-sdk, with nothing written.
type route func(g *Gateway, w *response.Writer, r *http.Request, st *requestState, req *message.Request) bool

// The edge's own methods on each endpoint (routeOf); every other method is go-sdk's.
var (
	aggregateRoutes = map[string]route{
		"tools/list":     (*Gateway).routeToolsList,
		"tools/call":     (*Gateway).routeToolsCall,
		"resources/read": (*Gateway).routeHandleRead, // ui://<handle>/… and skill://<handle>/…
		"skills/list":    (*Gateway).routeSkills,
		"skills/get":     (*Gateway).routeSkills,
	}
	singleRoutes = map[string]route{
		"tools/list":       (*Gateway).routeToolsList,
		"tools/call":       (*Gateway).routeToolsCall,
		"logging/setLevel": (*Gateway).routeSingleLogging,
	}
)

// routeOf is the route of method on st's endpoint, nil when go-sdk serves it: tasks/* on
// both endpoints (tasks.go), the aggregate endpoint's table, and on the single-server
// endpoint every method forward passes through, then its table.
func routeOf(st *requestState, method string) route {
	switch {
	case strings.HasPrefix(method, "tasks/"):
		return (*Gateway).routeTasks
	case st.Single == nil:
		return aggregateRoutes[method]
	case forward.PassThrough(method):
		return (*Gateway).routePassThrough
	}
	return singleRoutes[method]
}

// answer replies to req with f's outcome, f running under a context the client's
// notifications/cancelled can cancel (track). It reports true: req is answered.
func (g *Gateway) answer(w *response.Writer, r *http.Request, st *requestState, req *message.Request, f func(ctx context.Context) (json.RawMessage, error)) bool {
	ctx, done := g.track(r.Context(), st, req.ID)
	defer done()
	res, err := f(ctx)
	g.reply(w, st, req, res, err)
	return true
}

// routeToolsList answers tools/list from the request's server item (tools.go); a cursor
// the list never issued is -32602, params that are no object go-sdk's.
func (g *Gateway) routeToolsList(w *response.Writer, r *http.Request, st *requestState, req *message.Request) bool {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(req.Params) > 0 && string(req.Params) != "null" {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return false
		}
	}
	if p.Cursor == "" && st.Snapshot.Pending() {
		page, ok, err := g.firstPage(r.Context(), st)
		if err == nil && ok {
			g.reply(w, st, req, json.RawMessage(page), nil)
			st.Snapshot.ReadAll() // the rest of the catalog, now that the first page is out
			return true
		}
		if err == nil {
			err = completeSnapshot(r.Context(), st)
		}
		if err != nil {
			g.reply(w, st, req, nil, apperr.Wrap(err, apperr.Unavailable, "catalog unavailable"))
			return true
		}
	}
	page, ok := g.serverItem(st).toolsList(g, st, p.Cursor)
	if !ok {
		g.reply(w, st, req, nil, wire.Refusal(jsonrpc.CodeInvalidParams, "invalid cursor"))
		return true
	}
	g.reply(w, st, req, page, nil)
	return true
}

// routeToolsCall answers a tools/call: the access policies' "call" decision first
// (policyCall, package access), then a task when the revision and the tool make it one (tasks.go), an
// unknown tool's -32602, and a proxied tool's call forwarded (package forward; on the
// aggregate endpoint its result's MCP App views under the connection's handle, package
// apps). A built-in is go-sdk's.
func (g *Gateway) routeToolsCall(w *response.Writer, r *http.Request, st *requestState, req *message.Request) bool {
	p := req.Call
	var name string
	if json.Unmarshal(p["name"], &name) != nil {
		return false
	}
	it := g.serverItem(st)
	if d, err := g.policyCall(r.Context(), st, it, name, p["arguments"]); d != nil || err != nil {
		if err != nil {
			g.reply(w, st, req, nil, err)
		} else {
			g.reply(w, st, req, json.RawMessage(wire.SealJSON(d.Meta, d.Fail)), nil)
		}
		return true
	}
	if g.serveToolTask(w, r, st, req, it, name) {
		return true
	}
	ref, ok := it.lookup(st, name)
	if !ok && g.builtins.Lookup(name) == nil {
		g.reply(w, st, req, nil, wire.Refusal(jsonrpc.CodeInvalidParams, unknownTool(g, st, it, name)))
		return true
	}
	if !ok {
		return false // a built-in: go-sdk serves it (or refuses one st may not see)
	}
	if st.NewProtocol {
		// The tool's x-mcp-header parameters: the client mirrored them (the gateway lists
		// the upstream's definition), and a server that reads the body checks them.
		if err := mcpclient.CheckParamHeaders(r.Header, ref.Tool.InputSchema, p["arguments"]); err != nil {
			writeHeaderMismatch(w, req, err)
			return true
		}
	}
	return g.answer(w, r, st, req, func(ctx context.Context) (json.RawMessage, error) {
		res, err := g.forward.Call(ctx, st.State, ref, forward.PlainParams(req.Params), p)
		if err == nil && st.Single == nil {
			res = apps.CallResult(res, ref.Conn.Handle) // views under the handle, as tools/list
		}
		return res, err
	})
}

// policyCall is the access policies' "call" decision for tool name with args under st
// (access.Checker.Call), made at most once per request: nil to go on, else the denial,
// already audited and counted.
func (g *Gateway) policyCall(ctx context.Context, st *requestState, it *serverItem, name string, args json.RawMessage) (*access.Denial, error) {
	st.policyDone = true
	return g.policies.Call(ctx, st.State, name, func(n string) (forward.Ref, bool) { return it.lookup(st, n) }, args)
}

// routeTasks answers tasks/* when the request's revision defines tasks (tasks.go).
func (g *Gateway) routeTasks(w *response.Writer, r *http.Request, st *requestState, req *message.Request) bool {
	return tasksEnabled(st, r.Header.Get("Mcp-Protocol-Version")) && g.serveTaskMethod(w, r, st, req)
}

// routeHandleRead answers the aggregate endpoint's resources/read of a URI under a
// connection's handle: an MCP App view (ui://<handle>/…, package apps) or a skill file
// (skill://<handle>/…, package skills). Every other URI is go-sdk's.
func (g *Gateway) routeHandleRead(w *response.Writer, r *http.Request, st *requestState, req *message.Request) bool {
	views := g.serverItem(st).appsOf(st)
	if uri, ok := views.Reads(req.Params); ok {
		return g.answer(w, r, st, req, func(ctx context.Context) (json.RawMessage, error) {
			return views.Read(ctx, g.forward, st.State, uri, req.Params)
		})
	}
	conns := skills.Connections(st.State)
	if uri, ok := conns.Reads(req.Params); ok {
		return g.answer(w, r, st, req, func(ctx context.Context) (json.RawMessage, error) {
			return g.skills.Read(ctx, st.State, conns, uri, req.Params)
		})
	}
	return false
}

// routeSkills answers skills/list and skills/get on the aggregate endpoint (package
// skills); with no visible connection that declared the extension it is not advertised,
// and go-sdk answers method not found.
func (g *Gateway) routeSkills(w *response.Writer, r *http.Request, st *requestState, req *message.Request) bool {
	conns := skills.Connections(st.State)
	if len(conns) == 0 {
		return false
	}
	return g.answer(w, r, st, req, func(ctx context.Context) (json.RawMessage, error) {
		return g.skills.Serve(ctx, st.State, conns, req.Method, req.Params)
	})
}

// routeSingleLogging answers logging/setLevel -32601 on a single-server endpoint whose
// upstream does not declare logging: go-sdk would answer {} whatever the capabilities say.
// (At 2026-07-28 the method does not exist and go-sdk answers its 404 / -32601.)
func (g *Gateway) routeSingleLogging(w *response.Writer, r *http.Request, st *requestState, req *message.Request) bool {
	if st.NewProtocol || singleAllows(st.Single, req.Method) {
		return false
	}
	g.reply(w, st, req, nil, wire.Refusal(jsonrpc.CodeMethodNotFound,
		"method not found: this server does not declare the logging capability"))
	return true
}

// routePassThrough forwards a single-server endpoint's pass-through method to its upstream
// (forward.PassThrough), or answers -32601 when the upstream did not declare the capability
// the method belongs to, consistent with the capabilities advertised (go-sdk would answer
// an empty list).
func (g *Gateway) routePassThrough(w *response.Writer, r *http.Request, st *requestState, req *message.Request) bool {
	if !singleAllows(st.Single, req.Method) {
		g.reply(w, st, req, nil, wire.Refusal(jsonrpc.CodeMethodNotFound,
			"method not found: this server does not declare the capability"))
		return true
	}
	return g.answer(w, r, st, req, func(ctx context.Context) (json.RawMessage, error) {
		return g.forward.Method(ctx, st.State, st.Single, req.Method, req.Params)
	})
}
