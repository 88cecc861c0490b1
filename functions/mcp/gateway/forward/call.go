// The proxied tools/call: the call and its outcome, recorded once when it returns; the
// rate limit before it; its audit row; the authorization answers in its place.

package forward

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/audit"
	"github.com/agentpack/gateway/functions/mcp/gateway/metrics"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/ratelimit"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
)

// TimeoutHint is the hint on a synchronous call that ran out of its budget.
const TimeoutHint = "the call ran past the gateway's synchronous budget; a task-capable client can run it as a task (a task-augmented tools/call) to wait longer"

// Call is a proxied tools/call of ref for st: metrics, forward, audit, and the envelope for
// a gateway-side failure. params is the client's params object and p its members (the
// edge decoded them once). The result is the upstream's bytes; an upstream JSON-RPC error
// is returned as the *jsonrpc.Error to pass through. Exactly one audit row is written for
// every call that went upstream and completed, with its outcome (AuditOutcome): a result
// (without or with isError: true) that is not an InputRequiredResult (its retry is the
// call), the upstream's JSON-RPC error, and a failure of the hop (timeout, unreachable,
// not MCP). A call answered with the way to authorize writes none.
// A caller the connection needs authorization from gets the way to authorize
// (connections.PrepareCall) and nothing is forwarded. The call's outcome (Metrics.ToolCall
// and UpstreamCall, the access-log fields, the span's status) is recorded once, when Call
// returns (outcome.record); each exit only says what its outcome is.
func (f *Forwarder) Call(ctx context.Context, st *request.State, ref Ref, params json.RawMessage, p map[string]json.RawMessage) (_ json.RawMessage, rerr error) {
	start := time.Now()
	name := ref.Name
	logx.Annotate(ctx, logx.FieldTool, name)
	logx.Annotate(ctx, logx.FieldConnectionID, ref.Conn.ID)
	ctx, span := telemetry.Start(ctx, "tools/call "+name, attribute.String("agentpack.tool", name),
		attribute.String("agentpack.connection_id", ref.Conn.ID))
	var out outcome
	defer func() {
		out.record(ctx, f.o.Metrics, st, ref, start)
		if out.spanErr != nil {
			telemetry.Fail(span, "upstream call failed", out.spanErr)
		}
		if rerr != nil {
			telemetry.Fail(span, "proxied call failed", rerr)
		}
		span.End()
	}()
	bind := upstreamauth.Binding{Subject: st.Principal.Subject, Workspace: st.Workspace, ConnectionID: ref.Conn.ID,
		Method: "tools/call", Name: name, Params: params}
	params, declined, err := f.gatewayState(ctx, bind, params, p)
	if err != nil {
		out.kind = "rpc_error"
		return nil, err
	}
	up, err := UpstreamParams(params, ref.Tool.UpstreamName)
	if err != nil {
		return nil, wire.InvalidParams(err.Error())
	}
	var res json.RawMessage
	callCtx, cancel := f.CallContext(ctx, st)
	if refused, o := f.limit(callCtx, st, ref); refused != nil {
		cancel()
		out = o
		return refused, nil
	}
	ver := AnswerVersion(st.Version, p["_meta"])
	pc, err := f.prepare(callCtx, st, ref.Conn, ver) // under the call's deadline too
	if err == nil && (pc.Answer != nil || pc.AnswerErr != nil) {
		cancel()
		out.kind = "authorization_required"
		return f.answer(ctx, bind, declined, ref.Conn.Name, pc.Answer, pc.AnswerErr)
	}
	if err == nil {
		// The upstream hop mirrors the tool's x-mcp-header parameters (2026-07-28 upstreams).
		fctx := mcpclient.WithInputSchema(callCtx, ref.Tool.InputSchema)
		res, err = f.o.Upstreams.Forward(fctx, pc.Target, "tools/call", up, relayFor(st, p["_meta"]))
	}
	cancel()
	out.d = time.Since(start)
	if err != nil {
		out.metric = "error"
		if je := mcpclient.RPCError(err); je != nil {
			if ans, ansErr, ok := UpstreamElicitation(st.Version, p["_meta"], "tools/call", je); ok {
				// An older upstream's -32042, which a 2026-07-28 client must not receive.
				out.kind = "authorization_required"
				return ans, ansErr
			}
			je = ClientError(st.Version, je)
			out.kind, out.upstream, out.rpcCode = "rpc_error", "rpc_error", strconv.FormatInt(je.Code, 10)
			f.auditFailure(st, ref.Canonical(), ref.Conn.ID, out.d, p["arguments"], AuditRPCError)
			return nil, je
		}
		if ans, ansErr, ok := f.stepUp(ctx, st, ref.Conn, ver, err); ok {
			// 403 insufficient_scope, or a 401 that a refresh did not cure: the way to
			// (re-)authorize, in this call.
			out.kind = "authorization_required"
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
		out.kind, out.upstream, out.rpcCode, out.errorID, out.spanErr = "tool_error", "error", string(fail.Code), errorID, err
		f.auditFailure(st, ref.Canonical(), ref.Conn.ID, out.d, p["arguments"], FailureOutcome(fail.Code))
		return wire.SealJSON(wire.EnvelopeMeta{Tool: name, Version: "upstream"}, fail), nil
	}
	out.kind = "ok"
	switch {
	case ResultIsError(res):
		out.kind = "tool_error"
	case ResultInputRequired(res):
		// The upstream asks the client for input (2026-07-28 multi round-trip): the call is
		// not complete, its retry is. One completed call is one audit row (issue 34).
		out.kind = "input_required"
	}
	out.metric, out.upstream = out.kind, out.kind
	switch out.kind {
	case "ok":
		if err := f.Audit(st, ref.Canonical(), ref.Conn.ID, out.d, p["arguments"], AuditOK); err != nil {
			return nil, wire.Internal(ctx, f.log, "tools/call", err, nil) // its outcome: "error"
		}
	case "tool_error":
		f.auditFailure(st, ref.Canonical(), ref.Conn.ID, out.d, p["arguments"], AuditToolError)
	}
	return res, nil
}

// outcome is how a proxied tools/call ended, recorded once (record) when it returns.
type outcome struct {
	kind     string // the access log's outcome field (logx.FieldOutcome); "" leaves it unset
	metric   string // Metrics.ToolCall's outcome; "" records no ToolCall
	upstream string // Metrics.UpstreamCall's outcome; "" records none (nothing went upstream)
	rpcCode  string // logx.FieldRPCCode: a JSON-RPC code or the envelope's error code
	errorID  string // logx.FieldErrorID: the id the client sees and the log names
	d        time.Duration
	spanErr  error // a failure the span records although the call answers a result
}

// record writes o: the metrics (with the call's duration d, or the time since start when o
// has none) and the access-log fields of ctx's request. An outcome "error" that
// wire.Internal wrote meanwhile (the audit row or an authorization answer could not be
// written) stays: the client got that internal error, not o's answer.
func (o *outcome) record(ctx context.Context, m *metrics.EMF, st *request.State, ref Ref, start time.Time) {
	if o.d == 0 {
		o.d = time.Since(start)
	}
	if o.metric != "" {
		m.ToolCall("proxied", ref.Name, o.metric, st.RequestID, o.d)
	}
	if o.upstream != "" {
		m.UpstreamCall(ref.Conn.ID, o.upstream, st.RequestID, o.d)
	}
	if logx.Annotated(ctx, logx.FieldOutcome) == "error" {
		return
	}
	for _, kv := range []struct {
		f logx.Field
		v string
	}{{logx.FieldOutcome, o.kind}, {logx.FieldRPCCode, o.rpcCode}, {logx.FieldErrorID, o.errorID}} {
		if kv.v != "" {
			logx.Annotate(ctx, kv.f, kv.v)
		}
	}
}

// Limit counts the call against the workspace's rate limits (docs/RATE-LIMITS.md) and
// returns nil to go on, or the tools/call result that refuses it: the RATE_LIMITED
// envelope (retryable, details.retryAfterSeconds) when a window is full, UNAVAILABLE when
// the count could not be taken (the database is down; nothing is forwarded uncounted).
// Nothing reaches the upstream after a refusal and no audit row is written; a refusal's
// outcome (Metrics.ToolCall, the access-log fields) is recorded here, with the time since
// start. A task-augmented call of a proxied tool uses it (it is one call too); Call uses
// limit and records the outcome with its own.
func (f *Forwarder) Limit(ctx context.Context, st *request.State, ref Ref, start time.Time) json.RawMessage {
	refused, o := f.limit(ctx, st, ref)
	if refused != nil {
		o.record(ctx, f.o.Metrics, st, ref, start)
	}
	return refused
}

// limit is Limit without recording the refusal's outcome, which it returns.
func (f *Forwarder) limit(ctx context.Context, st *request.State, ref Ref) (json.RawMessage, outcome) {
	if f.o.Limiter == nil {
		return nil, outcome{}
	}
	if st.Snapshot != nil && st.Snapshot.Doc != nil && !st.Snapshot.Doc.Limited(ref.Conn.ID, ref.Canonical(), st.Principal.Subject) {
		// No limit of the workspace's snapshot applies: no statement (docs/RATE-LIMITS.md,
		// "Limits travel with the catalog").
		return nil, outcome{}
	}
	d, err := f.o.Limiter.Take(ctx, ratelimit.Call{Workspace: st.Workspace, Connection: ref.Conn.ID,
		Tool: ref.Canonical(), Principal: st.Principal.Subject})
	meta := wire.EnvelopeMeta{Tool: ref.Name, Version: "upstream"}
	switch {
	case err != nil:
		errorID := httpapi.NewID()
		f.log.ErrorContext(ctx, "rate limit check failed", "tool", ref.Name, "error_id", errorID, "err", err)
		f.o.Metrics.RateLimit("error", "", st.RequestID)
		fail := wire.ToolError(apperr.Wrap(err, apperr.Unavailable, "the rate limit could not be checked"), errorID)
		fail.Retryable = true
		return wire.SealJSON(meta, fail), outcome{kind: "tool_error", metric: "error", errorID: errorID}
	case d.Windows == 0:
		return nil, outcome{}
	case d.Allowed:
		f.o.Metrics.RateLimit("allowed", "", st.RequestID)
		return nil, outcome{}
	}
	f.o.Metrics.RateLimit("refused", d.Window.Kind, st.RequestID)
	return wire.SealJSON(meta, wire.ToolError(ratelimit.Refusal(d), "")),
		outcome{kind: "rate_limited", metric: "rate_limited", rpcCode: string(apperr.RateLimited)}
}

// The outcomes of a proxied call's audit row (db.AuditEvent.Outcome,
// migrations/00046_audit_outcome.sql). AuditOK and AuditToolError are the access log's
// outcome values for a result; AuditRPCError is its "rpc_error"; the gateway's failure
// envelope (the access log's "tool_error" with rpc_code UPSTREAM_…) is split by its code
// (FailureOutcome). Every one but AuditOK counts as an error on the Usage page.
const (
	AuditOK            = "ok"             // a result without isError: true
	AuditToolError     = "tool_error"     // the upstream's result had isError: true
	AuditRPCError      = "rpc_error"      // the upstream answered a JSON-RPC error
	AuditTimeout       = "timeout"        // UPSTREAM_TIMEOUT: the hop ran out of the call's budget
	AuditUnavailable   = "unavailable"    // UPSTREAM_UNAVAILABLE: the upstream could not be reached
	AuditUpstreamError = "upstream_error" // UPSTREAM_ERROR and any other failure of the hop
)

// FailureOutcome is the audit outcome of a call the gateway answered with a failure
// envelope of code (wire.UpstreamFailure): AuditTimeout for UPSTREAM_TIMEOUT,
// AuditUnavailable for UPSTREAM_UNAVAILABLE (and UNAVAILABLE), else AuditUpstreamError.
func FailureOutcome(code apperr.Code) string {
	switch code {
	case apperr.UpstreamTimeout:
		return AuditTimeout
	case apperr.UpstreamUnavailable, apperr.Unavailable:
		return AuditUnavailable
	}
	return AuditUpstreamError
}

// Audit queues the audit row of a proxied call of tool on connection connID by st's caller
// that ended with outcome (AuditOK, AuditToolError, …; audit.Trail.Record: the answer does
// not wait on the database). Its error is Record's: only after the Trail was closed.
func (f *Forwarder) Audit(st *request.State, tool, connID string, d time.Duration, args json.RawMessage, outcome string) error {
	return f.o.Audit.Record(audit.Entry{RequestID: st.RequestID, Principal: st.Principal.Subject,
		WorkspaceID: st.Workspace, ChatID: st.ChatID, Tool: tool, Kind: "proxied", Outcome: outcome,
		ConnectionID: connID, Duration: d, Arguments: args})
}

// auditFailure is Audit for a failed call, whose answer is the failure whatever becomes of
// its row: a row that cannot be written is counted lost and logged by the Trail.
func (f *Forwarder) auditFailure(st *request.State, tool, connID string, d time.Duration, args json.RawMessage, outcome string) {
	_ = f.Audit(st, tool, connID, d, args, outcome)
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
