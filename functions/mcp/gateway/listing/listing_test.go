package listing

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentpack/gateway/shared/catalog"
)

// entries are n tools named t0000… with the definition {"name":"t…"}, in reverse order.
func entries(n int) []Entry {
	out := make([]Entry, n)
	for i := range n {
		name := fmt.Sprintf("t%04d", n-1-i)
		out[i] = Entry{Name: name, Def: []byte(`{"name":"` + name + `"}`)}
	}
	return out
}

// page decodes a tools/list result.
type page struct {
	Tools      []struct{ Name string } `json:"tools"`
	NextCursor *string                 `json:"nextCursor"`
	TTLMs      *int                    `json:"ttlMs"`
	CacheScope string                  `json:"cacheScope"`
}

func decode(t *testing.T, b []byte) page {
	t.Helper()
	var p page
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("not a tools/list result: %v: %s", err, b)
	}
	if p.TTLMs == nil || *p.TTLMs != 0 || p.CacheScope != "private" {
		t.Errorf("ttlMs/cacheScope = %v/%q, want 0/private: %s", p.TTLMs, p.CacheScope, b)
	}
	return p
}

func TestSort(t *testing.T) {
	t.Parallel()
	all := []Entry{{Name: "mcp_b_x"}, {Name: "agentpack_z"}, {Name: "mcp_a_y"}, {Name: "agentpack_a"}}
	Sort(all)
	var got []string
	for _, e := range all {
		got = append(got, e.Name)
	}
	if diff := cmp.Diff([]string{"agentpack_a", "agentpack_z", "mcp_a_y", "mcp_b_x"}, got); diff != "" {
		t.Errorf("Sort (-want +got):\n%s", diff)
	}
}

func TestPageBytes(t *testing.T) {
	t.Parallel()
	if got, want := string(PageBytes(nil, 0, false)), `{"tools":[],"ttlMs":0,"cacheScope":"private"}`; got != want {
		t.Errorf("empty page = %s, want %s", got, want)
	}
	got := string(PageBytes([]Entry{{Def: []byte(`{"name":"a"}`)}, {Def: []byte(`{"name":"b"}`)}}, 2, true))
	want := `{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"page-3","ttlMs":0,"cacheScope":"private"}`
	if got != want {
		t.Errorf("page 2 with more = %s, want %s", got, want)
	}
}

// TestPage pages a sorted list of 2,500 tools: three pages chained by nextCursor, and every
// cursor the list never issued refused.
func TestPage(t *testing.T) {
	t.Parallel()
	all := entries(2*PageSize + 500)
	Sort(all)
	var names []string
	cursor, pages := "", 0
	for {
		b, ok := Page(all, cursor)
		if !ok {
			t.Fatalf("Page(%q) refused a cursor it issued", cursor)
		}
		p := decode(t, b)
		pages++
		for _, tl := range p.Tools {
			names = append(names, tl.Name)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if pages != 3 || len(names) != len(all) {
		t.Fatalf("%d pages holding %d tools, want 3 holding %d", pages, len(names), len(all))
	}
	for i, n := range names {
		if n != all[i].Name {
			t.Fatalf("tool %d is %s, want %s (sorted, no repeats)", i, n, all[i].Name)
		}
	}
	for _, bad := range []string{"page-0", "page-3", "page-99", "page--1", "page-", "page-x", "page-1.5", "1", "PAGE-1", " page-1", "page-99999999999999999999"} {
		if b, ok := Page(all, bad); ok || b != nil {
			t.Errorf("Page(%q) = %s, %v; want refused", bad, b, ok)
		}
	}
}

func TestPageEmptyAndExact(t *testing.T) {
	t.Parallel()
	b, ok := Page(nil, "")
	if !ok {
		t.Fatal(`Page(nil, "") refused`)
	}
	if p := decode(t, b); len(p.Tools) != 0 || p.NextCursor != nil {
		t.Errorf("empty list = %s, want no tools and no nextCursor", b)
	}
	if _, ok := Page(nil, "page-1"); ok {
		t.Error(`Page(nil, "page-1") accepted a cursor of an empty list`)
	}
	// Exactly one full page: no nextCursor, and no page 1.
	all := entries(PageSize)
	b, _ = Page(all, "")
	if p := decode(t, b); len(p.Tools) != PageSize || p.NextCursor != nil {
		t.Errorf("a list of exactly PageSize: %d tools, nextCursor %v; want %d and none", len(p.Tools), p.NextCursor, PageSize)
	}
	if _, ok := Page(all, Cursor(1)); ok {
		t.Error("a list of exactly PageSize accepted page-1")
	}
}

func TestPageIndex(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cursor string
		pages  int
		want   int
		ok     bool
	}{
		{"first page", "", 0, 0, true},
		{"first page of many", "", 3, 0, true},
		{"a later page", "page-2", 3, 2, true},
		{"Cursor round-trips", Cursor(1), 2, 1, true},
		{"page 0 spelled out", "page-0", 3, 0, false},
		{"past the end", "page-3", 3, 0, false},
		{"negative", "page--2", 3, 0, false},
		{"not a number", "page-two", 3, 0, false},
		{"no prefix", "2", 3, 0, false},
		{"another server's cursor", "eyJvZmZzZXQiOjF9", 3, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n, ok := PageIndex(tt.cursor, tt.pages)
			if n != tt.want || ok != tt.ok {
				t.Errorf("PageIndex(%q, %d) = %d, %v; want %d, %v", tt.cursor, tt.pages, n, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestDefinition(t *testing.T) {
	t.Parallel()
	stored := json.RawMessage(`{"name":"search","inputSchema":{"type":"object"},"x-vendor":{"k":1}}`)
	tests := []struct {
		name string
		tool catalog.Tool
		as   string
		want string
	}{
		{"upstream name: the stored bytes", catalog.Tool{UpstreamName: "search", Definition: stored}, "search",
			`{"name":"search","inputSchema":{"type":"object"},"x-vendor":{"k":1}}`},
		{"exposed name: only name changes", catalog.Tool{UpstreamName: "search", Definition: stored}, "mcp_gh_search",
			`{"name":"mcp_gh_search","inputSchema":{"type":"object"},"x-vendor":{"k":1}}`},
		{"renamed by an override: stored name replaced", catalog.Tool{UpstreamName: "find", Definition: stored}, "find",
			`{"name":"find","inputSchema":{"type":"object"},"x-vendor":{"k":1}}`},
		{"no stored definition: built from the members", catalog.Tool{UpstreamName: "old", Title: "Old", Description: "d",
			InputSchema: json.RawMessage(`{"type":"object"}`)}, "mcp_x_old",
			`{"name":"mcp_x_old","title":"Old","description":"d","inputSchema":{"type":"object"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Definition(&tt.tool, tt.as)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(tt.want), &w) != nil {
				t.Fatalf("Definition = %s, not JSON", got)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("Definition (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefinitionNotAnObject: a stored definition that is not a JSON object is an error,
// not a made-up definition.
func TestDefinitionNotAnObject(t *testing.T) {
	t.Parallel()
	for _, def := range []string{`[1,2]`, `"search"`, `{"name":`} {
		if got, err := Definition(&catalog.Tool{UpstreamName: "search", Definition: json.RawMessage(def)}, "mcp_x_search"); err == nil {
			t.Errorf("Definition of stored %s = %s, want an error", def, got)
		}
	}
}

func TestClosestName(t *testing.T) {
	t.Parallel()
	candidates := []string{"mcp_github_search_issues", "mcp_github_search_code", "agentpack_tools_search", "mcp_linear_create_issue", "mcp_a_ab", "mcp_a_ac"}
	tests := []struct {
		name, in, want string
	}{
		{"a prefix: the shortest completion", "mcp_github_search", "mcp_github_search_code"},
		{"one typo", "mcp_linear_creat_issue", "mcp_linear_create_issue"},
		{"a tie: the first in sorted order", "mcp_a_ax", "mcp_a_ab"},
		{"too far", "mcp_zzzz_nothing_alike", ""},
		{"more than 4 edits", "mcp_linear_crxxxxx_issue", ""},
		{"short name, one edit allowed", "mcp_a_a", "mcp_a_ab"},
		{"empty", "", ""},
		{"longer than 256 bytes", strings.Repeat("m", 257), ""},
		{"an exact name: itself (distance 0)", "agentpack_tools_search", "agentpack_tools_search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ClosestName(tt.in, append([]string(nil), candidates...)); got != tt.want {
				t.Errorf("ClosestName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestUnknownTool(t *testing.T) {
	t.Parallel()
	callable := []string{"mcp_gh_search", "agentpack_tools_search"}
	tests := []struct {
		name      string
		in        string
		aggregate bool
		want      string
	}{
		{"a suggestion", "mcp_gh_serch", true, `unknown tool "mcp_gh_serch"; did you mean "mcp_gh_search"?`},
		{"aggregate: the search tool", "weather", true, `unknown tool "weather"; call agentpack_tools_search to find the tool you need (tools/list names every tool)`},
		{"single server: tools/list", "weather", false, `unknown tool "weather"; tools/list names every tool of this server`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := UnknownTool(tt.in, append([]string(nil), callable...), tt.aggregate, "agentpack_tools_search"); got != tt.want {
				t.Errorf("UnknownTool = %q, want %q", got, tt.want)
			}
		})
	}
	long := UnknownTool(strings.Repeat("x", 300), nil, false, "")
	if !strings.HasPrefix(long, `unknown tool "`) || len(long) > 128+len(`unknown tool ""; tools/list names every tool of this server`)+8 {
		t.Errorf("a 300-byte name is not clipped: %d bytes", len(long))
	}
}
