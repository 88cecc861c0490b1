package tooldrift

import (
	"encoding/json"
	"testing"

	"github.com/agentpack/gateway/shared/names"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDigest(t *testing.T) {
	base := Definition{Name: "echo", Description: "echoes", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)}
	with := func(f func(*Definition)) Definition { d := base; f(&d); return d }
	whole := json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"},"icons":[{"src":"a.png"}]}`)
	tests := []struct {
		name string
		a, b Definition
		same bool
	}{
		{"identical", base, base, true},
		{"key order and whitespace of a schema", base,
			with(func(d *Definition) {
				d.InputSchema = json.RawMessage(`{ "properties": {"a": {"type": "string"}}, "type": "object" }`)
			}), true},
		{"description changed", base, with(func(d *Definition) { d.Description = "echoes loudly" }), false},
		{"title changed", base, with(func(d *Definition) { d.Title = "Echo" }), false},
		{"input schema changed", base, with(func(d *Definition) { d.InputSchema = json.RawMessage(`{"type":"object"}`) }), false},
		{"output schema added", base, with(func(d *Definition) { d.OutputSchema = json.RawMessage(`{"type":"object"}`) }), false},
		{"annotations added", base, with(func(d *Definition) { d.Annotations = json.RawMessage(`{"readOnlyHint":true}`) }), false},
		{"whole object known: it alone counts", with(func(d *Definition) { d.Whole = whole }),
			with(func(d *Definition) { d.Whole = whole; d.Description = "other" }), true},
		{"whole object: a member outside the typed fields counts",
			with(func(d *Definition) { d.Whole = whole }),
			with(func(d *Definition) {
				d.Whole = json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"},"icons":[{"src":"b.png"}]}`)
			}), false},
		{"whole object: key order does not count",
			with(func(d *Definition) { d.Whole = whole }),
			with(func(d *Definition) {
				d.Whole = json.RawMessage(`{"icons":[{"src":"a.png"}],"inputSchema":{"type":"object"},"name":"echo"}`)
			}), true},
		{"invalid JSON counts as its bytes", with(func(d *Definition) { d.InputSchema = json.RawMessage(`{bad`) }),
			with(func(d *Definition) { d.InputSchema = json.RawMessage(`{bad }`) }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			da, db := Digest(tt.a), Digest(tt.b)
			if len(da) != 64 {
				t.Fatalf("digest %q is not 64 hex digits", da)
			}
			if (da == db) != tt.same {
				t.Errorf("digests equal = %v, want %v", da == db, tt.same)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	stored := func(name, exposed, status, def, approved string) Stored {
		return Stored{UpstreamName: name, ExposedName: exposed, Status: status, DefinitionDigest: def, ApprovedDigest: approved}
	}
	tests := []struct {
		name     string
		stored   []Stored
		listed   []Listed
		handle   string
		approval bool
		want     Sync
	}{
		{name: "new tool starts active with its digest approved", handle: "gh",
			listed: []Listed{{"echo", "d1"}},
			want: Sync{Writes: []Write{{Index: 0, New: true, ExposedName: "mcp_gh_echo", Status: Active, ApprovedDigest: "d1"}},
				Added: []string{"echo"}}},
		{name: "new tool pending when new tools need approval", handle: "gh", approval: true,
			listed: []Listed{{"echo", "d1"}},
			want: Sync{Writes: []Write{{Index: 0, New: true, ExposedName: "mcp_gh_echo", Status: Pending}},
				Added: []string{"echo"}}},
		{name: "a name listed twice counts once", handle: "gh",
			listed: []Listed{{"echo", "d1"}, {"echo", "d2"}},
			want: Sync{Writes: []Write{{Index: 0, New: true, ExposedName: "mcp_gh_echo", Status: Active, ApprovedDigest: "d1"}},
				Added: []string{"echo"}}},
		{name: "unchanged active tool: nothing reported, name frozen across a handle change", handle: "renamed",
			stored: []Stored{stored("echo", "mcp_gh_echo", Active, "d1", "d1")},
			listed: []Listed{{"echo", "d1"}},
			want:   Sync{Writes: []Write{{Index: 0, Status: Active}}}},
		{name: "changed definition drifts", handle: "gh",
			stored: []Stored{stored("echo", "mcp_gh_echo", Active, "d1", "d1")},
			listed: []Listed{{"echo", "d2"}},
			want:   Sync{Writes: []Write{{Index: 0, Status: Drifted}}, Drifted: []string{"echo"}}},
		{name: "still drifted with the same definition: not reported again", handle: "gh",
			stored: []Stored{stored("echo", "mcp_gh_echo", Drifted, "d2", "d1")},
			listed: []Listed{{"echo", "d2"}},
			want:   Sync{Writes: []Write{{Index: 0, Status: Drifted}}}},
		{name: "drifted to yet another definition: reported", handle: "gh",
			stored: []Stored{stored("echo", "mcp_gh_echo", Drifted, "d2", "d1")},
			listed: []Listed{{"echo", "d3"}},
			want:   Sync{Writes: []Write{{Index: 0, Status: Drifted}}, Drifted: []string{"echo"}}},
		{name: "drifted back to the approved definition: restored", handle: "gh",
			stored: []Stored{stored("echo", "mcp_gh_echo", Drifted, "d2", "d1")},
			listed: []Listed{{"echo", "d1"}},
			want:   Sync{Writes: []Write{{Index: 0, Status: Active}}, Restored: []string{"echo"}}},
		{name: "pending stays pending whatever its definition", handle: "gh",
			stored: []Stored{stored("echo", "mcp_gh_echo", Pending, "d1", "")},
			listed: []Listed{{"echo", "d2"}},
			want:   Sync{Writes: []Write{{Index: 0, Status: Pending}}}},
		{name: "tool no longer listed is removed", handle: "gh",
			stored: []Stored{stored("echo", "mcp_gh_echo", Active, "d1", "d1"), stored("gone", "mcp_gh_gone", Active, "d1", "d1")},
			listed: []Listed{{"echo", "d1"}},
			want:   Sync{Writes: []Write{{Index: 0, Status: Active}}, Deletes: []string{"gone"}, Removed: []string{"gone"}}},
		{name: "a new tool does not take the name of a tool being removed", handle: "gh",
			stored: []Stored{stored("old", "mcp_gh_echo", Active, "d1", "d1")},
			listed: []Listed{{"echo", "d1"}},
			want: Sync{Writes: []Write{{Index: 0, New: true, ExposedName: names.Unique("gh", "echo", func(n string) bool { return n == "mcp_gh_echo" }),
				Status: Active, ApprovedDigest: "d1"}},
				Added: []string{"echo"}, Deletes: []string{"old"}, Removed: []string{"old"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Plan(tt.stored, tt.listed, tt.handle, tt.approval)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Plan (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanCollidingNewTools: two new tools whose exposed names would clash get distinct
// names (an upstream can list a clean name equal to another's hashed name).
func TestPlanCollidingNewTools(t *testing.T) {
	hashed := names.Exposed("h", "a.b") // mcp_h_a_b_<8 hex>
	clean := hashed[len("mcp_h_"):]
	got := Plan(nil, []Listed{{"a.b", "d"}, {clean, "d"}}, "h", false)
	if len(got.Writes) != 2 || got.Writes[0].ExposedName == got.Writes[1].ExposedName {
		t.Fatalf("colliding names not separated: %+v", got.Writes)
	}
	if got.Writes[0].ExposedName != hashed {
		t.Errorf("first tool exposed as %q, want %q", got.Writes[0].ExposedName, hashed)
	}
}
