package policy

import (
	"fmt"
	"strings"
)

// SampleDocument is a workspace document of 50 policies of the kinds docs/POLICIES.md
// shows (a base permit, role, group, argument, connection, time and chat conditions) over
// a workspace of 20 tools: what `make bench` decides with (BenchmarkPolicyDecide) and what
// cmd/bench's limit leg installs. handle is the connection handle the tools are under
// (mcp_<handle>_tool0 … tool19).
func SampleDocument(handle string) string {
	var b strings.Builder
	b.WriteString(`@id("base") permit(principal, action, resource);` + "\n")
	for i := 1; i < 50; i++ {
		tool := fmt.Sprintf("mcp_%s_tool%d", handle, i%20)
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, `@id("p%d") forbid(principal in Role::"member", action == Action::"call", resource == Tool::"%s") unless { resource.readOnly };`+"\n", i, tool)
		case 1:
			fmt.Fprintf(&b, `@id("p%d") forbid(principal, action == Action::"call", resource == Tool::"%s") unless { context.arguments has project && ["alpha", "beta"].contains(context.arguments.project) };`+"\n", i, tool)
		case 2:
			fmt.Fprintf(&b, `@id("p%d") forbid(principal in Group::"contractors-%d", action, resource in Connection::"%s") when { context.time.hour < 8 };`+"\n", i, i, handle)
		case 3:
			fmt.Fprintf(&b, `@id("p%d") forbid(principal, action == Action::"call", resource) when { context.chat == "chat-%d" && !resource.readOnly };`+"\n", i, i)
		case 4:
			fmt.Fprintf(&b, `@id("p%d") forbid(principal, action == Action::"call", resource == Tool::"%s") when { resource.destructive && principal.role != "admin" };`+"\n", i, tool)
		}
	}
	return b.String()
}
