package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tools/call fast path. A proxied tools/call through go-sdk's server costs a whole
// stateless session per request (a temporary session, the body parsed three times, a
// 32 KiB decode buffer per message, middleware, a response stream) on top of the upstream
// exchange. For an exactly plain call of a proxied tool the gateway decodes the request
// itself, runs the same dispatch (callProxied: metrics, forward, audit, envelope on a
// gateway-side failure, JSON-RPC pass-through of an upstream JSON-RPC error) and writes the
// JSON-RPC response the way go-sdk would (same encoder settings, same headers).
//
// Taken only when all of these hold, else go-sdk serves the request as before:
//   - an old-era protocol version (the 2026-07-28 era carries per-request _meta and
//     headers), no Mcp-* request header but Mcp-Protocol-Version, and a header combination
//     (version, Content-Type, Accept) go-sdk already answered 200 on this server;
//   - the body is one JSON object, valid UTF-8, shallow, with exactly the keys jsonrpc
//     "2.0", a canonical id, method "tools/call" and params; params holds name (a string)
//     and optionally arguments (an object) and nothing else (no _meta, no task);
//   - the name is a proxied tool registered on this request's cached server (the same
//     list buildServer registers: visible connections, object schemas) and not a built-in
//     name (built-ins, including the guard's FORBIDDEN route, stay on go-sdk).
//
// TestToolsCallFastPath compares both paths byte for byte, audit rows included.

// maxFastRequest bounds the body the gateway reads itself before deciding.
const maxFastRequest = 64 << 10

// maxFastNesting bounds the '{' and '[' bytes of a fast-path body: go-sdk refuses bodies
// nested deeper than 1,000 levels, and depth never exceeds this count.
const maxFastNesting = 900

// fastCalls counts tools/call requests answered by the fast path (tests read it).
var fastCalls atomic.Int64

// plainCall is a decoded plain tools/call.
type plainCall struct {
	id   []byte
	name string
	args json.RawMessage // nil when absent
}

// proxiedRef is one proxied tool as registered on a server.
type proxiedRef struct {
	c *catalog.Connection
	t *catalog.Tool
}

// callTable is a server's proxied tools by registered name, built once per server item.
type callTable struct {
	once  sync.Once
	tools map[string]proxiedRef
	// headers maps a protocol version to the response headers go-sdk set on a tools/call
	// answer (replayed by the fast path).
	mu      sync.Mutex
	headers map[string]http.Header
}

// proxiedTools calls add for every proxied tool st's server registers, in registration
// order and under its registered name: buildServer and the fast path's table both use it.
func proxiedTools(st *requestState, add func(name string, c *catalog.Connection, t *catalog.Tool)) {
	if c := st.single; c != nil {
		for j := range c.Tools {
			if t := &c.Tools[j]; schemaIsObject(t.InputSchema) {
				add(t.UpstreamName, c, t)
			}
		}
		return
	}
	for i := range st.snap.Doc.Connections {
		c := &st.snap.Doc.Connections[i]
		if !connectionVisible(st, c) {
			continue
		}
		for j := range c.Tools {
			if t := &c.Tools[j]; schemaIsObject(t.InputSchema) {
				add(t.ExposedName, c, t)
			}
		}
	}
}

// lookup returns the proxied tool named name on st's server (st.item).
func (ct *callTable) lookup(st *requestState, name string) (proxiedRef, bool) {
	ct.once.Do(func() {
		m := map[string]proxiedRef{}
		// Later registrations replace earlier ones, as in go-sdk's AddTool.
		proxiedTools(st, func(name string, c *catalog.Connection, t *catalog.Tool) { m[name] = proxiedRef{c, t} })
		ct.tools = m
	})
	ref, ok := ct.tools[name]
	return ref, ok
}

// members decodes one JSON object into its members, refusing duplicate keys and trailing
// data (go-sdk's decoder and encoding/json could disagree on those).
func members(raw []byte) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	m := make(map[string]json.RawMessage, 4)
	for dec.More() {
		k, err := dec.Token()
		key, isStr := k.(string)
		if err != nil || !isStr {
			return nil, false
		}
		if _, dup := m[key]; dup {
			return nil, false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		m[key] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return m, true
}

// plainToolsCall decodes body when it is a plain tools/call (see above).
func plainToolsCall(body []byte) (*plainCall, bool) {
	if !bytes.Contains(body, []byte(`"tools/call"`)) || !utf8.Valid(body) ||
		bytes.Count(body, []byte("{"))+bytes.Count(body, []byte("[")) > maxFastNesting {
		return nil, false
	}
	m, ok := members(body)
	if !ok || len(m) != 4 || string(m["jsonrpc"]) != `"2.0"` || string(m["method"]) != `"tools/call"` {
		return nil, false
	}
	id := m["id"]
	if !canonicalID.Match(id) {
		return nil, false
	}
	p, ok := members(m["params"])
	if !ok || len(p) == 0 || len(p) > 2 {
		return nil, false
	}
	pc := &plainCall{id: id}
	if a, has := p["arguments"]; has {
		if len(a) == 0 || a[0] != '{' {
			return nil, false
		}
		pc.args = a
	} else if len(p) != 1 {
		return nil, false
	}
	n := p["name"]
	if len(n) < 2 || n[0] != '"' || json.Unmarshal(n, &pc.name) != nil || pc.name == "" {
		return nil, false
	}
	return pc, true
}

// fastHeaders reports whether r's headers allow a fast-path answer (besides the approved
// combination): no Mcp-* header other than Mcp-Protocol-Version, which go-sdk would
// validate against the body (Mcp-Method, Mcp-Name, Mcp-Param-*) or use (Mcp-Session-Id).
func fastHeaders(r *http.Request) bool {
	for k := range r.Header {
		if len(k) >= 4 && (k[:4] == "Mcp-" || k[:4] == "MCP-" || k[:4] == "mcp-") && k != "Mcp-Protocol-Version" {
			return false
		}
	}
	return true
}

// tryFastCall answers pc from the fast path and reports true, or reports false (nothing
// written) when go-sdk must serve the request.
func (g *Gateway) tryFastCall(w *limitedWriter, r *http.Request, st *requestState, pc *plainCall) bool {
	if g.byName[pc.name] != nil {
		return false
	}
	g.getServer(r)
	it := st.item
	if it == nil {
		return false
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	it.lists.mu.Lock()
	approved := it.lists.approved[headerKey(r)]
	it.lists.mu.Unlock()
	it.calls.mu.Lock()
	hdr := it.calls.headers[version]
	it.calls.mu.Unlock()
	if !approved || hdr == nil {
		return false
	}
	ref, ok := it.calls.lookup(st, pc.name)
	if !ok {
		return false
	}
	fastCalls.Add(1)
	res, err := g.fastDispatch(r.Context(), ref, pc)
	out, merr := encodeResponse(pc.id, res, err)
	if merr != nil {
		out, _ = encodeResponse(pc.id, nil, g.internalError(r.Context(), "tools/call", merr, nil))
	}
	h := w.Header()
	for k, v := range hdr {
		h[k] = v
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return true
}

// fastDispatch is what go-sdk's server does between decoding and encoding a tools/call of
// a proxied tool: the protocol guard (panic and non-JSON-RPC error → -32603 with an
// errorId), callProxied, and callTool's result checks.
func (g *Gateway) fastDispatch(ctx context.Context, ref proxiedRef, pc *plainCall) (res *mcp.CallToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, g.internalError(ctx, "tools/call", errors.New("panic"), p)
		}
	}()
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: pc.name, Arguments: pc.args}}
	res, err = g.callProxied(ctx, ref.c, ref.t, req)
	if err != nil {
		var je *jsonrpc.Error
		if !errors.As(err, &je) && !errors.Is(err, context.Canceled) {
			return nil, g.internalError(ctx, "tools/call", err, nil)
		}
		return nil, err
	}
	if res != nil {
		if res.InputRequests != nil && (len(res.Content) > 0 || res.StructuredContent != nil) {
			g.log.Warn("handler returned both content and inputRequests")
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}
		}
		if res.Content == nil && !res.NeedsInput() {
			res2 := *res
			res2.Content = []mcp.Content{}
			res = &res2
		}
	}
	return res, nil
}

// encodeResponse writes a JSON-RPC response as go-sdk's jsonrpc2 does: encoding/json
// without HTML escaping, members jsonrpc, id, result or error.
func encodeResponse(id []byte, res *mcp.CallToolResult, rerr error) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(256)
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if rerr != nil {
		we := &jsonrpc.Error{Message: rerr.Error()}
		if je, ok := rerr.(*jsonrpc.Error); ok {
			we = je
		} else if errors.As(rerr, &je) {
			we.Code = je.Code
		}
		buf.WriteString(`,"error":`)
		if err := enc.Encode(we); err != nil {
			return nil, err
		}
	} else if res != nil {
		buf.WriteString(`,"result":`)
		if err := enc.Encode(res); err != nil {
			return nil, err
		}
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	return append(b, '}'), nil
}

// rememberCall keeps the headers of go-sdk's answer to a tools/call and approves its
// header combination, when go-sdk answered 200 with a JSON body.
func (it *serverItem) rememberCall(w *limitedWriter, before http.Header, version, hk string) {
	if w.status != http.StatusOK || w.tooBig || w.Header().Get("Content-Type") != "application/json" {
		return
	}
	hdr := http.Header{}
	for k, v := range w.Header() {
		if k != "Content-Length" && !equalValues(before[k], v) {
			hdr[k] = append([]string(nil), v...)
		}
	}
	it.calls.mu.Lock()
	if it.calls.headers == nil {
		it.calls.headers = map[string]http.Header{}
	}
	if _, ok := it.calls.headers[version]; !ok && len(it.calls.headers) < maxApprovedHeaders {
		it.calls.headers[version] = hdr
	}
	it.calls.mu.Unlock()
	lc := &it.lists
	lc.mu.Lock()
	if lc.approved == nil {
		lc.results, lc.approved = map[string]*cachedList{}, map[string]bool{}
	}
	if len(lc.approved) < maxApprovedHeaders {
		lc.approved[hk] = true
	}
	lc.mu.Unlock()
}
