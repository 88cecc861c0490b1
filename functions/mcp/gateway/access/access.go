// Package access is the decision point of the workspace's access policies
// (docs/POLICIES.md). The workspace's Cedar documents ship in its catalog snapshot and are
// compiled once per snapshot ([Of]), so a decision reads no database. Two questions are
// asked, here only:
//
//   - "list": tools/list (both endpoints) shows exactly the tools it permits ([Listable]
//     for the built-ins' discovery search, and the gateway's per-request filtering of a
//     server item's cached list, package listing);
//   - "call": every tools/call is asked before anything else happens to it ([Checker.Call])
//     — at the gateway's edge (before tasks, rate limits, credentials or forwarding), which
//     every way to call reaches: a direct call, agentpack_tool_call (rewritten into the
//     direct call before the edge reads it), a task-augmented call in both task forms, the
//     2026-07-28 revision, a tool renamed by an override (decided under the name it is
//     listed by), and a built-in; the protocol guard asks for a built-in call go-sdk serves
//     without the edge.
//
// A denial is an isError result with the FORBIDDEN envelope whose details carry the
// machine-readable reason and the deciding policy ids (never the policy text); it is
// audited (kind "denied") and nothing reaches the upstream.
package access

import (
	"cmp"
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/policy"
)

// Policies is one catalog snapshot's compiled access policies: the policy engine and the
// per-tool resources.
type Policies struct {
	engine *policy.Engine
	// broken: a stored document did not parse (saved documents are checked, so only a
	// hand-edited store gets here): every request is denied rather than run unchecked.
	broken    bool
	resources sync.Map // *catalog.Tool → policy.Resource
}

type memoKey struct{}

// Of returns snap's compiled policies, nil when snap is nil or its workspace has none
// (then nothing is evaluated). A document that does not parse gives Policies that deny
// everything (reason "policy_unreadable"), as does a pending snapshot that fails to
// complete.
func Of(snap *catalog.Snapshot) *Policies {
	if snap == nil {
		return nil
	}
	if snap.Pending() {
		// A lazy snapshot's first page (the gateway's firstPageRequest) is served only when
		// its index says the workspace has no policies; its Doc is being filled in the
		// background and must not be read until it is complete (a data race otherwise).
		if h := snap.Head(); h != nil && h.Policies == nil {
			return nil
		}
		// Not reached from the gateway (it completes such a snapshot first); wait to be safe.
		if snap.Complete(context.Background()) != nil {
			return &Policies{engine: &policy.Engine{}, broken: true} // unknown policies deny
		}
	}
	if snap.Doc == nil || snap.Doc.Policies == nil {
		return nil
	}
	p := snap.Memo(memoKey{}, func() any {
		p := &Policies{engine: &policy.Engine{}}
		var err error
		if t := snap.Doc.Policies.Global; t != "" {
			if p.engine.Global, err = policy.Parse(t); err != nil {
				p.broken = true
			}
		}
		if t := snap.Doc.Policies.Workspace; t != "" {
			if p.engine.Workspace, err = policy.Parse(t); err != nil {
				p.broken = true
			}
		}
		return p
	}).(*Policies)
	if !p.broken && p.engine.Empty() {
		return nil
	}
	return p
}

// Decide asks action (policy.ActionList or policy.ActionCall) about res for st's caller
// with args (a call's arguments; nil for list). The request's protocol defaults to
// 2025-03-26 when st names none; the endpoint is "single" or "aggregate".
func (p *Policies) Decide(st *request.State, action string, res policy.Resource, args json.RawMessage) policy.Decision {
	if p.broken {
		return policy.Decision{Allowed: false, Reason: "policy_unreadable"}
	}
	endpoint := "aggregate"
	if st.Single != nil {
		endpoint = "single"
	}
	pr := st.Principal
	return p.engine.Decide(&policy.Request{
		Principal: policy.Principal{Subject: pr.Subject, Role: pr.Role, Workspace: st.Workspace, Groups: pr.Groups},
		Action:    action, Resource: res, Arguments: args, Chat: st.ChatID,
		Protocol: cmp.Or(st.Version, "2025-03-26"), Endpoint: endpoint, Time: time.Now(),
	})
}

// ToolResource is policy.ToolResource of tool t of connection c, memoised per snapshot.
func (p *Policies) ToolResource(c *catalog.Connection, t *catalog.Tool) policy.Resource {
	if r, ok := p.resources.Load(t); ok {
		return r.(policy.Resource)
	}
	r := policy.ToolResource(c, t)
	p.resources.Store(t, r)
	return r
}

// BuiltinResource is built-in b as a policy resource: destructive unless read-only or
// annotated non-destructive (MCP's defaults for tool annotations).
func BuiltinResource(b *builtin.Compiled) policy.Resource {
	ro := b.Annotations.ReadOnlyHint
	d := b.Annotations.DestructiveHint
	return policy.Resource{Type: policy.TypeBuiltin, Name: b.Name, UpstreamName: b.Name, ReadOnly: ro,
		Destructive: !ro && (d == nil || *d)}
}

// Listable is st's request.State.Listable: nil when st's workspace has no policies, else
// whether the "list" decision shows st's caller tool t of connection c, or (t nil) the
// built-in named builtinName in builtins (an unknown built-in is not shown).
func Listable(builtins *builtin.Set, st *request.State) func(c *catalog.Connection, t *catalog.Tool, builtinName string) bool {
	p := Of(st.Snapshot)
	if p == nil {
		return nil
	}
	return func(c *catalog.Connection, t *catalog.Tool, builtinName string) bool {
		if t == nil {
			b := builtins.Lookup(builtinName)
			return b != nil && p.Decide(st, policy.ActionList, BuiltinResource(b), nil).Allowed
		}
		return p.Decide(st, policy.ActionList, p.ToolResource(c, t), nil).Allowed
	}
}
