//lint:file-ignore SA1019 MCP logging is deprecated as of 2026-07-28 (SEP-2577); the gateway still relays and advertises it for the revisions before, which define it.

package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sse "github.com/tmaxmax/go-sse"
)

// Forwarding: the pool's one path for proxied requests (tools/call, tools/list, and the
// single-server endpoint's resources, prompts and completions).
//
// The gateway must hand its client what the upstream sent: decoding a result into go-sdk's
// typed structs and encoding it again drops what those types do not know (a tool's icons,
// execution or _meta, unknown members, future content kinds). So a forwarded request is
// written as JSON-RPC bytes (go-sdk's jsonrpc package frames the messages) and the
// upstream's "result" member comes back as the upstream's bytes, never decoded.
//
// go-sdk's client still owns the session: the handshake (initialize, or server/discover
// at 2026-07-28), protocol negotiation, Mcp-Session-Id, the SSE fallback of D-09, ping.
// What differs by transport is only how one request travels:
//
//   - streamable HTTP: the pool POSTs the request itself on the session's HTTP client
//     (the same guarded dialer, declared headers and size limit), with the session's
//     Mcp-Session-Id and Mcp-Protocol-Version, and reads the answer: a JSON body, or an
//     event stream (parsed by go-sse) in which it takes the response whose id matches and
//     hands the notifications it meets to the call's Relay;
//   - legacy SSE: the request is written on go-sdk's connection and its response is taken
//     off the connection's read loop by id (rawConn), before go-sdk's session sees it.
//
// Ids: forwarded requests use integer ids from forwardIDBase up, which go-sdk's own
// requests on the same session (small integers from 1) never reach.

// forwardIDBase is the first id of a forwarded request.
const forwardIDBase int64 = 1 << 40

// Relay-independent request ids, unique per process.
var forwardIDs atomic.Int64

func nextForwardID() int64 { return forwardIDBase + forwardIDs.Add(1) }

// forwardJID is id as a JSON-RPC id (jsonrpc.MakeID takes the float64 of a decoded number;
// every forwarded id is below 2^53, so it is exact).
func forwardJID(id int64) jsonrpc.ID {
	jid, _ := jsonrpc.MakeID(float64(id))
	return jid
}

// Forward sends one JSON-RPC request (method, params as the caller's JSON; nil params are
// sent as {}) to the target and returns the upstream's "result" member byte for byte. A
// JSON-RPC error answered by the upstream is returned as UPSTREAM_ERROR wrapping the
// *jsonrpc.Error (RPCError extracts it, to pass through unchanged); every other failure is
// classified as the package doc says. r, when it has callbacks, receives the notifications
// the upstream sends on this request's own stream (streamable HTTP only; see Relay).
//
// At 2026-07-28 the request's _meta gets the per-request protocol fields that version
// requires (protocolVersion, clientInfo, and clientCapabilities {} unless params._meta
// already carries the caller's, which then go as they are: MRTR lets the upstream ask for
// what the caller can give), and Mcp-Method / Mcp-Name headers are sent; to an upstream
// of an older revision a caller's clientCapabilities in _meta are not sent. Like every call here it is retried once on a new session when the
// upstream says the session is gone.
func (p *Pool) Forward(ctx context.Context, t Target, method string, params json.RawMessage, r *Relay) (json.RawMessage, error) {
	var sink *relaySink
	if r != nil && (r.Progress != nil || r.Log != nil) {
		sink = newSink(r)
		defer sink.close()
	}
	var out json.RawMessage
	err := p.do(ctx, t, func(ctx context.Context, s *session) error {
		start := time.Now()
		res, err := s.forward(ctx, p, method, params, sink)
		out = res
		if err == nil && method == "tools/call" {
			p.observeCall(t.ConnectionID, s, time.Since(start))
		}
		return err
	})
	return out, err
}

// forward sends one request on s (see Forward).
func (s *session) forward(ctx context.Context, p *Pool, method string, params json.RawMessage, sink *relaySink) (json.RawMessage, error) {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	var meta map[string]any
	if sink != nil {
		meta = map[string]any{}
		if sink.token != "" {
			meta[progressTokenKey] = sink.token
		}
		if sink.r.Log != nil && s.logging() {
			if s.info.ProtocolVersion >= statelessProtocolVersion {
				meta[mcp.MetaKeyLogLevel] = RelayLogLevel
			} else {
				s.enableLogging(ctx, p)
			}
		}
	}
	callerCaps := bytes.Contains(params, []byte(mcp.MetaKeyClientCapabilities)) && hasMeta(params, mcp.MetaKeyClientCapabilities)
	if s.info.ProtocolVersion >= statelessProtocolVersion {
		if meta == nil {
			meta = map[string]any{}
		}
		meta[mcp.MetaKeyProtocolVersion] = s.info.ProtocolVersion
		meta[mcp.MetaKeyClientInfo] = p.opts.ClientInfo
		if !callerCaps {
			meta[mcp.MetaKeyClientCapabilities] = map[string]any{}
		}
	} else if callerCaps {
		// A 2026-07-28 caller's capabilities mean nothing to an upstream of an older
		// revision (its session declared the pool's at initialize).
		var err error
		if params, err = deleteMeta(params, mcp.MetaKeyClientCapabilities); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params must be a JSON object"}
		}
	}
	if len(meta) > 0 {
		var err error
		if params, err = mergeMeta(params, meta); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params must be a JSON object"}
		}
	}
	id := nextForwardID()
	if s.raw != nil {
		return s.raw.call(ctx, id, method, params)
	}
	return s.post(ctx, id, method, params, sink)
}

// post is the streamable HTTP exchange of one forwarded request.
func (s *session) post(ctx context.Context, id int64, method string, params json.RawMessage, sink *relaySink) (json.RawMessage, error) {
	jid := forwardJID(id)
	req, err := s.newPost(ctx, requestBytes(id, method, params), method, params)
	if err != nil {
		return nil, err
	}
	stop := s.watchCancel(ctx, id)
	defer stop()
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		// A stateless upstream answers a request error with 4xx and the JSON-RPC error
		// object; anything else is classified from the status the probe recorded.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if rpc := responseError(b, jid); rpc != nil {
			return nil, rpc
		}
		return nil, fmt.Errorf("upstream answered HTTP %d", resp.StatusCode)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		return takeResponse(b, jid)
	case "text/event-stream":
		return s.readStream(resp.Body, jid, sink)
	}
	return nil, fmt.Errorf("upstream answered with content type %q", text.Clip(ct, 64))
}

// readStream reads an SSE response until the response with id jid: priming events (no
// data), comments and pings are skipped, notifications are handed to sink, and requests
// from the server are ignored (a stateless gateway has no way to answer them).
func (s *session) readStream(body io.Reader, jid jsonrpc.ID, sink *relaySink) (json.RawMessage, error) {
	for ev, err := range sse.Read(body, &sse.ReadConfig{MaxEventSize: s.maxEvent}) {
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(ev.Data) == "" {
			continue
		}
		data := []byte(ev.Data)
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return nil, fmt.Errorf("upstream sent an event that is not JSON-RPC: %w", err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if m.ID != jid {
				continue // not ours (a server may interleave; the spec says it should not)
			}
			return resultOf(m)
		case *jsonrpc.Request:
			if !m.IsCall() && sink != nil {
				sink.deliver(m.Method, m.Params)
			}
		}
	}
	return nil, errStreamEnded
}

// errStreamEnded: the upstream closed the response stream before answering.
var errStreamEnded = errors.New("upstream closed the response stream without answering")

// takeResponse decodes a JSON body holding the response to jid.
func takeResponse(b []byte, jid jsonrpc.ID) (json.RawMessage, error) {
	msg, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return nil, fmt.Errorf("upstream answer is not a JSON-RPC message: %w", err)
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.ID != jid {
		return nil, errors.New("upstream answer is not the response to the request")
	}
	return resultOf(r)
}

// responseError returns the JSON-RPC error in b when b is an error response to jid (or to
// id null, which a server uses when it could not read the id).
func responseError(b []byte, jid jsonrpc.ID) *jsonrpc.Error {
	msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(b))
	if err != nil {
		// go-sdk's decoder refuses an error response with id null, which is what stateful
		// servers answer to a request they could not place (the TypeScript SDK's 400s).
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *jsonrpc.Error  `json:"error"`
		}
		if json.Unmarshal(bytes.TrimSpace(b), &m) != nil || m.JSONRPC != "2.0" || m.Error == nil ||
			(m.ID != nil && string(m.ID) != "null") {
			return nil
		}
		return m.Error
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok || (r.ID != jid && r.ID.IsValid()) {
		return nil
	}
	var je *jsonrpc.Error
	if errors.As(r.Error, &je) {
		return je
	}
	return nil
}

func resultOf(r *jsonrpc.Response) (json.RawMessage, error) {
	if r.Error != nil {
		var je *jsonrpc.Error
		if errors.As(r.Error, &je) {
			return nil, je
		}
		return nil, r.Error
	}
	if len(r.Result) == 0 {
		return nil, errors.New("upstream response has neither result nor error")
	}
	return r.Result, nil
}

// requestBytes frames one JSON-RPC request around params as given: go-sdk's encoder would
// compact them and escape '<', '>' and '&' inside strings, and the upstream should receive
// the client's arguments as the client wrote them.
func requestBytes(id int64, method string, params json.RawMessage) []byte {
	mb, _ := json.Marshal(method)
	b := make([]byte, 0, 48+len(mb)+len(params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = append(b, mb...)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	return append(b, '}')
}

// newPost builds the POST of one message on the session: the session's Mcp-Session-Id and
// Mcp-Protocol-Version, and at 2026-07-28 the Mcp-Method / Mcp-Name headers (the name
// Base64-encoded when it is not plain ASCII) and, for a tools/call, the Mcp-Param-*
// headers of the tool's x-mcp-header parameters (WithInputSchema).
func (s *session) newPost(ctx context.Context, body []byte, method string, params json.RawMessage) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if v := s.info.ProtocolVersion; v != "" {
		h.Set("Mcp-Protocol-Version", v)
		if v >= statelessProtocolVersion {
			h.Set("Mcp-Method", method)
			if name := nameOf(method, params); name != "" {
				h.Set("Mcp-Name", EncodeHeaderValue(name))
			}
			if method == "tools/call" {
				// The tool's x-mcp-header parameters (the caller put its schema in ctx:
				// WithInputSchema), as a client of that revision must send them.
				if schema := inputSchemaFrom(ctx); schema != nil {
					var p struct {
						Arguments json.RawMessage `json:"arguments"`
					}
					if json.Unmarshal(params, &p) == nil {
						for k, v := range ParamHeaders(schema, p.Arguments) {
							h.Set(k, v)
						}
					}
				}
			}
		}
	}
	if sid := s.cs.ID(); sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	return req, nil
}

// watchCancel sends notifications/cancelled for request id to the upstream when ctx ends
// before stop is called (MCP "Cancellation"): the caller went away or the call timed out,
// so the upstream can stop the work. Best effort, with its own short deadline. At
// 2026-07-28 closing the request's connection is the cancellation, which ctx already does.
func (s *session) watchCancel(ctx context.Context, id int64) (stop func() bool) {
	if s.info.ProtocolVersion >= statelessProtocolVersion {
		return func() bool { return true }
	}
	return context.AfterFunc(ctx, func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		reason := "cancelled by the gateway's client"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = "the gateway's call timeout passed"
		}
		params, _ := json.Marshal(map[string]any{"requestId": id, "reason": reason})
		body, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/cancelled", Params: params})
		if err != nil {
			return
		}
		req, err := s.newPost(cctx, body, "notifications/cancelled", params)
		if err != nil {
			return
		}
		if resp, err := s.http.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
		}
	})
}

// nameOf is the Mcp-Name header value of a 2026-07-28 request: the tool or prompt name, or
// the resource URI.
func nameOf(method string, params json.RawMessage) string {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	switch method {
	case "tools/call", "prompts/get":
		if json.Unmarshal(params, &p) == nil {
			return p.Name
		}
	case "resources/read":
		if json.Unmarshal(params, &p) == nil {
			return p.URI
		}
	}
	return ""
}

// mergeMeta returns params (a JSON object) with add's keys set in its _meta object;
// members other than _meta keep their bytes.
func mergeMeta(params json.RawMessage, add map[string]any) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil || m == nil {
		return nil, errors.New("params is not a JSON object")
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := m["_meta"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil || meta == nil {
			return nil, errors.New("params._meta is not a JSON object")
		}
	}
	for k, v := range add {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		meta[k] = b
	}
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	return SetMember(params, "_meta", mb)
}

// hasMeta reports whether params._meta holds key.
func hasMeta(params json.RawMessage, key string) bool {
	m, ok := Members(params)
	if !ok {
		return false
	}
	meta, ok := Members(m["_meta"])
	return ok && meta[key] != nil
}

// deleteMeta returns params without _meta[key] (and without _meta when that was its only
// key).
func deleteMeta(params json.RawMessage, key string) (json.RawMessage, error) {
	m, ok := Members(params)
	if !ok {
		return nil, errors.New("params is not a JSON object")
	}
	meta, ok := Members(m["_meta"])
	if !ok || meta[key] == nil {
		return params, nil
	}
	if len(meta) == 1 {
		return DeleteMember(params, "_meta")
	}
	mb, err := DeleteMember(m["_meta"], key)
	if err != nil {
		return nil, err
	}
	return SetMember(params, "_meta", mb)
}

// Members decodes one JSON object into its members (raw values), refusing duplicate keys
// and trailing data — decoders disagree on those (encoding/json keeps the last duplicate,
// others the first), so a gateway that checks one member must not forward an object
// another decoder reads differently. ok is false for anything else.
func Members(raw []byte) (m map[string]json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	m = make(map[string]json.RawMessage, 4)
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

// SetMember returns obj (a JSON object) with member key set to value (raw JSON): an
// existing member's value is replaced in place, else the member is appended. Every other
// byte of obj is kept. Errors when obj is not a single JSON object.
func SetMember(obj json.RawMessage, key string, value json.RawMessage) (json.RawMessage, error) {
	start, end, found, err := memberSpan(obj, key)
	if err != nil {
		return nil, err
	}
	if found {
		out := make([]byte, 0, len(obj)-(end-start)+len(value))
		out = append(out, obj[:start]...)
		out = append(out, value...)
		return append(out, obj[end:]...), nil
	}
	trimmed := bytes.TrimRight(obj, " \t\r\n")
	closeAt := len(trimmed) - 1 // the final '}'
	kb, _ := json.Marshal(key)
	out := make([]byte, 0, len(obj)+len(kb)+len(value)+2)
	out = append(out, trimmed[:closeAt]...)
	if !bytes.Equal(bytes.TrimSpace(trimmed[:closeAt]), []byte("{")) {
		out = append(out, ',')
	}
	out = append(out, kb...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, '}'), nil
}

// DeleteMember returns obj (a JSON object) without its top-level member key (obj itself
// when absent); every other byte is kept.
func DeleteMember(obj json.RawMessage, key string) (json.RawMessage, error) {
	start, end, found, err := memberSpan(obj, key)
	if err != nil || !found {
		return obj, err
	}
	// Widen [start, end) from the value to the whole member and one adjacent comma.
	i := start - 1
	for i >= 0 && obj[i] != ',' && obj[i] != '{' {
		i--
	}
	// obj[i] is the ',' before the member or the object's '{'.
	j := end
	for j < len(obj) && (obj[j] == ' ' || obj[j] == '\t' || obj[j] == '\r' || obj[j] == '\n') {
		j++
	}
	out := make([]byte, 0, len(obj))
	if obj[i] == ',' {
		out = append(append(out, obj[:i]...), obj[j:]...) // drop ",<member>"
	} else if j < len(obj) && obj[j] == ',' {
		out = append(append(out, obj[:i+1]...), obj[j+1:]...) // first member: drop "<member>,"
	} else {
		out = append(append(out, obj[:i+1]...), obj[j:]...) // the only member
	}
	return out, nil
}

// memberSpan finds the byte span of the value of top-level member key in obj.
func memberSpan(obj json.RawMessage, key string) (start, end int, found bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false, errors.New("not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, 0, false, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		before := dec.InputOffset()
		if err := dec.Decode(&v); err != nil {
			return 0, 0, false, err
		}
		after := dec.InputOffset()
		if k == key && found {
			return 0, 0, false, errors.New("duplicate member " + strconv.Quote(key))
		}
		if k == key {
			// InputOffset before Decode points just after the key's string (or its ':');
			// the value starts at the first non-space, non-':' byte after it.
			s := int(before)
			for s < int(after) && (obj[s] == ' ' || obj[s] == '\t' || obj[s] == '\r' || obj[s] == '\n' || obj[s] == ':') {
				s++
			}
			start, end, found = s, int(after), true
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return 0, 0, false, errors.New("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return 0, 0, false, errors.New("trailing data after the JSON object")
	}
	return start, end, found, nil
}

// rawTransport wraps a legacy SSE transport so that forwarded requests can be answered
// from the connection's read loop (rawConn) while go-sdk owns the session.
type rawTransport struct {
	mcp.Transport
	conn *rawConn
}

func (t *rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &rawConn{Connection: c, pending: map[int64]chan *jsonrpc.Response{}}
	return t.conn, nil
}

// rawConn is a go-sdk connection whose Read takes out the responses to forwarded
// requests (ids ≥ forwardIDBase) and delivers them to their callers.
type rawConn struct {
	mcp.Connection
	mu      sync.Mutex
	pending map[int64]chan *jsonrpc.Response
	err     error // set once Read failed: the connection is over
}

func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.mu.Lock()
			if c.err == nil {
				c.err = err
			}
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return nil, err
		}
		if r, ok := msg.(*jsonrpc.Response); ok {
			if n, isInt := r.ID.Raw().(int64); isInt && n >= forwardIDBase {
				c.mu.Lock()
				ch := c.pending[n]
				delete(c.pending, n)
				c.mu.Unlock()
				if ch != nil {
					ch <- r
				}
				continue
			}
		}
		return msg, nil
	}
}

// call writes one request and waits for its response.
func (c *rawConn) call(ctx context.Context, id int64, method string, params json.RawMessage) (json.RawMessage, error) {
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %v", mcp.ErrConnectionClosed, c.err)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	jid := forwardJID(id)
	if err := c.Connection.Write(ctx, &jsonrpc.Request{ID: jid, Method: method, Params: params}); err != nil {
		forget()
		return nil, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, mcp.ErrConnectionClosed
		}
		return resultOf(r)
	case <-ctx.Done():
		forget()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		cp, _ := json.Marshal(map[string]any{"requestId": id, "reason": "cancelled by the gateway's client"})
		_ = c.Connection.Write(cctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: cp})
		return nil, ctx.Err()
	}
}

// Tool is one upstream tool as listed: its definition object exactly as the upstream sent
// it, and the members the gateway reads.
type Tool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage // nil when absent
	Annotations  json.RawMessage // nil when absent
	// Definition is the upstream's whole tool object (icons, execution, _meta and members
	// not known yet included), byte for byte.
	Definition json.RawMessage
}

// listPage is one tools/list result as the pool reads it.
type listPage struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor string            `json:"nextCursor"`
}

// parseTool reads the members the gateway uses from one definition.
func parseTool(def json.RawMessage) (Tool, error) {
	var w struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  json.RawMessage `json:"annotations"`
	}
	if err := json.Unmarshal(def, &w); err != nil {
		return Tool{}, err
	}
	t := Tool{Name: w.Name, Title: w.Title, Description: w.Description, InputSchema: w.InputSchema,
		OutputSchema: nonNull(w.OutputSchema), Annotations: nonNull(w.Annotations), Definition: def}
	return t, nil
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// listAllRaw follows nextCursor on s with the loop guard, returning every definition.
func (p *Pool) listAllRaw(ctx context.Context, s *session) ([]json.RawMessage, error) {
	var all []json.RawMessage
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page >= p.opts.MaxPages {
			return nil, apperr.New(apperr.UpstreamError, "upstream tools/list did not end within %d pages", p.opts.MaxPages)
		}
		params := json.RawMessage("{}")
		if cursor != "" {
			params = json.RawMessage(`{"cursor":` + strconv.Quote(cursor) + `}`)
		}
		raw, err := s.forward(ctx, p, "tools/list", params, nil)
		if err != nil {
			return nil, err
		}
		var lp listPage
		if err := json.Unmarshal(raw, &lp); err != nil {
			return nil, apperr.Wrap(err, apperr.UpstreamError, "upstream tools/list result is not valid: %s", text.Clip(err.Error(), 120))
		}
		all = append(all, lp.Tools...)
		if lp.NextCursor == "" {
			return all, nil
		}
		if seen[lp.NextCursor] {
			return nil, apperr.New(apperr.UpstreamError, "upstream tools/list repeated a pagination cursor (page %d)", page+1)
		}
		seen[lp.NextCursor] = true
		cursor = lp.NextCursor
	}
}
