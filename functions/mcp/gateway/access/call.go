package access

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/audit"
	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/metrics"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Checker asks the "call" decision and records its denials.
type Checker struct {
	Builtins *builtin.Set
	Audit    *audit.Trail // a denial's row (kind "denied")
	Metrics  *metrics.EMF // a denial's tool-call metric (outcome "denied")
	Log      *slog.Logger // an audit failure's -32603
}

// Denial is a refused call: the result's envelope meta and its FORBIDDEN error.
type Denial struct {
	Meta wire.EnvelopeMeta
	Fail *wire.EnvelopeError
}

// Result is d as a tools/call result (isError, the sealed envelope).
func (d *Denial) Result() *mcp.CallToolResult { return wire.Seal(d.Meta, nil, d.Fail) }

// Call is the "call" decision for tool name with args under st (see the package doc):
// nil to go on, else the denial, already audited and counted. proxied finds the proxied
// tool called name on st's endpoint; a name that is neither a built-in (aggregate
// endpoint only) nor a proxied tool is left to the caller's own answer (unknown tool).
// An audit row that cannot be written fails the request (-32603, wire.Internal), as any
// audited call does.
func (k *Checker) Call(ctx context.Context, st *request.State, name string, proxied func(name string) (forward.Ref, bool), args json.RawMessage) (*Denial, error) {
	p := Of(st.Snapshot)
	if p == nil {
		return nil, nil
	}
	start := time.Now()
	var res policy.Resource
	kind, connID, version, counted := "proxied", "", "upstream", name
	if b := k.Builtins.Lookup(name); b != nil && st.Single == nil {
		res, kind, version = BuiltinResource(b), "builtin", b.Version
	} else if ref, ok := proxied(name); ok {
		res, connID, counted = p.ToolResource(ref.Conn, ref.Tool), ref.Conn.ID, ref.Canonical()
	} else {
		return nil, nil
	}
	d := p.Decide(st, policy.ActionCall, res, args)
	if d.Allowed {
		return nil, nil
	}
	why := strings.Join(d.PolicyIDs, ",")
	if why == "" {
		why = d.Reason
	}
	logx.Annotate(ctx, logx.FieldTool, name)
	logx.Annotate(ctx, logx.FieldOutcome, "policy_denied")
	logx.Annotate(ctx, logx.FieldRPCCode, string(apperr.Forbidden))
	if err := k.Audit.Record(audit.Entry{RequestID: st.RequestID, Principal: st.Principal.Subject,
		WorkspaceID: st.Workspace, ChatID: st.ChatID, Tool: counted, Version: why, Kind: "denied", ConnectionID: connID,
		Duration: time.Since(start), Arguments: args}); err != nil {
		return nil, wire.Internal(ctx, k.Log, "tools/call", err, nil)
	}
	k.Metrics.ToolCall(kind, name, "denied", st.RequestID, time.Since(start))
	ids := d.PolicyIDs
	if ids == nil {
		ids = []string{}
	}
	details := map[string]any{"reason": "policy_denied", "decision": d.Reason, "policyIds": ids}
	if d.Document != "" {
		details["document"] = d.Document
	}
	return &Denial{Meta: wire.EnvelopeMeta{Tool: name, Version: version}, Fail: &wire.EnvelopeError{
		Code: apperr.Forbidden, Message: "this call is denied by an access policy of the workspace",
		Hint: "ask a workspace admin; the policy ids are in details.policyIds", Details: details}}, nil
}
