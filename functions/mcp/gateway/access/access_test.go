package access

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/policy"
)

func snapshot(p *catalog.Policies) *catalog.Snapshot {
	return catalog.NewSnapshot(&catalog.Document{Policies: p}, "e1")
}

func state(snap *catalog.Snapshot) *request.State {
	return &request.State{Principal: &auth.Principal{Subject: "u1", Role: "member"}, Workspace: "w1", Snapshot: snap}
}

// TestOfWithoutPolicies: a workspace without policies evaluates nothing.
func TestOfWithoutPolicies(t *testing.T) {
	t.Parallel()
	for name, snap := range map[string]*catalog.Snapshot{
		"no snapshot":    nil,
		"no policies":    snapshot(nil),
		"empty policies": snapshot(&catalog.Policies{}),
	} {
		if p := Of(snap); p != nil {
			t.Errorf("%s: Of = %+v, want nil", name, p)
		}
		if Listable(nil, state(snap)) != nil {
			t.Errorf("%s: Listable is set", name)
		}
	}
}

// TestOfUnreadable: a stored document that does not parse denies everything rather than
// letting calls run unchecked.
func TestOfUnreadable(t *testing.T) {
	t.Parallel()
	snap := snapshot(&catalog.Policies{Workspace: "permit(principal, action, resource"})
	p := Of(snap)
	if p == nil {
		t.Fatal("Of = nil for an unreadable document")
	}
	if Of(snap) != p {
		t.Error("Of is not memoised on the snapshot")
	}
	d := p.Decide(state(snap), policy.ActionCall, policy.Resource{Name: "mcp_a_b"}, nil)
	if d.Allowed || d.Reason != "policy_unreadable" {
		t.Errorf("Decide = %+v, want a denial for policy_unreadable", d)
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	snap := snapshot(&catalog.Policies{Workspace: `@id("p1") permit(principal, action, resource);`})
	p := Of(snap)
	if p == nil {
		t.Fatal("Of = nil")
	}
	if d := p.Decide(state(snap), policy.ActionList, policy.Resource{Type: policy.TypeBuiltin, Name: "agentpack_x"}, nil); !d.Allowed {
		t.Errorf("permit-all denied: %+v", d)
	}
	forbid := snapshot(&catalog.Policies{Workspace: `@id("no") forbid(principal, action, resource);`})
	d := Of(forbid).Decide(state(forbid), policy.ActionCall, policy.Resource{Type: policy.TypeBuiltin, Name: "agentpack_x"}, nil)
	if d.Allowed || len(d.PolicyIDs) != 1 || d.PolicyIDs[0] != "no" {
		t.Errorf("forbid-all: %+v, want denied by policy no", d)
	}
}

func TestBuiltinResource(t *testing.T) {
	t.Parallel()
	no, yes := false, true
	tests := []struct {
		name            string
		ann             mcp.ToolAnnotations
		ro, destructive bool
	}{
		{"no hints: destructive", mcp.ToolAnnotations{}, false, true},
		{"read-only", mcp.ToolAnnotations{ReadOnlyHint: true}, true, false},
		{"not destructive", mcp.ToolAnnotations{DestructiveHint: &no}, false, false},
		{"destructive", mcp.ToolAnnotations{DestructiveHint: &yes}, false, true},
	}
	for _, tt := range tests {
		b := &builtin.Compiled{Builtin: &builtin.Builtin{Name: "agentpack_x", Annotations: tt.ann}}
		r := BuiltinResource(b)
		if r.Type != policy.TypeBuiltin || r.Name != "agentpack_x" || r.ReadOnly != tt.ro || r.Destructive != tt.destructive {
			t.Errorf("%s: %+v", tt.name, r)
		}
	}
}
