package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
)

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
// SampleDocument: what every proxied call costs on top of the gateway's own work when
// its workspace has 50 policies. Reports p50-ns and p99-ns of single decisions.
func BenchmarkPolicyDecide(b *testing.B) {
	set, err := Check(SampleDocument("bench"), SchemaFor(benchDoc("bench")))
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
