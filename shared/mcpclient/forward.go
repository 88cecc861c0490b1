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
	"sync/atomic"
	"time"

	"github.com/agentpack/gateway/shared/jsonobj"
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
		if res, ok := plainResult(data, jid); ok {
			return res, nil
		}
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
	if res, ok := plainResult(b, jid); ok {
		return res, nil
	}
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

// plainResult is jsonobj.PlainResult for a response to jid: the result's bytes when b is
// the plain success response, else false (and the caller decodes b with go-sdk). The pool
// sends integer ids only; any other id is not scanned.
func plainResult(b []byte, jid jsonrpc.ID) (json.RawMessage, bool) {
	id, isInt := jid.Raw().(int64)
	if !isInt {
		return nil, false
	}
	return jsonobj.PlainResult(b, id)
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
