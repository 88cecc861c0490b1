package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.opentelemetry.io/otel/attribute"
)

func (g *Gateway) builtinHandler(b *compiledBuiltin) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return g.callBuiltin(ctx, b, req)
	}
}

// callBuiltin runs a built-in in the seed's order: instrumentation wraps the call; inside
// it the access check (before any argument parsing), argument validation against the
// input schema, the default project, the handler; any error is classified here (the
// dispatch), the result sealed once, and a successful write audited.
func (g *Gateway) callBuiltin(ctx context.Context, b *compiledBuiltin, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	st := stateFrom(ctx)
	if st == nil {
		return nil, errors.New("gateway: request state missing")
	}
	start := time.Now()
	ctx, cancel := withRequestDeadline(ctx, st)
	defer cancel()
	logx.Annotate(ctx, logx.FieldTool, b.Name)
	ctx, span := telemetry.Start(ctx, "tools/call "+b.Name, attribute.String("agentpack.tool", b.Name))
	defer span.End()
	data, err := g.runBuiltin(ctx, st, b, req.Params.Arguments)
	var fail *EnvelopeError
	outcome := "ok"
	if err != nil {
		errorID := httpapi.NewID()
		fail = toolError(err, errorID)
		outcome = "tool_error"
		telemetry.Fail(span, "built-in failed", err)
		logx.Annotate(ctx, logx.FieldRPCCode, string(fail.Code))
		if fail.ErrorID != "" {
			logx.Annotate(ctx, logx.FieldErrorID, errorID)
			g.log.ErrorContext(ctx, "built-in tool failed", "tool", b.Name, "error_id", errorID, "err", err)
		}
	}
	logx.Annotate(ctx, logx.FieldOutcome, outcome)
	res := seal(EnvelopeMeta{Tool: b.Name, Version: b.Version}, data, fail)
	d := time.Since(start)
	g.metrics.toolCall("builtin", b.Name, outcome, st.requestID, d)
	if !res.IsError && !b.Annotations.ReadOnlyHint {
		if err := g.audit(ctx, st, b.Name, b.Version, "builtin", "", d, req.Params.Arguments); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func (g *Gateway) runBuiltin(ctx context.Context, st *requestState, b *compiledBuiltin, raw json.RawMessage) (any, error) {
	if err := checkToolAccess(st.principal, b, st.workspace); err != nil {
		return nil, err
	}
	args, err := validateArgs(b, raw)
	if err != nil {
		return nil, err
	}
	call := &Call{Principal: st.principal, Workspace: st.workspace, Args: args, RawArgs: raw, Req: st}
	if b.TakesProject {
		if call.ProjectID, err = g.defaultProject(ctx, st, args); err != nil {
			return nil, err
		}
	}
	return b.Handler(ctx, call)
}

// validateArgs parses raw (absent = {}) and validates it against b's input schema;
// failures are VALIDATION_ERROR with the schema violations in details.
func validateArgs(b *compiledBuiltin, raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytesReader(raw))
	if err != nil {
		return nil, apperr.New(apperr.Validation, "Invalid tool arguments: not valid JSON")
	}
	if err := b.schema.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		details := any(nil)
		if errors.As(err, &ve) {
			details = ve.DetailedOutput()
		}
		return nil, apperr.Wrap(err, apperr.Validation, "Invalid tool arguments: %s", shortSchemaError(err)).
			WithDetails(details).WithHint("check the tool's inputSchema")
	}
	m, _ := v.(map[string]any)
	return m, nil
}

// defaultProject fills projectId (docs/DESIGN.md §4): the argument, else the request's project,
// else the workspace's default project; a project of another workspace is refused.
func (g *Gateway) defaultProject(ctx context.Context, st *requestState, args map[string]any) (string, error) {
	pid, _ := args["projectId"].(string)
	if pid == "" {
		pid = st.projectID
	}
	if pid == "" {
		ws, err := db.WorkspaceGet(ctx, g.o.Pool, st.workspace)
		if err != nil {
			return "", err
		}
		if ws.DefaultProjectID == nil {
			return "", nil
		}
		pid = *ws.DefaultProjectID
	}
	p, err := db.ProjectGet(ctx, g.o.Pool, pid)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return "", err // the database failing is UNAVAILABLE (retryable), not the caller's mistake
	}
	if err != nil || p.WorkspaceID != st.workspace {
		return "", apperr.New(apperr.InvalidReference, "project %s is not in this workspace", pid)
	}
	args["projectId"] = pid
	return pid, nil
}

// callContext is the context of an upstream call: bounded by CallTimeout and by the
// request's own deadline (the Lambda deadline less 1 s), which go-sdk does not pass to
// tool handlers, and cancelled with ctx — but carrying none of ctx's values except the
// request id. go-sdk keeps the inbound Mcp-Protocol-Version in the request context and its
// client would reuse it for the upstream connect (a 2026-07-28 client made the gateway
// offer 2026-07-28 to a 2025-11-25 upstream, which answered 400).
func (g *Gateway) callContext(ctx context.Context, st *requestState) (context.Context, context.CancelFunc) {
	timeout := g.o.CallTimeout
	if !st.deadline.IsZero() {
		if left := time.Until(st.deadline) - time.Second; left < timeout {
			timeout = max(left, 100*time.Millisecond)
		}
	}
	// telemetry.Carry: the span and the request's logging data, none of go-sdk's values.
	up, cancel := context.WithTimeout(logx.WithRequestID(telemetry.Carry(context.Background(), ctx), st.requestID), timeout)
	stop := context.AfterFunc(ctx, cancel)
	return up, func() { stop(); cancel() }
}

// withRequestDeadline re-applies the request's deadline (less 1 s, as for upstream calls),
// which go-sdk does not pass to tool handlers, so that a built-in's Postgres queries end
// with the request instead of outliving it.
func withRequestDeadline(ctx context.Context, st *requestState) (context.Context, context.CancelFunc) {
	if st.deadline.IsZero() {
		return ctx, func() {}
	}
	dl := st.deadline.Add(-time.Second)
	if time.Until(dl) < 100*time.Millisecond {
		dl = time.Now().Add(100 * time.Millisecond)
	}
	return context.WithDeadline(ctx, dl)
}

// audit writes one audit_events row (docs/DESIGN.md §4) and returns once it is committed. The argument digest is a SHA-256 of the
// raw arguments: the row never holds argument values.
func (g *Gateway) audit(ctx context.Context, st *requestState, tool, version, kind, connID string, d time.Duration, args json.RawMessage) error {
	sum := sha256.Sum256(args)
	ev := &db.AuditEvent{
		RequestID: st.requestID, Principal: st.principal.Subject, WorkspaceID: &st.workspace,
		Tool: tool, Version: version, Kind: kind, DurationMS: float64(d.Microseconds()) / 1000,
		ArgsDigest: "sha256:" + hex.EncodeToString(sum[:]),
	}
	if connID != "" {
		ev.ConnectionID = &connID
	}
	if err := g.auditor.write(ev); err != nil { // group commit (audit.go); never cancelled by ctx
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// targetCache keeps each connection's row (URL, transport, headers, auth mode) in a warm
// process, keyed by connection id and invalidated when the catalog shows a newer
// updatedAt. Headers are read from Postgres, never from the catalog document.
type targetCache struct {
	mu sync.Mutex
	m  map[string]cachedTarget
}

type cachedTarget struct {
	updatedAt time.Time
	row       *db.Connection
}

func newTargetCache() *targetCache { return &targetCache{m: map[string]cachedTarget{}} }

// row returns connection c's row (cached per updatedAt); NOT_FOUND when it was removed.
func (tc *targetCache) row(ctx context.Context, pool *db.Pool, c *catalog.Connection) (*db.Connection, error) {
	tc.mu.Lock()
	ct, ok := tc.m[c.ID]
	tc.mu.Unlock()
	if ok && ct.updatedAt.Equal(c.UpdatedAt) {
		return ct.row, nil
	}
	row, err := db.ConnectionGet(ctx, pool, c.ID)
	if err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return nil, apperr.New(apperr.NotFound, "this server was removed")
		}
		return nil, err
	}
	tc.mu.Lock()
	tc.m[c.ID] = cachedTarget{updatedAt: c.UpdatedAt, row: row}
	tc.mu.Unlock()
	return row, nil
}

// preparedCall is where a proxied request goes: the target to forward to, or — for an
// OAuth connection the caller has no usable token for — the answer to give instead
// (nothing is sent upstream; connections.PrepareCall): a result (isError with the
// authorization link, for clients before 2025-11-25) or a JSON-RPC error (-32042 with it).
type preparedCall struct {
	target    mcpclient.Target
	answer    *mcp.CallToolResult
	answerErr error
}

// stepUp answers a failed call of connection c for st's principal whose upstream asked for
// more scopes (connections.StepUp); ok is false for any other failure.
func (g *Gateway) stepUp(ctx context.Context, st *requestState, c *catalog.Connection) (*mcp.CallToolResult, error, bool) {
	if g.o.Connections == nil {
		return nil, nil, false
	}
	row, err := g.targets.row(ctx, g.o.Pool, c)
	if err != nil {
		return nil, nil, false
	}
	return g.o.Connections.StepUp(ctx, row, st.principal, st.version)
}

// prepare resolves connection c's target for st's principal (docs/UPSTREAM-AUTH.md).
func (g *Gateway) prepare(ctx context.Context, st *requestState, c *catalog.Connection, version string) (*preparedCall, error) {
	row, err := g.targets.row(ctx, g.o.Pool, c)
	if err != nil {
		return nil, err
	}
	if g.o.Connections == nil {
		return &preparedCall{target: connections.TargetOf(row)}, nil
	}
	t, answer, answerErr, err := g.o.Connections.PrepareCall(ctx, row, st.principal, version)
	if err != nil {
		return nil, err
	}
	return &preparedCall{target: t, answer: answer, answerErr: answerErr}, nil
}
