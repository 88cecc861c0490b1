package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/audit"
	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The decision point of the access policies (docs/POLICIES.md). The workspace's Cedar
// documents ship in its catalog snapshot and are compiled once per snapshot (policiesOf),
// so a decision reads no database. Two questions are asked, here only:
//
//   - "list": tools/list (both endpoints) shows exactly the tools it permits (toolsList
//     filters the server item's cached list per request when the workspace has policies);
//   - "call": every tools/call is asked before anything else happens to it — at the edge
//     (edgeRoutes, before tasks, rate limits, credentials or forwarding), which every way to
//     call reaches: a direct call, agentpack_tool_call (rewritten into the direct call before
//     the edge reads it), a task-augmented call in both task forms, the 2026-07-28 revision,
//     a tool renamed by an override (decided under the name it is listed by), and a built-in;
//     the protocol guard asks for a built-in call go-sdk serves without the edge (policyDone).
//
// A denial is an isError result with the FORBIDDEN envelope whose details carry the
// machine-readable reason and the deciding policy ids (never the policy text); it is audited
// (kind "denied") and nothing reaches the upstream.

// compiledPolicies is a snapshot's policy engine and per-tool resources.
type compiledPolicies struct {
	engine *policy.Engine
	// broken: a stored document did not parse (saved documents are checked, so only a
	// hand-edited store gets here): every request is denied rather than run unchecked.
	broken    bool
	resources sync.Map // *catalog.Tool → policy.Resource
}

type policyMemoKey struct{}

// policiesOf returns snap's compiled policies, nil when the workspace has none (then nothing
// is evaluated).
func policiesOf(snap *catalog.Snapshot) *compiledPolicies {
	if snap == nil {
		return nil
	}
	if snap.Pending() {
		// A lazy snapshot's first page (http.go firstPageRequest) is served only when its
		// index says the workspace has no policies; its Doc is being filled in the
		// background and must not be read until it is complete (a data race otherwise).
		if h := snap.Head(); h != nil && h.Policies == nil {
			return nil
		}
		// Not reached from serveMCP (it completes such a snapshot first); wait to be safe.
		if snap.Complete(context.Background()) != nil {
			return &compiledPolicies{engine: &policy.Engine{}, broken: true} // unknown policies deny
		}
	}
	if snap.Doc == nil || snap.Doc.Policies == nil {
		return nil
	}
	cp := snap.Memo(policyMemoKey{}, func() any {
		cp := &compiledPolicies{engine: &policy.Engine{}}
		var err error
		if t := snap.Doc.Policies.Global; t != "" {
			if cp.engine.Global, err = policy.Parse(t); err != nil {
				cp.broken = true
			}
		}
		if t := snap.Doc.Policies.Workspace; t != "" {
			if cp.engine.Workspace, err = policy.Parse(t); err != nil {
				cp.broken = true
			}
		}
		return cp
	}).(*compiledPolicies)
	if !cp.broken && cp.engine.Empty() {
		return nil
	}
	return cp
}

// decide asks action about res for st's caller with args (a call's arguments; nil for list).
func (cp *compiledPolicies) decide(st *requestState, action string, res policy.Resource, args json.RawMessage) policy.Decision {
	if cp.broken {
		return policy.Decision{Allowed: false, Reason: "policy_unreadable"}
	}
	endpoint := "aggregate"
	if st.Single != nil {
		endpoint = "single"
	}
	p := st.Principal
	return cp.engine.Decide(&policy.Request{
		Principal: policy.Principal{Subject: p.Subject, Role: p.Role, Workspace: st.Workspace, Groups: p.Groups},
		Action:    action, Resource: res, Arguments: args, Chat: st.ChatID,
		Protocol: cmp.Or(st.Version, "2025-03-26"), Endpoint: endpoint, Time: time.Now(),
	})
}

// toolResource is policy.ToolResource memoised per snapshot.
func (cp *compiledPolicies) toolResource(c *catalog.Connection, t *catalog.Tool) policy.Resource {
	if r, ok := cp.resources.Load(t); ok {
		return r.(policy.Resource)
	}
	r := policy.ToolResource(c, t)
	cp.resources.Store(t, r)
	return r
}

// builtinResource is built-in b as a policy resource.
func builtinResource(b *builtin.Compiled) policy.Resource {
	ro := b.Annotations.ReadOnlyHint
	d := b.Annotations.DestructiveHint
	return policy.Resource{Type: policy.TypeBuiltin, Name: b.Name, UpstreamName: b.Name, ReadOnly: ro,
		Destructive: !ro && (d == nil || *d)}
}

// denial is a refused call: the result's envelope and what the audit row names.
type denial struct {
	meta wire.EnvelopeMeta
	fail *wire.EnvelopeError
}

// policyCall is the "call" decision for tool name with args under st (see the top of this
// file): nil to go on, else the denial, already audited and counted. A name that is neither
// a built-in nor a visible proxied tool is left to the caller's own answer (unknown tool).
// An audit row that cannot be written fails the request (-32603), as any audited call does.
func (g *Gateway) policyCall(ctx context.Context, st *requestState, it *serverItem, name string, args json.RawMessage) (*denial, error) {
	st.policyDone = true
	cp := policiesOf(st.Snapshot)
	if cp == nil {
		return nil, nil
	}
	start := time.Now()
	var res policy.Resource
	kind, connID, version, counted := "proxied", "", "upstream", name
	if b := g.builtins.Lookup(name); b != nil && st.Single == nil {
		res, kind, version = builtinResource(b), "builtin", b.Version
	} else if ref, ok := it.lookup(st, name); ok {
		res, connID, counted = cp.toolResource(ref.Conn, ref.Tool), ref.Conn.ID, ref.Canonical()
	} else {
		return nil, nil
	}
	d := cp.decide(st, policy.ActionCall, res, args)
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
	if err := g.audit.Record(audit.Entry{RequestID: st.RequestID, Principal: st.Principal.Subject,
		WorkspaceID: st.Workspace, ChatID: st.ChatID, Tool: counted, Version: why, Kind: "denied", ConnectionID: connID,
		Duration: time.Since(start), Arguments: args}); err != nil {
		return nil, wire.Internal(ctx, g.log, "tools/call", err, nil)
	}
	g.metrics.ToolCall(kind, name, "denied", st.RequestID, time.Since(start))
	ids := d.PolicyIDs
	if ids == nil {
		ids = []string{}
	}
	details := map[string]any{"reason": "policy_denied", "decision": d.Reason, "policyIds": ids}
	if d.Document != "" {
		details["document"] = d.Document
	}
	return &denial{meta: wire.EnvelopeMeta{Tool: name, Version: version}, fail: &wire.EnvelopeError{
		Code: apperr.Forbidden, Message: "this call is denied by an access policy of the workspace",
		Hint: "ask a workspace admin; the policy ids are in details.policyIds", Details: details}}, nil
}

// result is d as a tools/call result.
func (d *denial) result() *mcp.CallToolResult { return wire.Seal(d.meta, nil, d.fail) }

// listable is st's request.State.Listable: nil when the workspace has no policies.
func (g *Gateway) listable(st *requestState) func(c *catalog.Connection, t *catalog.Tool, builtinName string) bool {
	cp := policiesOf(st.Snapshot)
	if cp == nil {
		return nil
	}
	return func(c *catalog.Connection, t *catalog.Tool, builtinName string) bool {
		if t == nil {
			b := g.builtins.Lookup(builtinName)
			return b != nil && cp.decide(st, policy.ActionList, builtinResource(b), nil).Allowed
		}
		return cp.decide(st, policy.ActionList, cp.toolResource(c, t), nil).Allowed
	}
}

// listedTool is one tools/list entry kept for per-request filtering: its name, definition
// bytes, and the resource the "list" decision is asked about.
type listedTool struct {
	name string
	def  []byte
	res  policy.Resource
}

// filteredList is toolsList for a workspace with policies: it.listed (the key's whole
// list) less what "list" denies st's caller, paged as toolsList pages. Computed per
// request, since the answer depends on the principal, the chat and the time.
func (it *serverItem) filteredList(cp *compiledPolicies, st *requestState, cursor string) (json.RawMessage, bool) {
	var kept []listedTool
	for _, t := range it.listed {
		if cp.decide(st, policy.ActionList, t.res, nil).Allowed {
			kept = append(kept, t)
		}
	}
	n := 0
	if cursor != "" {
		var err error
		if n, err = pageOf(cursor); err != nil || n <= 0 || n*toolsPageSize >= len(kept) {
			return nil, false
		}
	}
	start := n * toolsPageSize
	page := kept[start:min(start+toolsPageSize, len(kept))]
	return pageBytes(page, n, start+toolsPageSize < len(kept)), true
}
