package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
)

// BenchFiftyPolicies is a workspace document of 50 policies of the kinds docs/POLICIES.md
// shows (a base permit, role, group, argument, connection, time and chat conditions) over
// a workspace of 20 tools: what `make bench` decides with (BenchmarkPolicyDecide) and what
// cmd/bench's limit leg installs.
func BenchFiftyPolicies(handle string) string {
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

// benchDoc is a workspace of 20 tools taking a "project" argument.
func benchDoc(handle string) *catalog.Document {
	c := catalog.Connection{ID: "c", Handle: handle}
	for i := range 20 {
		c.Tools = append(c.Tools, catalog.Tool{ExposedName: fmt.Sprintf("mcp_%s_tool%d", handle, i), UpstreamName: fmt.Sprintf("tool%d", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"project":{"type":"string"},"title":{"type":"string"}}}`)})
	}
	return &catalog.Document{Connections: []catalog.Connection{c}}
}

// BenchmarkPolicyDecide is one "call" decision of a member with two arguments under
// BenchFiftyPolicies: what every proxied call costs on top of the gateway's own work when
// its workspace has 50 policies. Reports p50-ns and p99-ns of single decisions.
func BenchmarkPolicyDecide(b *testing.B) {
	set, err := Check(BenchFiftyPolicies("bench"), SchemaFor(benchDoc("bench")))
	if err != nil {
		b.Fatal(err)
	}
	e := &Engine{Workspace: set}
	req := &Request{Principal: Principal{Subject: "m", Role: "member", Workspace: "w", Groups: []string{"eng"}},
		Action: ActionCall, Resource: Resource{Type: TypeTool, Name: "mcp_bench_tool7", UpstreamName: "tool7", Connection: "bench", ReadOnly: true},
		Arguments: json.RawMessage(`{"project":"alpha","title":"a title"}`), Chat: "c", Protocol: "2025-11-25", Endpoint: "aggregate",
		Time: time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)}
	if d := e.Decide(req); !d.Allowed {
		b.Fatalf("decision: %+v", d)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		e.Decide(req)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}
