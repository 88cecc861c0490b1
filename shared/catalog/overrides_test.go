package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/db"
)

func sp(s string) *string { return &s }

// TestApplyOverrides: ApplyOverrides leaves tools without an override (and the input
// slice) untouched, keeps every byte of an overridden definition but the members it
// replaces, builds a definition for a tool listed before definitions were kept, drops a
// hidden tool, and ignores an override whose tool is not listed (dormant).
func TestApplyOverrides(t *testing.T) {
	t.Parallel()
	up := `{"name":"a", "description":"up",  "inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"x-v":[1.50]}`
	tools := []Tool{
		{ExposedName: "mcp_h_a", UpstreamName: "a", Description: "up", InputSchema: json.RawMessage(`{"type":"object"}`), Definition: json.RawMessage(up)},
		{ExposedName: "mcp_h_b", UpstreamName: "b", Title: "B", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{ExposedName: "mcp_h_c", UpstreamName: "c", InputSchema: json.RawMessage(`{"type":"object"}`), Definition: json.RawMessage(`{"name":"c","inputSchema":{"type":"object"}}`)},
		{ExposedName: "mcp_h_d", UpstreamName: "d", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	ovs := []db.ToolOverride{
		{UpstreamName: "a", Description: sp("ours"), Annotations: json.RawMessage(`{"readOnlyHint":null,"destructiveHint":true}`)},
		{UpstreamName: "b", ExposedName: sp("bee")},
		{UpstreamName: "c", Hidden: true},
		{UpstreamName: "gone", ExposedName: sp("ghost")},
	}
	got := ApplyOverrides(tools, ovs)
	if len(got) != 3 || got[0].UpstreamName != "a" || got[1].ExposedName != "bee" || got[2].ExposedName != "mcp_h_d" {
		t.Fatalf("got %+v", got)
	}
	if string(tools[0].Definition) != up || tools[1].ExposedName != "mcp_h_b" {
		t.Fatal("the input was modified")
	}
	a := string(got[0].Definition)
	want := `{"name":"a", "description":"ours",  "inputSchema":{"type":"object"},"annotations":{"destructiveHint":true},"x-v":[1.50],"_meta":{"io.agentpack/override":{"fields":["description","annotations"],"upstreamName":"a"}}}`
	if a != want {
		t.Fatalf("definition\n got %s\nwant %s", a, want)
	}
	var b map[string]any
	if err := json.Unmarshal(got[1].Definition, &b); err != nil || b["name"] != "b" || b["title"] != "B" ||
		!strings.Contains(string(got[1].Definition), `"fields":["name"]`) {
		t.Fatalf("built definition %s", got[1].Definition)
	}
	if got[2].Definition != nil {
		t.Fatalf("a tool without an override changed: %s", got[2].Definition)
	}
	if out := ApplyOverrides(tools, nil); len(out) != 4 {
		t.Fatal("no overrides must change nothing")
	}
}
