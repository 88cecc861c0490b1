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
	"unicode/utf8"

	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
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

// rpcRequest is one JSON-RPC request as the edge reads it.
type rpcRequest struct {
	id     json.RawMessage // exactly as sent
	method string
	params json.RawMessage // nil when absent
	// call holds a tools/call's params members, decoded once by readRequest.
	call map[string]json.RawMessage
}

// edgeRefusal is a JSON-RPC error the edge answers without going further.
type edgeRefusal struct {
	id   json.RawMessage // nil: answered with id null
	code int
	msg  string
}

// readRequest decodes body when it is one JSON-RPC request object that the edge can route.
// It returns (nil, nil) when go-sdk should serve the body as it is (notifications,
// batches, unparsable JSON, missing members: go-sdk's own errors are precise), and a
// refusal for the inputs JSON-RPC 2.0 §4–§5 and MCP rule out that go-sdk would answer
// wrongly: an empty batch ("[]": -32600, id null), an id that is not a string or an
// integer (true, {}, [1], 1.5, 1e3, null: -32600, id null — the id is never guessed), and a
// tools/call whose arguments are not an object (-32602, MCP "tools/call": arguments is an
// object; absent means {}).
func readRequest(body []byte) (*rpcRequest, *edgeRefusal) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) == nil && len(batch) == 0 {
			return nil, &edgeRefusal{code: jsonrpc.CodeInvalidRequest, msg: "invalid request: empty batch"}
		}
		return nil, nil
	}
	if !utf8.Valid(trimmed) {
		return nil, nil
	}
	m, ok := jsonobj.Members(trimmed)
	if !ok {
		return nil, nil
	}
	id, hasID := m["id"]
	if hasID && !validID(id) {
		return nil, &edgeRefusal{code: jsonrpc.CodeInvalidRequest,
			msg: "invalid request: id must be a string or an integer"}
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil || !hasID || string(m["jsonrpc"]) != `"2.0"` {
		return nil, nil // a notification, or not a request go-sdk would accept either
	}
	req := &rpcRequest{id: id, method: method, params: m["params"]}
	if method == "tools/call" {
		p, ok := jsonobj.Members(req.params)
		if !ok {
			return nil, nil
		}
		for k := range p {
			if k != "name" && k != "arguments" && (strings.EqualFold(k, "name") || strings.EqualFold(k, "arguments")) {
				// A case-insensitive decoder upstream could take this one instead of the
				// member the gateway checked.
				return nil, &edgeRefusal{id: id, code: jsonrpc.CodeInvalidParams,
					msg: "invalid params: member " + strconv.Quote(k) + " differs from \"name\"/\"arguments\" only in case"}
			}
		}
		if a, has := p["arguments"]; has && (len(a) == 0 || a[0] != '{') {
			return nil, &edgeRefusal{id: id, code: jsonrpc.CodeInvalidParams,
				msg: "invalid params: tools/call arguments must be an object"}
		}
		req.call = p
	}
	return req, nil
}

// validID reports whether raw is a JSON string or an integer (no fraction, no exponent):
// the ids MCP allows (JSON-RPC 2.0 §4: numbers should not have fractional parts; MCP: not
// null). Such an id is echoed byte for byte, so any length of integer round-trips.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case c == '-' || (c >= '0' && c <= '9'):
		digits := raw
		if c == '-' {
			digits = raw[1:]
		}
		if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
			return false
		}
		for _, d := range digits {
			if d < '0' || d > '9' {
				return false
			}
		}
		return true
	}
	return false
}

// serveRPC serves one authenticated MCP POST (see the top of this file).
func (g *Gateway) serveRPC(w *limitedWriter, r *http.Request, st *requestState) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		wire.WriteInvalidRequest(w, http.StatusBadRequest, "could not read the request body")
		return
	}
	if len(body) > maxRequestBytes {
		// Read (and drop) the rest first, bounded: a server that answers while the client is
		// still sending makes the client see a reset instead of this answer.
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxDrainBytes))
		wire.WriteHTTP(w, http.StatusRequestEntityTooLarge, requestID(body), wire.Refusal(jsonrpc.CodeInvalidRequest,
			"request body exceeds the gateway's "+strconv.Itoa(maxRequestBytes)+"-byte limit"))
		return
	}
	if direct, target, ok := callByName(body); ok && st.Single == nil {
		// agentpack_tool_call: served as the direct call it names (discovery.go).
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
	req, refusal := readRequest(body)
	if req != nil {
		logx.Annotate(r.Context(), logx.FieldMCPMethod, req.method)
		w.reqID = req.id
	}
	if refusal != nil {
		logx.Annotate(r.Context(), logx.FieldOutcome, "rpc_error")
		logx.Annotate(r.Context(), logx.FieldRPCCode, strconv.Itoa(refusal.code))
		if refusal.code == jsonrpc.CodeInvalidRequest {
			wire.WriteHTTP(w, http.StatusBadRequest, refusal.id, wire.Refusal(int64(refusal.code), refusal.msg))
			return
		}
		wire.Write(w, refusal.id, nil, wire.Refusal(int64(refusal.code), refusal.msg))
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
			defer w.restoreID(req.id)
		}
	}
	g.mcp.ServeHTTP(w, r)
	if req != nil && (req.method == "initialize" || req.method == "server/discover") {
		w.withTaskCapability(st.NewProtocol)
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
func (g *Gateway) cancelled(w *limitedWriter, r *http.Request, st *requestState, body []byte) bool {
	if !bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
		return false
	}
	m, ok := jsonobj.Members(bytes.TrimSpace(body))
	if !ok || string(m["method"]) != `"notifications/cancelled"` || m["id"] != nil {
		return false
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m["params"], &p) != nil || !validID(p.RequestID) {
		return false
	}
	// Two clients sharing a token may both have a request with this id in flight (ids are
	// per client connection): then the notification cannot say which, and nothing is
	// cancelled.
	g.inflightMu.Lock()
	var c *context.CancelFunc
	if l := g.inflight[inflightKey(st, p.RequestID)]; len(l) == 1 {
		c = l[0]
	}
	g.inflightMu.Unlock()
	if c != nil {
		(*c)()
		g.log.DebugContext(r.Context(), "request cancelled by the client", "request", string(p.RequestID))
	}
	w.WriteHeader(http.StatusAccepted)
	return true
}

// maxDrainBytes bounds what the edge reads of an oversized body before answering 413.
const maxDrainBytes = 64 << 20

// edgeRoutes answers req itself when it is one of the edge's methods (routeOf) and reports
// whether it did; false leaves the request to go-sdk (nothing written).
func (g *Gateway) edgeRoutes(w *limitedWriter, r *http.Request, st *requestState, req *rpcRequest) bool {
	if routable, answered := screen(w, r, st, req); !routable {
		return answered
	}
	g.serverItem(st) // every routed request finds its key's item (the cache's counters, superseded items retired)
	route := routeOf(st, req.method)
	return route != nil && route(g, w, r, st, req)
}

// screen keeps from the routes what they must not answer. It answers 400 itself to a
// protocol version the gateway does not know and to a 2026-07-28 Mcp-Name that is not
// encoded as that revision requires (answered), and leaves to go-sdk the version and header
// mismatches it answers precisely, and the tools/* methods of an upstream without tools.
// routable is true when none of these applies.
func screen(w *limitedWriter, r *http.Request, st *requestState, req *rpcRequest) (routable, answered bool) {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !slices.Contains(mcp.SupportedProtocolVersions(), v) {
		// Any version the gateway does not know, of either era ("2099-01-01", "banana",
		// "2024-01-01"): go-sdk would take a later-sorting one for a 2026-era request and
		// answer that _meta is missing.
		logx.Annotate(r.Context(), logx.FieldOutcome, "rpc_error")
		wire.WriteHTTP(w, http.StatusBadRequest, req.id, wire.UnsupportedVersion(v))
		return false, true
	}
	if !versionServed(r, req) {
		return false, false // go-sdk answers the precise 400: -32020 or -32022 with the supported versions
	}
	if st.NewProtocol && !newProtocolHeadersMatch(r, req) {
		if _, ok := mcpclient.DecodeHeaderValue(r.Header.Get("Mcp-Name")); !ok {
			// go-sdk compares the header's bytes with the body and would serve a raw
			// non-ASCII value that equals it; the revision requires it Base64-encoded.
			writeHeaderMismatch(w, req, errMcpNameEncoding)
			return false, true
		}
		return false, false // go-sdk answers the precise 400 / -32020
	}
	if st.Single != nil && strings.HasPrefix(req.method, "tools/") && !singleAllows(st.Single, req.method) {
		return false, false // an upstream without tools: go-sdk answers as the capabilities say
	}
	return true, false
}

// errMcpNameEncoding is the answer to an Mcp-Name whose value is neither printable ASCII
// nor in the Base64 sentinel form with a valid payload (2026-07-28 transport, "Value
// Encoding": a value that is not plain ASCII MUST be sent as =?base64?{value}?=).
var errMcpNameEncoding = errors.New("the Mcp-Name header value must be printable ASCII or Base64-encoded as =?base64?{value}?=")

// writeHeaderMismatch answers req 400 with HeaderMismatch (-32020), the 2026-07-28
// transport chapter's answer ("Server Validation") to headers that do not match the body.
func writeHeaderMismatch(w http.ResponseWriter, req *rpcRequest, err error) {
	wire.WriteHTTP(w, http.StatusBadRequest, req.id, wire.Refusal(mcp.CodeHeaderMismatch, "header mismatch: "+err.Error()))
}

// reply writes the edge's answer to req (see wire.Write). For a 2026-07-28 client a result
// gets what that revision requires of every result: "resultType" ("complete" when the
// upstream, speaking an older revision, sent none), and on the cacheable results (lists,
// resources/read) "cacheScope" "private" and a "ttlMs" when absent — the answer depends on the caller's credentials, so
// no intermediary may share it, whatever the upstream said. Results for older clients are
// written as they are.
func (g *Gateway) reply(w *limitedWriter, st *requestState, req *rpcRequest, result any, rerr error) {
	var je *jsonrpc.Error
	if rerr != nil && st.NewProtocol && errors.As(rerr, &je) {
		if status := wire.ErrorStatus(je.Code); status != http.StatusOK {
			wire.WriteHTTP(w, status, req.id, je)
			return
		}
	}
	if rerr != nil || !st.NewProtocol {
		wire.Write(w, req.id, result, rerr)
		return
	}
	raw, ok := result.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(result)
		if err != nil {
			wire.Write(w, req.id, nil, wire.Internal(context.Background(), g.log, req.method, err, nil))
			return
		}
		raw = b
	}
	wire.Write(w, req.id, newEraResult(req.method, raw), nil)
}

// newEraResult adds the members a 2026-07-28 result must have (see reply); a result that is
// not a JSON object is returned as it is.
func newEraResult(method string, raw json.RawMessage) json.RawMessage {
	m, ok := jsonobj.Members(raw)
	if !ok {
		return raw
	}
	out := raw
	set := func(k, v string) {
		if o, err := jsonobj.SetMember(out, k, json.RawMessage(v)); err == nil {
			out = o
		}
	}
	if m["resultType"] == nil {
		set("resultType", `"complete"`)
	}
	if strings.HasSuffix(method, "/list") || method == "resources/read" {
		if string(m["cacheScope"]) != `"private"` {
			set("cacheScope", `"private"`)
		}
		if m["ttlMs"] == nil {
			set("ttlMs", `0`)
		}
	}
	return out
}

// versionServed reports whether the edge may answer req itself as far as the protocol
// version goes: the MCP-Protocol-Version header, when present, names a revision go-sdk
// serves (mcp.SupportedProtocolVersions), and a protocol version in the request's _meta
// equals the header. Otherwise go-sdk answers, as the 2026-07-28 transport chapter
// requires ("Protocol Version Header"): 400 with HeaderMismatch (-32020) when header and
// _meta differ (also for a 2025-11-25 header), 400 with UnsupportedProtocolVersionError
// (-32022, data.supported) for a 2026-era version it does not implement, and its 400
// refusal for an unknown older one.
func versionServed(r *http.Request, req *rpcRequest) bool {
	header := r.Header.Get("Mcp-Protocol-Version")
	if header != "" && !slices.Contains(mcp.SupportedProtocolVersions(), header) {
		return false
	}
	if len(req.params) == 0 || !bytes.Contains(req.params, []byte(mcp.MetaKeyProtocolVersion)) {
		return true
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(req.params, &p) != nil {
		return false // go-sdk's own decoding error is precise
	}
	raw, has := p.Meta[mcp.MetaKeyProtocolVersion]
	if !has {
		return true
	}
	var v string
	return json.Unmarshal(raw, &v) == nil && v == header
}

// newProtocolHeadersMatch reports whether a 2026-07-28 request's Mcp-Method / Mcp-Name
// headers and its _meta protocol version agree with the body, as that revision requires;
// go-sdk answers the precise error when they do not. An Mcp-Name in the Base64 sentinel
// form (=?base64?…?=) is decoded before the comparison (2026-07-28 transport, "Value
// Encoding": servers MUST decode an encoded Mcp-Name before comparing it to the body).
func newProtocolHeadersMatch(r *http.Request, req *rpcRequest) bool {
	if r.Header.Get("Mcp-Method") != req.method {
		return false
	}
	var p struct {
		Name string         `json:"name"`
		URI  string         `json:"uri"`
		Meta map[string]any `json:"_meta"`
	}
	if len(req.params) > 0 && json.Unmarshal(req.params, &p) != nil {
		return false
	}
	if v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string); v != r.Header.Get("Mcp-Protocol-Version") {
		return false
	}
	var body string
	switch req.method {
	case "tools/call", "prompts/get":
		body = p.Name
	case "resources/read":
		body = p.URI
	default:
		return true
	}
	raw := r.Header.Get("Mcp-Name")
	name, ok := mcpclient.DecodeHeaderValue(raw)
	if !ok || name != body {
		return false
	}
	if raw != name {
		// go-sdk compares the header as sent: it serves the request (a built-in, the
		// gateway's own resources and prompts) with the decoded value in its place.
		r.Header.Set("Mcp-Name", name)
	}
	return true
}

// requestID returns the id of a body too large to decode, when it can be read from the
// first bytes (a top-level "id" member before "params"), or nil.
func requestID(body []byte) json.RawMessage {
	id := responseID(body[:min(len(body), 4096)])
	if id != nil && !validID(id) {
		return nil
	}
	return id
}
