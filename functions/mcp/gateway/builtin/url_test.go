package builtin

import (
	"testing"

	"github.com/agentpack/gateway/shared/auth"
)

func TestVisibleURL(t *testing.T) {
	t.Parallel()
	member := &auth.Principal{Role: auth.RoleMember}
	admin := &auth.Principal{Role: auth.RoleAdmin}
	raw := "https://mcp.example.com/v1/mcp?api_key=sk-live-123#frag"
	if got := visibleURL(member, raw); got != "https://mcp.example.com/v1/mcp" {
		t.Errorf("member sees %q", got)
	}
	if got := visibleURL(admin, raw); got != "https://mcp.example.com/v1/mcp?api_key=[REDACTED]#[REDACTED]" {
		t.Errorf("admin sees %q", got)
	}
	if got := visibleURL(member, "%zz"); got != "" {
		t.Errorf("unparsable URL shown to a member: %q", got)
	}
}
