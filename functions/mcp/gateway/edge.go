package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/message"
	"github.com/agentpack/gateway/functions/mcp/gateway/response"
	"github.com/agentpack/gateway/functions/mcp/gateway/tasks"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The edge (docs/ARCHITECTURE.md "A proxied call"); the forwarding itself is package forward.
//
// Every MCP POST is read once here. The edge checks the JSON-RPC envelope (an id of a
// type JSON-RPC allows, tools/call arguments that are an object) and then routes:
//
//   - tools/list: answered from the request's server item (server.go): the visible
//     built-ins' definitions and each proxied tool's upstream definition as listed, with
//     only its name changed (and on the aggregate endpoint its MCP Apps ui:// URIs, package
//     apps);
//   - tools/call of a proxied tool, on the single-server endpoint resources/*, prompts/*,
//     completion/complete and skills/*, and on the aggregate endpoint resources/read of an
//     MCP App view (ui://<handle>/…, package apps) or a skill file and skills/*
//     (skill://<handle>/…, package skills): forwarded (package forward: Call, Method). The
//     upstream's result, or its JSON-RPC error, goes back to the client as the upstream's
//     bytes under the client's own id; the gateway changes only the id, and the tool name
//     (and the downstream exchange's _meta fields) on the way up;
//   - everything else (initialize, server/discover, ping, built-in tools, the gateway's
//     own resources and prompts, and any request the edge does not fully understand):
//     go-sdk's server, unchanged.
//
// The table of which method goes where is routes.go.

// serveRPC serves one authenticated MCP POST (see the top of this file).
func (g *Gateway) serveRPC(w *response.Writer, r *http.Request, st *requestState) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		wire.WriteInvalidRequest(w, http.StatusBadRequest, "could not read the request body")
		return
	}
	if len(body) > maxRequestBytes {
		// Read (and drop) the rest first, bounded: a server that answers while the client is
		// still sending makes the client see a reset instead of this answer.
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxDrainBytes))
		wire.WriteHTTP(w, http.StatusRequestEntityTooLarge, message.RequestID(body), wire.Refusal(jsonrpc.CodeInvalidRequest,
			"request body exceeds the gateway's "+strconv.Itoa(maxRequestBytes)+"-byte limit"))
		return
	}
	if direct, target, ok := message.CallByName(body, builtin.CallToolName); ok && st.Single == nil {
		// agentpack_tool_call: served as the direct call it names (message.CallByName).
		body = direct
		if r.Header.Get("Mcp-Name") == builtin.CallToolName {
			r.Header.Set("Mcp-Name", target)
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	if g.cancelled(w, r, st, body) {
		return
	}
	req, refusal := message.Read(body)
	if req != nil {
		logx.Annotate(r.Context(), logx.FieldMCPMethod, req.Method)
		w.RequestID = req.ID
	}
	if refusal != nil {
		logx.Annotate(r.Context(), logx.FieldOutcome, "rpc_error")
		logx.Annotate(r.Context(), logx.FieldRPCCode, strconv.Itoa(refusal.Code))
		if refusal.Code == jsonrpc.CodeInvalidRequest {
			wire.WriteHTTP(w, http.StatusBadRequest, refusal.ID, wire.Refusal(int64(refusal.Code), refusal.Msg))
			return
		}
		wire.Write(w, refusal.ID, nil, wire.Refusal(int64(refusal.Code), refusal.Msg))
		return
	}
	if req != nil && g.edgeRoutes(w, r, st, req) {
		return
	}
	if st.Snapshot.Pending() {
		// A first tools/list page left to go-sdk (a version or header mismatch it answers):
		// its server is built from the whole catalog.
		if err := completeSnapshot(r.Context(), st); err != nil {
			g.writeResolveError(w, r, err)
			return
		}
	}
	if req != nil {
		// go-sdk decodes a numeric id as a float64 (an integer past 2^53 would come back
		// rounded): it sees a stand-in id and the client gets its own id back, byte for byte.
		if swapped, err := jsonobj.SetMember(body, "id", standInID); err == nil {
			r.Body = io.NopCloser(bytes.NewReader(swapped))
			r.ContentLength = int64(len(swapped))
			defer w.RestoreID(req.ID, standInID)
		}
	}
	g.mcp.ServeHTTP(w, r)
	if req != nil && (req.Method == "initialize" || req.Method == "server/discover") {
		w.Edit(func(b []byte) ([]byte, bool) { return tasks.WithCapability(b, st.NewProtocol) }) // tasks capability
	}
}

// standInID is the id go-sdk sees in place of the client's (see serveRPC).
var standInID = json.RawMessage(`1`)

// track registers a forwarded request of st under its JSON-RPC id so that the same
// caller's notifications/cancelled can cancel it (see cancelled); done unregisters it.
func (g *Gateway) track(ctx context.Context, st *requestState, id json.RawMessage) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	key, c := inflightKey(st, id), &cancel // a pointer: func values cannot be compared
	g.inflightMu.Lock()
	if g.inflight == nil {
		g.inflight = map[string][]*context.CancelFunc{}
	}
	g.inflight[key] = append(g.inflight[key], c)
	g.inflightMu.Unlock()
	return ctx, func() {
		g.inflightMu.Lock()
		l := slices.DeleteFunc(g.inflight[key], func(x *context.CancelFunc) bool { return x == c })
		if len(l) == 0 {
			delete(g.inflight, key)
		} else {
			g.inflight[key] = l
		}
		g.inflightMu.Unlock()
		cancel()
	}
}

func inflightKey(st *requestState, id json.RawMessage) string {
	return st.Principal.Subject + "\x00" + st.Workspace + "\x00" + string(id)
}

// cancelled handles a client's notifications/cancelled (MCP "Cancellation"): when it names
// a request of the same principal and workspace that this process is forwarding, that
// request's context is cancelled — the upstream then receives notifications/cancelled for
// the forwarded request and the gateway stops waiting. It answers 202 like any accepted
// notification and reports true; false leaves the body to the rest of the edge. A process
// only knows its own requests: behind API Gateway each concurrent request may run in
// another Lambda instance, where the notification finds nothing (docs/USING.md "Protocol").
func (g *Gateway) cancelled(w *response.Writer, r *http.Request, st *requestState, body []byte) bool {
	id, ok := message.CancelledID(body)
	if !ok {
		return false
	}
	// Two clients sharing a token may both have a request with this id in flight (ids are
	// per client connection): then the notification cannot say which, and nothing is
	// cancelled.
	g.inflightMu.Lock()
	var c *context.CancelFunc
	if l := g.inflight[inflightKey(st, id)]; len(l) == 1 {
		c = l[0]
	}
	g.inflightMu.Unlock()
	if c != nil {
		(*c)()
		g.log.DebugContext(r.Context(), "request cancelled by the client", "request", string(id))
	}
	w.WriteHeader(http.StatusAccepted)
	return true
}

// maxDrainBytes bounds what the edge reads of an oversized body before answering 413.
const maxDrainBytes = 64 << 20

// edgeRoutes answers req itself when it is one of the edge's methods (routeOf) and reports
// whether it did; false leaves the request to go-sdk (nothing written).
func (g *Gateway) edgeRoutes(w *response.Writer, r *http.Request, st *requestState, req *message.Request) bool {
	if routable, answered := screen(w, r, st, req); !routable {
		return answered
	}
	g.serverItem(st) // every routed request finds its key's item (the cache's counters, superseded items retired)
	route := routeOf(st, req.Method)
	return route != nil && route(g, w, r, st, req)
}

// screen keeps from the routes what they must not answer. It answers 400 itself to a
// protocol version the gateway does not know and to a 2026-07-28 Mcp-Name that is not
// encoded as that revision requires (answered), and leaves to go-sdk the version and header
// mismatches it answers precisely, and the tools/* methods of an upstream without tools.
// routable is true when none of these applies.
func screen(w *response.Writer, r *http.Request, st *requestState, req *message.Request) (routable, answered bool) {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !slices.Contains(mcp.SupportedProtocolVersions(), v) {
		// Any version the gateway does not know, of either era ("2099-01-01", "banana",
		// "2024-01-01"): go-sdk would take a later-sorting one for a 2026-era request and
		// answer that _meta is missing.
		logx.Annotate(r.Context(), logx.FieldOutcome, "rpc_error")
		wire.WriteHTTP(w, http.StatusBadRequest, req.ID, wire.UnsupportedVersion(v))
		return false, true
	}
	if !message.VersionServed(r, req) {
		return false, false // go-sdk answers the precise 400: -32020 or -32022 with the supported versions
	}
	if st.NewProtocol && !message.HeadersMatch(r, req) {
		if _, ok := mcpclient.DecodeHeaderValue(r.Header.Get("Mcp-Name")); !ok {
			// go-sdk compares the header's bytes with the body and would serve a raw
			// non-ASCII value that equals it; the revision requires it Base64-encoded.
			writeHeaderMismatch(w, req, message.ErrMcpNameEncoding)
			return false, true
		}
		return false, false // go-sdk answers the precise 400 / -32020
	}
	if st.Single != nil && strings.HasPrefix(req.Method, "tools/") && !singleAllows(st.Single, req.Method) {
		return false, false // an upstream without tools: go-sdk answers as the capabilities say
	}
	return true, false
}

// writeHeaderMismatch answers req 400 with HeaderMismatch (-32020), the 2026-07-28
// transport chapter's answer ("Server Validation") to headers that do not match the body.
func writeHeaderMismatch(w http.ResponseWriter, req *message.Request, err error) {
	wire.WriteHTTP(w, http.StatusBadRequest, req.ID, wire.Refusal(mcp.CodeHeaderMismatch, "header mismatch: "+err.Error()))
}

// reply writes the edge's answer to req (see wire.Write). For a 2026-07-28 client a result
// gets what that revision requires of every result: "resultType" ("complete" when the
// upstream, speaking an older revision, sent none), and on the cacheable results (lists,
// resources/read) "cacheScope" "private" and a "ttlMs" when absent — the answer depends on the caller's credentials, so
// no intermediary may share it, whatever the upstream said. Results for older clients are
// written as they are.
func (g *Gateway) reply(w *response.Writer, st *requestState, req *message.Request, result any, rerr error) {
	var je *jsonrpc.Error
	if rerr != nil && st.NewProtocol && errors.As(rerr, &je) {
		if status := wire.ErrorStatus(je.Code); status != http.StatusOK {
			wire.WriteHTTP(w, status, req.ID, je)
			return
		}
	}
	if rerr != nil || !st.NewProtocol {
		wire.Write(w, req.ID, result, rerr)
		return
	}
	raw, ok := result.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(result)
		if err != nil {
			wire.Write(w, req.ID, nil, wire.Internal(context.Background(), g.log, req.Method, err, nil))
			return
		}
		raw = b
	}
	wire.Write(w, req.ID, message.NewEraResult(req.Method, raw), nil)
}
