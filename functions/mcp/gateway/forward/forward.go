// Package forward is the gateway's one path to upstream MCP servers (docs/ARCHITECTURE.md
// "A proxied call"): a proxied tools/call, a pass-through request of the single-server
// endpoint, and the requests that route a task to the upstream that runs it. It resolves
// the connection's target and the caller's upstream credentials, sends the request's
// bytes through shared/mcpclient (which owns the upstream sessions), and returns the
// upstream's result bytes or its JSON-RPC error unchanged. Only three things change on the
// way up: the id (the pool's), the tool name, and the downstream exchange's _meta fields
// (a 2026-07-28 caller's clientCapabilities go up, for multi round-trip requests); a
// requestState the gateway issued is verified and removed with its inputResponses. On the
// way down only what the client's revision forbids changes (ClientError,
// UpstreamElicitation). The per-revision authorization answer is upstreamauth.Answer's.
//
// A gateway-side failure becomes, for a tools/call, the envelope (wire.UpstreamFailure:
// a classified error keeps its code — UPSTREAM_UNAVAILABLE, UPSTREAM_TIMEOUT, NOT_FOUND for
// a connection removed meanwhile, UNAVAILABLE —, anything else is UPSTREAM_ERROR), and for other
// methods a -32603 whose data carries that code (wire.Failure); both log an errorId the
// client sees. Every proxied tools/call writes its metrics, and its audit row when the
// result is not isError, before it returns.
package forward

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/audit"
	"github.com/agentpack/gateway/functions/mcp/gateway/metrics"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/budget"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/ratelimit"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/maypok86/otter/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
)

// Options configure a Forwarder. Pool, Upstreams and Audit are required (every
// successful proxied call is audited).
type Options struct {
	Pool      *db.Pool
	Upstreams *mcpclient.Pool
	// Connections decides each caller's upstream credentials (OAuth connections); nil
	// sends every connection's stored headers only.
	Connections *connections.Service
	Logger      *slog.Logger
	Metrics     *metrics.EMF
	Audit       *audit.Trail
	// CallTimeout bounds a synchronous upstream call (the edge's budget, under API
	// Gateway's 29 s).
	CallTimeout time.Duration
	// Limiter counts every proxied tools/call against the workspace's rate limits before
	// anything goes upstream (docs/RATE-LIMITS.md); nil counts nothing.
	Limiter *ratelimit.Limiter
	// TargetCacheBytes bounds the cache of connection rows in estimated bytes (rowSize);
	// 0: DefaultTargetCacheBytes.
	TargetCacheBytes int64
}

// DefaultTargetCacheBytes bounds the connection-row cache when Options say nothing (8 MiB).
const DefaultTargetCacheBytes = 8 << 20

// Forwarder sends requests upstream. Safe for concurrent use.
type Forwarder struct {
	o       Options
	log     *slog.Logger
	targets *targetCache
}

// New returns a Forwarder.
func New(o Options) *Forwarder {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.TargetCacheBytes <= 0 {
		o.TargetCacheBytes = DefaultTargetCacheBytes
	}
	return &Forwarder{o: o, log: o.Logger, targets: newTargetCache(o.TargetCacheBytes)}
}

// TargetStats returns the connection-row cache's counters (a hit: a proxied call whose
// connection row, at the catalog's updatedAt, was in memory).
func (f *Forwarder) TargetStats() budget.Stats { return budget.StatsOf(f.targets.c) }

// Ref is one proxied tool as a server key exposes it: the name the client calls, its
// connection and its catalog tool.
type Ref struct {
	Name string
	Conn *catalog.Connection
	Tool *catalog.Tool
}

// TimeoutHint is the hint on a synchronous call that ran out of its budget.
const TimeoutHint = "the call ran past the gateway's synchronous budget; a task-capable client can run it as a task (a task-augmented tools/call) to wait longer"

// Call is a proxied tools/call of ref for st: metrics, forward, audit, and the envelope for
// a gateway-side failure. params is the client's params object and p its members (the
// edge decoded them once). The result is the upstream's bytes; an upstream JSON-RPC error
// is returned as the *jsonrpc.Error to pass through. Exactly one audit row is written for a
// result without isError: true that is not an InputRequiredResult (its retry is the call). A caller the connection needs authorization from gets the
// way to authorize (connections.PrepareCall) and nothing is forwarded.
func (f *Forwarder) Call(ctx context.Context, st *request.State, ref Ref, params json.RawMessage, p map[string]json.RawMessage) (_ json.RawMessage, rerr error) {
	start := time.Now()
	name := ref.Name
	logx.Annotate(ctx, logx.FieldTool, name)
	logx.Annotate(ctx, logx.FieldConnectionID, ref.Conn.ID)
	ctx, span := telemetry.Start(ctx, "tools/call "+name, attribute.String("agentpack.tool", name),
		attribute.String("agentpack.connection_id", ref.Conn.ID))
	defer func() {
		if rerr != nil {
			telemetry.Fail(span, "proxied call failed", rerr)
		}
		span.End()
	}()
	bind := upstreamauth.Binding{Subject: st.Principal.Subject, Workspace: st.Workspace, ConnectionID: ref.Conn.ID,
		Method: "tools/call", Name: name, Params: params}
	params, declined, err := f.gatewayState(ctx, bind, params, p)
	if err != nil {
		logx.Annotate(ctx, logx.FieldOutcome, "rpc_error")
		return nil, err
	}
	up, err := UpstreamParams(params, ref.Tool.UpstreamName)
	if err != nil {
		return nil, wire.InvalidParams(err.Error())
	}
	var res json.RawMessage
	callCtx, cancel := f.CallContext(ctx, st)
	if refused := f.Limit(callCtx, st, ref, start); refused != nil {
		cancel()
		return refused, nil
	}
	ver := AnswerVersion(st.Version, p["_meta"])
	pc, err := f.prepare(callCtx, st, ref.Conn, ver) // under the call's deadline too
	if err == nil && (pc.Answer != nil || pc.AnswerErr != nil) {
		cancel()
		logx.Annotate(ctx, logx.FieldOutcome, "authorization_required")
		return f.answer(ctx, bind, declined, ref.Conn.Name, pc.Answer, pc.AnswerErr)
	}
	if err == nil {
		// The upstream hop mirrors the tool's x-mcp-header parameters (2026-07-28 upstreams).
		fctx := mcpclient.WithInputSchema(callCtx, ref.Tool.InputSchema)
		res, err = f.o.Upstreams.Forward(fctx, pc.Target, "tools/call", up, relayFor(st, p["_meta"]))
	}
	cancel()
	d := time.Since(start)
	if err != nil {
		if je := mcpclient.RPCError(err); je != nil {
			if ans, ansErr, ok := UpstreamElicitation(st.Version, p["_meta"], "tools/call", je); ok {
				// An older upstream's -32042, which a 2026-07-28 client must not receive.
				f.o.Metrics.ToolCall("proxied", name, "error", st.RequestID, d)
				logx.Annotate(ctx, logx.FieldOutcome, "authorization_required")
				return ans, ansErr
			}
			je = ClientError(st.Version, je)
			f.o.Metrics.ToolCall("proxied", name, "error", st.RequestID, d)
			f.o.Metrics.UpstreamCall(ref.Conn.ID, "rpc_error", st.RequestID, d)
			logx.Annotate(ctx, logx.FieldOutcome, "rpc_error")
			logx.Annotate(ctx, logx.FieldRPCCode, strconv.FormatInt(je.Code, 10))
			return nil, je
		}
		if ans, ansErr, ok := f.stepUp(ctx, st, ref.Conn, ver, err); ok {
			// 403 insufficient_scope, or a 401 that a refresh did not cure: the way to
			// (re-)authorize, in this call.
			f.o.Metrics.ToolCall("proxied", name, "error", st.RequestID, d)
			logx.Annotate(ctx, logx.FieldOutcome, "authorization_required")
			return f.answer(ctx, bind, declined, ref.Conn.Name, ans, ansErr)
		}
		errorID := httpapi.NewID()
		fail := wire.UpstreamFailure(err, errorID, "call")
		if fail.Code == apperr.UpstreamTimeout {
			fail.Hint = TimeoutHint
		}
		// Name the connection: the caller sees which installed server failed.
		fail.Message = ref.Conn.Name + ": " + fail.Message
		f.log.WarnContext(ctx, "proxied call failed", "tool", name, "connection_id", ref.Conn.ID, "error_id", errorID, "err", err)
		f.o.Metrics.ToolCall("proxied", name, "error", st.RequestID, d)
		f.o.Metrics.UpstreamCall(ref.Conn.ID, "error", st.RequestID, d)
		telemetry.Fail(span, "upstream call failed", err)
		logx.Annotate(ctx, logx.FieldOutcome, "tool_error")
		logx.Annotate(ctx, logx.FieldRPCCode, string(fail.Code))
		logx.Annotate(ctx, logx.FieldErrorID, errorID)
		return wire.SealJSON(wire.EnvelopeMeta{Tool: name, Version: "upstream"}, fail), nil
	}
	outcome := "ok"
	switch {
	case ResultIsError(res):
		outcome = "tool_error"
	case ResultInputRequired(res):
		// The upstream asks the client for input (2026-07-28 multi round-trip): the call is
		// not complete, its retry is. One completed call is one audit row (issue 34).
		outcome = "input_required"
	}
	f.o.Metrics.ToolCall("proxied", name, outcome, st.RequestID, d)
	f.o.Metrics.UpstreamCall(ref.Conn.ID, outcome, st.RequestID, d)
	logx.Annotate(ctx, logx.FieldOutcome, outcome)
	if outcome == "ok" {
		if err := f.Audit(st, name, ref.Conn.ID, d, p["arguments"]); err != nil {
			return nil, wire.Internal(ctx, f.log, "tools/call", err, nil)
		}
	}
	return res, nil
}

// Limit counts the call against the workspace's rate limits (docs/RATE-LIMITS.md) and
// returns nil to go on, or the tools/call result that refuses it: the RATE_LIMITED
// envelope (retryable, details.retryAfterSeconds) when a window is full, UNAVAILABLE when
// the count could not be taken (the database is down; nothing is forwarded uncounted).
// Nothing reaches the upstream after a refusal and no audit row is written. Call uses it,
// and so does a task-augmented call of a proxied tool (it is one call too).
func (f *Forwarder) Limit(ctx context.Context, st *request.State, ref Ref, start time.Time) json.RawMessage {
	if f.o.Limiter == nil {
		return nil
	}
	if st.Snapshot != nil && st.Snapshot.Doc != nil && !st.Snapshot.Doc.Limited(ref.Conn.ID, ref.Name, st.Principal.Subject) {
		// No limit of the workspace's snapshot applies: no statement (docs/RATE-LIMITS.md,
		// "Limits travel with the catalog").
		return nil
	}
	d, err := f.o.Limiter.Take(ctx, ratelimit.Call{Workspace: st.Workspace, Connection: ref.Conn.ID,
		Tool: ref.Name, Principal: st.Principal.Subject})
	meta := wire.EnvelopeMeta{Tool: ref.Name, Version: "upstream"}
	switch {
	case err != nil:
		errorID := httpapi.NewID()
		f.log.ErrorContext(ctx, "rate limit check failed", "tool", ref.Name, "error_id", errorID, "err", err)
		f.o.Metrics.RateLimit("error", "", st.RequestID)
		f.o.Metrics.ToolCall("proxied", ref.Name, "error", st.RequestID, time.Since(start))
		logx.Annotate(ctx, logx.FieldOutcome, "tool_error")
		logx.Annotate(ctx, logx.FieldErrorID, errorID)
		fail := wire.ToolError(apperr.Wrap(err, apperr.Unavailable, "the rate limit could not be checked"), errorID)
		fail.Retryable = true
		return wire.SealJSON(meta, fail)
	case d.Windows == 0:
		return nil
	case d.Allowed:
		f.o.Metrics.RateLimit("allowed", "", st.RequestID)
		return nil
	}
	f.o.Metrics.RateLimit("refused", d.Window.Kind, st.RequestID)
	f.o.Metrics.ToolCall("proxied", ref.Name, "rate_limited", st.RequestID, time.Since(start))
	logx.Annotate(ctx, logx.FieldOutcome, "rate_limited")
	logx.Annotate(ctx, logx.FieldRPCCode, string(apperr.RateLimited))
	return wire.SealJSON(meta, wire.ToolError(ratelimit.Refusal(d), ""))
}

// Audit commits the audit row of a proxied call of tool on connection connID by st's
// caller (audit.Trail.Record).
func (f *Forwarder) Audit(st *request.State, tool, connID string, d time.Duration, args json.RawMessage) error {
	return f.o.Audit.Record(audit.Entry{RequestID: st.RequestID, Principal: st.Principal.Subject,
		WorkspaceID: st.Workspace, ChatID: st.ChatID, Tool: tool, Kind: "proxied", ConnectionID: connID, Duration: d, Arguments: args})
}

// answer is an authorization answer (upstreamauth.Answer, by revision) as the outcome of
// the request bind describes: the JSON-RPC error (-32042, 2025-11-25); at 2026-07-28 the
// InputRequiredResult with a requestState sealed to bind — or, when the retry said the
// user declined (declined), an isError result saying so instead of asking again (MCP
// 2026-07-28 elicitation: servers MUST handle a decline); else the result encoded.
func (f *Forwarder) answer(ctx context.Context, bind upstreamauth.Binding, declined bool, connName string, res *mcp.CallToolResult, rerr error) (json.RawMessage, error) {
	if rerr != nil {
		return nil, rerr
	}
	if res.InputRequests != nil {
		if declined {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: declinedText(connName)}}}
		} else {
			return f.inputRequired(ctx, bind, res)
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, wire.Internal(ctx, f.log, "tools/call", err, nil)
	}
	return b, nil
}

// inputRequired is the InputRequiredResult of authorization answer res with a requestState
// sealed to bind.
func (f *Forwarder) inputRequired(ctx context.Context, bind upstreamauth.Binding, res *mcp.CallToolResult) (json.RawMessage, error) {
	if f.o.Connections == nil || f.o.Connections.Auth == nil {
		return nil, wire.Internal(ctx, f.log, bind.Method, errors.New("an authorization answer without upstream authorization"), nil)
	}
	state, err := f.o.Connections.Auth.SealRequestState(ctx, bind)
	if err == nil {
		var b json.RawMessage
		if b, err = upstreamauth.InputRequired(res, state); err == nil {
			return b, nil
		}
	}
	return nil, wire.Internal(ctx, f.log, bind.Method, err, nil)
}

// declinedText is the answer to a retry whose user declined to authorize connName.
func declinedText(connName string) string {
	return "You declined to authorize " + connName + ", so the request was not sent. Call again to be asked again."
}

// gatewayState handles a retry's requestState (MCP 2026-07-28 "Multi Round-Trip
// Requests"). None, one that is not a string, or one the gateway did not issue (an
// upstream's): params are returned unchanged and go upstream as they are. One the gateway
// issued (upstreamauth.StatePrefix): it is verified against bind — a failure is -32602,
// as that chapter says state failing verification MUST be rejected — and removed from
// params together with inputResponses, which answered the gateway and not the upstream;
// declined reports whether the user declined the gateway's elicitation.
func (f *Forwarder) gatewayState(ctx context.Context, bind upstreamauth.Binding, params json.RawMessage, p map[string]json.RawMessage) (_ json.RawMessage, declined bool, _ error) {
	var state string
	if p["requestState"] == nil || json.Unmarshal(p["requestState"], &state) != nil || !upstreamauth.IsGatewayState(state) {
		return params, false, nil
	}
	if f.o.Connections == nil || f.o.Connections.Auth == nil {
		return nil, false, wire.InvalidParams(upstreamauth.ErrRequestState.Error())
	}
	if err := f.o.Connections.Auth.OpenRequestState(ctx, state, bind); err != nil {
		f.log.DebugContext(ctx, "requestState refused", "method", bind.Method, "connection_id", bind.ConnectionID, "err", err)
		return nil, false, wire.InvalidParams(err.Error())
	}
	out, err := jsonobj.DeleteMember(params, "requestState")
	if err == nil && p["inputResponses"] != nil {
		out, err = jsonobj.DeleteMember(out, "inputResponses")
	}
	if err != nil {
		return nil, false, wire.InvalidParams(err.Error())
	}
	return out, upstreamauth.Declined(p["inputResponses"]), nil
}

// AnswerVersion is the protocol version whose authorization answer (upstreamauth.Answer)
// a request made at version with _meta meta gets: version itself, except that a
// 2026-07-28 client that did not declare URL-mode elicitation in its per-request
// clientCapabilities (_meta io.modelcontextprotocol/clientCapabilities elicitation.url)
// gets the text answer ("") — MRTR: servers MUST NOT send input requests the client has
// not declared; an elicitation capability without "url" means form mode only.
func AnswerVersion(version string, meta json.RawMessage) string {
	if version < upstreamauth.InputRequiredVersion {
		return version
	}
	var m struct {
		Caps struct {
			Elicitation struct {
				URL json.RawMessage `json:"url"`
			} `json:"elicitation"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	if json.Unmarshal(meta, &m) != nil || m.Caps.Elicitation.URL == nil || string(m.Caps.Elicitation.URL) == "null" {
		return ""
	}
	return version
}

// ClientError is an upstream's JSON-RPC error as the client's revision (version) must
// receive it: at 2026-07-28 and newer, -32002 (resource not found of 2025-11-25 and
// earlier, which that revision forbids emitting) becomes -32602 with the same message and
// data (MCP 2026-07-28 basic/index "Error Codes", server/resources "Error Handling");
// everything else passes through unchanged.
func ClientError(version string, je *jsonrpc.Error) *jsonrpc.Error {
	if version >= upstreamauth.InputRequiredVersion && je.Code == codeResourceNotFoundLegacy {
		c := *je
		c.Code = jsonrpc.CodeInvalidParams
		return &c
	}
	return je
}

// UpstreamElicitation answers an upstream's -32042 (URL elicitation required, which an
// upstream of 2025-11-25 sends) to a client of 2026-07-28 or newer, which must not receive
// that code (MCP 2026-07-28 basic/index "Error Codes"): for tools/call, prompts/get and
// resources/read from a client that declared URL elicitation (AnswerVersion), an
// InputRequiredResult whose inputRequests carry the upstream's elicitations as URL-mode
// elicitation/create requests ("upstream_1", …; no requestState: the retry is the same
// request again, and the upstream decides again); otherwise, for tools/call an isError
// result with the messages and URLs, and for other methods -32600 with them. ok is false
// for any other error or an older client (the error passes through).
func UpstreamElicitation(version string, meta json.RawMessage, method string, je *jsonrpc.Error) (res json.RawMessage, rerr error, ok bool) {
	if version < upstreamauth.InputRequiredVersion || je.Code != mcp.CodeURLElicitationRequired {
		return nil, nil, false
	}
	var data struct {
		Elicitations []struct {
			Message string `json:"message"`
			URL     string `json:"url"`
		} `json:"elicitations"`
	}
	_ = json.Unmarshal(je.Data, &data)
	reqs := mcp.InputRequestMap{}
	var text []string
	for i, el := range data.Elicitations {
		if el.URL == "" {
			continue
		}
		reqs["upstream_"+strconv.Itoa(i+1)] = &mcp.ElicitParams{Mode: "url", Message: el.Message, URL: el.URL}
		text = append(text, strings.TrimSpace(el.Message+" "+el.URL))
	}
	if len(text) == 0 {
		text = append(text, je.Message)
	}
	msg := "the server needs you to open a link first: " + strings.Join(text, "; ")
	mrtr := method == "tools/call" || method == "prompts/get" || method == "resources/read"
	if mrtr && len(reqs) > 0 && AnswerVersion(version, meta) != "" {
		b, err := upstreamauth.InputRequired(&mcp.CallToolResult{InputRequests: reqs}, "")
		if err == nil {
			return b, nil, true
		}
	}
	if method == "tools/call" {
		b, err := json.Marshal(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}})
		if err == nil {
			return b, nil, true
		}
	}
	return nil, wire.Refusal(jsonrpc.CodeInvalidRequest, msg), true
}

// codeResourceNotFoundLegacy is resource not found before 2026-07-28.
const codeResourceNotFoundLegacy = -32002

// passThrough are the methods the single-server endpoint forwards to the upstream.
var passThrough = map[string]bool{
	"resources/list":           true,
	"resources/templates/list": true,
	"resources/read":           true,
	"resources/subscribe":      true,
	"resources/unsubscribe":    true,
	"prompts/list":             true,
	"prompts/get":              true,
	"completion/complete":      true,
	// Skills (SEP-2640, io.modelcontextprotocol/skills) and its optional directory read.
	"skills/list":              true,
	"skills/get":               true,
	"resources/directory/read": true,
}

// PassThrough reports whether the single-server endpoint forwards method upstream.
func PassThrough(method string) bool { return passThrough[method] }

// Method sends one pass-through request of the single-server endpoint to connection c and
// returns the upstream's result bytes. A JSON-RPC error from the upstream reaches the
// client unchanged; a gateway-side failure is wire.Failure (-32603 with the envelope code,
// retryable flag and a logged errorId). The params go without the downstream exchange's
// _meta fields except the client's capabilities (WithoutDownstreamMeta). A caller the
// connection needs authorization from gets the answer of the request's revision and
// nothing is forwarded: -32042 at 2025-11-25; at 2026-07-28 an InputRequiredResult for
// prompts/get and resources/read (Forwarder.Call's rules: requestState, decline, a
// client without URL elicitation); otherwise -32600 with the link. An upstream's -32002
// reaches a 2026-07-28 client as -32602 (ClientError).
func (f *Forwarder) Method(ctx context.Context, st *request.State, c *catalog.Connection, method string, params json.RawMessage) (json.RawMessage, error) {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	p, ok := jsonobj.Members(params)
	if !ok {
		return nil, wire.InvalidParams("params is not a JSON object")
	}
	// prompts/get and resources/read may answer an InputRequiredResult at 2026-07-28 (MRTR
	// "Supported Requests"); the other methods get the text refusal there (-32042 is
	// forbidden at that revision).
	mrtr := method == "prompts/get" || method == "resources/read"
	bind := upstreamauth.Binding{Subject: st.Principal.Subject, Workspace: st.Workspace, ConnectionID: c.ID,
		Method: method, Name: requestName(p), Params: params}
	declined, ver := false, ""
	var err error
	if mrtr {
		if params, declined, err = f.gatewayState(ctx, bind, params, p); err != nil {
			return nil, err
		}
		ver = AnswerVersion(st.Version, p["_meta"])
	} else if st.Version < upstreamauth.InputRequiredVersion {
		ver = st.Version
	}
	up, err := WithoutDownstreamMeta(params)
	if err != nil {
		return nil, wire.InvalidParams(err.Error())
	}
	start := time.Now()
	callCtx, cancel := f.CallContext(ctx, st)
	pc, err := f.prepare(callCtx, st, c, ver)
	if err == nil && (pc.Answer != nil || pc.AnswerErr != nil) {
		cancel()
		return f.methodAnswer(ctx, bind, declined, c.Name, pc.Answer, pc.AnswerErr)
	}
	var res json.RawMessage
	if err == nil {
		res, err = f.o.Upstreams.Forward(callCtx, pc.Target, method, up, nil)
	}
	cancel()
	if err == nil {
		f.log.DebugContext(ctx, "passed through", "method", method, "connection_id", c.ID,
			"duration_ms", float64(time.Since(start).Microseconds())/1000)
		return res, nil
	}
	if je := mcpclient.RPCError(err); je != nil {
		if ans, ansErr, ok := UpstreamElicitation(st.Version, p["_meta"], method, je); ok {
			return ans, ansErr
		}
	} else if ans, ansErr, ok := f.stepUp(ctx, st, c, ver, err); ok {
		// The upstream refused the grant's token after a refresh: the way to re-authorize.
		return f.methodAnswer(ctx, bind, declined, c.Name, ans, ansErr)
	}
	return nil, f.failure(ctx, st, "pass-through failed", method, c.ID, err)
}

// methodAnswer is an authorization answer as Method gives it: the JSON-RPC error as is, an
// InputRequiredResult (or, after a decline, -32600 saying so), else -32600 with the link.
func (f *Forwarder) methodAnswer(ctx context.Context, bind upstreamauth.Binding, declined bool, name string, answer *mcp.CallToolResult, answerErr error) (json.RawMessage, error) {
	switch {
	case answerErr != nil:
		return nil, answerErr
	case answer.InputRequests != nil && declined:
		return nil, wire.Refusal(jsonrpc.CodeInvalidRequest, declinedText(name))
	case answer.InputRequests != nil:
		return f.inputRequired(ctx, bind, answer)
	}
	return nil, wire.Refusal(jsonrpc.CodeInvalidRequest, "this server needs authorization: "+answerText(answer))
}

// Raw sends one request (tasks/* routing, a task-augmented tools/call) to connection
// connID's upstream under the synchronous budget, with st's caller's credentials; errors
// as Method.
func (f *Forwarder) Raw(ctx context.Context, st *request.State, connID, method string, params json.RawMessage) (json.RawMessage, error) {
	callCtx, cancel := f.CallContext(ctx, st)
	defer cancel()
	row, err := db.ConnectionGet(callCtx, f.o.Pool, connID)
	var res json.RawMessage
	if err == nil {
		res, err = f.o.Upstreams.Forward(callCtx, f.TargetFor(callCtx, row, st.Principal.Subject), method, params, nil)
	}
	if err == nil {
		return res, nil
	}
	return nil, f.failure(ctx, st, "task routing failed", method, connID, err)
}

// failure is the answer to a request of st that did not get an upstream result: the
// upstream's JSON-RPC error as st's revision receives it (ClientError), else wire.Failure,
// logged under its errorId.
func (f *Forwarder) failure(ctx context.Context, st *request.State, msg, method, connID string, err error) error {
	if je := mcpclient.RPCError(err); je != nil {
		return ClientError(st.Version, je)
	}
	errorID := httpapi.NewID()
	fail := wire.UpstreamFailure(err, errorID, "request")
	f.log.WarnContext(ctx, msg, "method", method, "connection_id", connID, "error_id", errorID, "err", err)
	return wire.Failure(fail, errorID)
}

// Send forwards one request to target with ctx's deadline (the task worker's path).
func (f *Forwarder) Send(ctx context.Context, target mcpclient.Target, method string, params json.RawMessage) (json.RawMessage, error) {
	return f.o.Upstreams.Forward(ctx, target, method, params, nil)
}

// CallContext is the context of an upstream call: bounded by CallTimeout and by the
// request's own deadline (the Lambda deadline less 1 s), which go-sdk does not pass to
// tool handlers, and cancelled with ctx — but carrying none of ctx's values except the
// request id, the span and the log fields. go-sdk keeps the inbound Mcp-Protocol-Version
// in the request context and its client would reuse it for the upstream connect (a
// 2026-07-28 client made the gateway offer 2026-07-28 to a 2025-11-25 upstream, which
// answered 400).
func (f *Forwarder) CallContext(ctx context.Context, st *request.State) (context.Context, context.CancelFunc) {
	timeout := f.o.CallTimeout
	if !st.Deadline.IsZero() {
		if left := time.Until(st.Deadline) - time.Second; left < timeout {
			timeout = max(left, 100*time.Millisecond)
		}
	}
	up, cancel := context.WithTimeout(logx.WithRequestID(telemetry.Carry(context.Background(), ctx), st.RequestID), timeout)
	stop := context.AfterFunc(ctx, cancel)
	return up, func() { stop(); cancel() }
}

// Prepared is where a proxied request goes: the Target to forward to, or — for an OAuth
// connection the caller has no usable token for — the answer to give instead (nothing is
// sent upstream; connections.PrepareCall): a result (isError with the authorization link,
// for clients before 2025-11-25) or a JSON-RPC error (-32042 with it).
type Prepared struct {
	Target    mcpclient.Target
	Answer    *mcp.CallToolResult
	AnswerErr error
}

// Prepare resolves connection c's target for st's caller (docs/UPSTREAM-AUTH.md), with
// the authorization answer of st's revision — at 2026-07-28 the text answer (an isError
// result), since an InputRequiredResult needs the request's binding and requestState,
// which only Call and Method build. NOT_FOUND when the connection was removed.
func (f *Forwarder) Prepare(ctx context.Context, st *request.State, c *catalog.Connection) (*Prepared, error) {
	v := st.Version
	if v >= upstreamauth.InputRequiredVersion {
		v = ""
	}
	return f.prepare(ctx, st, c, v)
}

// prepare is Prepare with the authorization answer of revision answerVersion
// (AnswerVersion).
func (f *Forwarder) prepare(ctx context.Context, st *request.State, c *catalog.Connection, answerVersion string) (*Prepared, error) {
	row, err := f.targets.row(ctx, f.o.Pool, c)
	if err != nil {
		return nil, err
	}
	if f.o.Connections == nil {
		return &Prepared{Target: connections.TargetOf(row)}, nil
	}
	t, answer, answerErr, err := f.o.Connections.PrepareCall(ctx, row, st.Principal, answerVersion)
	if err != nil {
		return nil, err
	}
	return &Prepared{Target: t, Answer: answer, AnswerErr: answerErr}, nil
}

// stepUp answers a request of connection c for st's caller that failed with callErr because
// the upstream asked for more scopes or refused the grant's token (connections.StepUp,
// with the answer of revision answerVersion); ok is false for any other failure.
func (f *Forwarder) stepUp(ctx context.Context, st *request.State, c *catalog.Connection, answerVersion string, callErr error) (*mcp.CallToolResult, error, bool) {
	if f.o.Connections == nil {
		return nil, nil, false
	}
	row, err := f.targets.row(ctx, f.o.Pool, c)
	if err != nil {
		return nil, nil, false
	}
	return f.o.Connections.StepUp(ctx, row, st.Principal, answerVersion, callErr)
}

// TargetFor is connection row's target with subject's upstream credentials (a task's
// owner), or the plain target without a connection service.
func (f *Forwarder) TargetFor(ctx context.Context, row *db.Connection, subject string) mcpclient.Target {
	if f.o.Connections == nil {
		return connections.TargetOf(row)
	}
	return f.o.Connections.TargetFor(ctx, row, subject)
}

// targetCache keeps each connection's row (URL, transport, headers, auth mode) in a warm
// process, keyed by connection id and replaced when the catalog shows a newer updatedAt.
// Headers are read from Postgres, never from the catalog document. It is bounded by bytes
// (rowSize; docs/CATALOG.md "Many workspaces per instance").
type targetCache struct {
	c *otter.Cache[string, *cachedTarget]
}

type cachedTarget struct {
	updatedAt time.Time
	row       *db.Connection
}

func newTargetCache(maxBytes int64) *targetCache {
	return &targetCache{c: budget.New[string](maxBytes, func(ct *cachedTarget) int64 { return rowSize(ct.row) }, nil)}
}

// rowSize estimates the bytes a cached row holds: its strings, capabilities and header
// names and values, plus 512 for the structs, pointers and the cache entry.
func rowSize(r *db.Connection) int64 {
	n := 512 + len(r.ID) + len(r.Name) + len(r.Handle) + len(r.URL) + len(r.TransportType) + len(r.Capabilities) +
		len(r.Source) + len(r.CreatedBy) + len(r.AuthMode)
	for _, p := range []*string{r.WorkingTransport, r.ProtocolVersion, r.CatalogEntryID, r.WorkspaceID, r.ProjectID, r.LastError} {
		if p != nil {
			n += len(*p)
		}
	}
	for k, v := range r.Headers {
		n += len(k) + len(v) + 32
	}
	return int64(n)
}

// row returns connection c's row (cached per updatedAt); NOT_FOUND when it was removed.
func (tc *targetCache) row(ctx context.Context, pool *db.Pool, c *catalog.Connection) (*db.Connection, error) {
	if ct, ok := tc.c.GetIfPresent(c.ID); ok && ct.updatedAt.Equal(c.UpdatedAt) {
		return ct.row, nil
	}
	row, err := db.ConnectionGet(ctx, pool, c.ID)
	if err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return nil, apperr.New(apperr.NotFound, "this server was removed")
		}
		return nil, err
	}
	tc.c.Set(c.ID, &cachedTarget{updatedAt: c.UpdatedAt, row: row})
	return row, nil
}

// answerText is the text of an authorization answer (upstreamauth.AnswerText).
func answerText(r *mcp.CallToolResult) string {
	if t := upstreamauth.AnswerText(r); t != "" {
		return t
	}
	return "authorize it in the console"
}

// PlainParams is a tools/call's params without a "task" member: a client of a revision
// without tasks (or a request the edge serves synchronously) must not make the upstream
// start a task whose id the client could not use.
func PlainParams(params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, []byte(`"task"`)) {
		return params
	}
	out, err := jsonobj.DeleteMember(params, "task")
	if err != nil {
		return params
	}
	return out
}

// ResultIsError reports whether a tools/call result says isError: true.
func ResultIsError(res json.RawMessage) bool {
	if !bytes.Contains(res, []byte(`"isError"`)) {
		return false
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(res, &r) == nil && r.IsError
}

// ResultInputRequired reports whether res is an InputRequiredResult (MCP 2026-07-28 multi
// round-trip requests: resultType "input_required"), the answer of a call that is not
// complete yet.
func ResultInputRequired(res json.RawMessage) bool {
	if !bytes.Contains(res, []byte(`"input_required"`)) {
		return false
	}
	var r struct {
		ResultType string `json:"resultType"`
	}
	return json.Unmarshal(res, &r) == nil && r.ResultType == "input_required"
}

// UpstreamParams is the client's tools/call params with the upstream's tool name and
// without the downstream exchange's _meta fields (WithoutDownstreamMeta); every other
// member keeps its bytes. Errors when params is not a JSON object.
func UpstreamParams(params json.RawMessage, upstreamName string) (json.RawMessage, error) {
	nb, _ := json.Marshal(upstreamName)
	out, err := jsonobj.SetMember(params, "name", nb)
	if err != nil {
		return nil, err
	}
	return WithoutDownstreamMeta(out)
}

// WithoutDownstreamMeta removes from params._meta what describes the client's exchange
// with the gateway rather than the request: the progress token (the pool asks the upstream
// for progress with a token of its own when it relays) and the io.modelcontextprotocol/*
// protocol fields of 2026-07-28 (the pool sets its own for its upstream session) — except
// the client's per-request capabilities (io.modelcontextprotocol/clientCapabilities),
// which go upstream so that a 2026-07-28 upstream may answer an InputRequiredResult the
// client can fulfil (MRTR: a server MUST NOT ask for input the client did not declare; the
// pool sends them to 2026-07-28 upstreams only), less the Tasks capability and extension:
// whether an upstream hop runs as a task is the gateway's decision. Other _meta keys are
// the request's and go upstream. Errors when params or its _meta is not a JSON object.
func WithoutDownstreamMeta(params json.RawMessage) (json.RawMessage, error) {
	if !bytes.Contains(params, []byte(`"_meta"`)) {
		return params, nil
	}
	p, ok := jsonobj.Members(params)
	if !ok {
		return nil, errors.New("params is not a JSON object")
	}
	raw, has := p["_meta"]
	if !has {
		return params, nil
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, errors.New("_meta is not an object")
	}
	changed := false
	for k, v := range meta {
		switch {
		case k == clientCapabilitiesKey:
			if caps, ok := withoutTaskCapabilities(v); ok {
				meta[k] = caps
				changed = true
			}
		case k == progressTokenKey || strings.HasPrefix(k, "io.modelcontextprotocol/"):
			delete(meta, k)
			changed = true
		}
	}
	if !changed {
		return params, nil
	}
	mb, _ := json.Marshal(meta)
	return jsonobj.SetMember(params, "_meta", mb)
}

// clientCapabilitiesKey is the _meta key of a 2026-07-28 request's client capabilities.
const clientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"

// tasksExtension is the Tasks extension's identifier in capabilities.extensions.
const tasksExtension = "io.modelcontextprotocol/tasks"

// withoutTaskCapabilities returns caps without "tasks" and without the Tasks extension,
// and ok true when it removed one; caps that are not an object come back unchanged (ok
// false).
func withoutTaskCapabilities(caps json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(caps, []byte("tasks")) {
		return nil, false
	}
	m, ok := jsonobj.Members(caps)
	if !ok {
		return nil, false
	}
	out, changed := caps, false
	if m["tasks"] != nil {
		if o, err := jsonobj.DeleteMember(out, "tasks"); err == nil {
			out, changed = o, true
		}
	}
	if ext, ok := jsonobj.Members(m["extensions"]); ok && ext[tasksExtension] != nil {
		if e, err := jsonobj.DeleteMember(m["extensions"], tasksExtension); err == nil {
			if o, err := jsonobj.SetMember(out, "extensions", e); err == nil {
				out, changed = o, true
			}
		}
	}
	return out, changed
}

// requestName is what names a prompts/get or resources/read request: the prompt's name or
// the resource's URI (the members of its params p).
func requestName(p map[string]json.RawMessage) string {
	var name string
	if json.Unmarshal(p["name"], &name) != nil || name == "" {
		_ = json.Unmarshal(p["uri"], &name)
	}
	return name
}
