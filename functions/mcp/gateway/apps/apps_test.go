package apps

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestURIRoundTrip: every ui:// URI maps to ui://<handle>/… and back to itself (query,
// fragment, a "+" or an empty authority included; the scheme matched without regard to
// case); other schemes are not mapped; a URI without a handle does not decode.
func TestURIRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, uri, want string }{
		{"plain", "ui://dashboard/app.html", "ui://gh/dashboard/app.html"},
		{"query and fragment", "ui://weather+x/v?q=1#f", "ui://gh/weather+x/v?q=1#f"},
		{"host only", "ui://dashboard", "ui://gh/dashboard"},
		{"empty authority", "ui:///x", "ui://gh//x"},
		{"upper-case scheme", "UI://Dash/A.html", "ui://gh/Dash/A.html"},
		{"opaque memo", "memo:board-1", "ui://gh/:memo:board-1"},
		{"opaque urn", "urn:x:view:1?q#f", "ui://gh/:urn:x:view:1?q#f"},
		{"port-looking authority", "ui://:8080/x", "ui://gh/:8080/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := URI("gh", tc.uri)
			if !ok || got != tc.want {
				t.Fatalf("appURI = %q, %v; want %q", got, ok, tc.want)
			}
			h, up, ok := Target(got)
			want := tc.uri
			if tc.name == "upper-case scheme" {
				want = "ui://Dash/A.html"
			}
			if !ok || h != "gh" || up != want {
				t.Fatalf("Target(%q) = %q, %q, %v", got, h, up, ok)
			}
		})
	}
	for _, uri := range []string{"https://x/ui", "agentpack://catalog", "ui:", ""} {
		if _, ok := URI("gh", uri); ok {
			t.Errorf("appURI mapped %q", uri)
		}
	}
	for _, uri := range []string{"ui://nohandle", "ui:///x", "file:///a", "ui:", "ui://gh/:a b:%zz"} {
		if h, up, ok := Target(uri); ok {
			t.Errorf("Target(%q) = %q, %q", uri, h, up)
		}
	}
}

// TestWithURIs: the tool definition's _meta.ui.resourceUri and _meta["ui/resourceUri"]
// are mapped in place, every other byte kept; definitions without a ui:// URI (none, a
// non-string, another scheme, malformed _meta) come back unchanged.
func TestWithURIs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, def, want string }{
		{"both keys",
			`{"name":"x", "_meta": {"ui": {"visibility": ["app"], "resourceUri": "ui://d/a.html"}, "ui/resourceUri":"ui://d/a.html", "k": 1.50}}`,
			`{"name":"x", "_meta": {"ui": {"visibility": ["app"], "resourceUri": "ui://gh/d/a.html"}, "ui/resourceUri":"ui://gh/d/a.html", "k": 1.50}}`},
		{"flat only", `{"_meta":{"ui/resourceUri":"ui://d/a.html"}}`, `{"_meta":{"ui/resourceUri":"ui://gh/d/a.html"}}`},
		{"nested only", `{"_meta":{"ui":{"resourceUri":"ui://d/a.html"}}}`, `{"_meta":{"ui":{"resourceUri":"ui://gh/d/a.html"}}}`},
		{"HTML characters kept", `{"_meta":{"ui":{"resourceUri":"ui://d/a?x=<1>&y"}}}`, `{"_meta":{"ui":{"resourceUri":"ui://gh/d/a?x=<1>&y"}}}`},
		{"no meta", `{"name":"x"}`, `{"name":"x"}`},
		{"other scheme", `{"_meta":{"ui":{"resourceUri":"https://x/a.html"}}}`, `{"_meta":{"ui":{"resourceUri":"https://x/a.html"}}}`},
		{"not a string", `{"_meta":{"ui":{"resourceUri":7}}}`, `{"_meta":{"ui":{"resourceUri":7}}}`},
		{"meta not an object", `{"_meta":"resourceUri"}`, `{"_meta":"resourceUri"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(WithURIs(json.RawMessage(tc.def), "gh")); got != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestReadResult: a read result's ui:// content uris are mapped back in place (spacing,
// member order and other items kept); results of other shapes come back unchanged.
func TestReadResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, res, want string }{
		{"two items",
			`{"contents": [ {"uri": "ui://d/a.html", "text": "<p>1<2</p>"} ,{"uri":"file:///b","blob":"AA=="}, {"uri":"ui://d/c"}], "_meta": {"x": 1.0}}`,
			`{"contents": [ {"uri": "ui://gh/d/a.html", "text": "<p>1<2</p>"} ,{"uri":"file:///b","blob":"AA=="}, {"uri":"ui://gh/d/c"}], "_meta": {"x": 1.0}}`},
		{"no ui uri", `{"contents":[{"uri":"file:///b"}]}`, `{"contents":[{"uri":"file:///b"}]}`},
		{"contents not an array", `{"contents":{"uri":"ui://d"}}`, `{"contents":{"uri":"ui://d"}}`},
		{"not an object", `[1]`, `[1]`},
		{"item not an object", `{"contents":[1,{"uri":"ui://d/a"}]}`, `{"contents":[1,{"uri":"ui://gh/d/a"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(readResult(json.RawMessage(tc.res), "gh")); got != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestAppsCapability: the extension is advertised only when views exist, with the
// upstreams' settings when they agree and {} when they differ or one declared none.
func TestAppsCapability(t *testing.T) {
	t.Parallel()
	conn := func(id, handle, caps string) catalog.Connection {
		return catalog.Connection{ID: id, Handle: handle, Name: handle, Capabilities: json.RawMessage(caps), Tools: []catalog.Tool{{
			ExposedName: "mcp_" + handle + "_show", UpstreamName: "show", InputSchema: json.RawMessage(`{"type":"object"}`),
			Definition: json.RawMessage(`{"name":"show","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://dashboard/app.html"}}}`),
		}}}
	}
	withUI := func(s string) string { return `{"tools":{},"extensions":{"io.modelcontextprotocol/ui":` + s + `}}` }
	for _, tc := range []struct {
		name  string
		conns []catalog.Connection
		want  string // "" = not advertised
	}{
		{"agree", []catalog.Connection{conn("1", "a", withUI(`{"x":1}`)), conn("2", "b", withUI(`{ "x": 1 }`))}, `{"x":1}`},
		{"differ", []catalog.Connection{conn("1", "a", withUI(`{"x":1}`)), conn("2", "b", withUI(`{"x":2}`))}, `{}`},
		{"one without", []catalog.Connection{conn("1", "a", withUI(`{"x":1}`)), conn("2", "b", `{"tools":{}}`)}, `{}`},
		{"none declared", []catalog.Connection{conn("1", "a", "")}, `{}`},
		{"no views", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Build(&request.State{Snapshot: &catalog.Snapshot{Doc: &catalog.Document{Connections: tc.conns}}})
			got, ok := a.Capability()
			if tc.want == "" {
				if ok {
					t.Fatalf("advertised %s without views", got)
				}
				return
			}
			if !ok || !jsonSame(got, json.RawMessage(tc.want)) {
				t.Fatalf("settings %s, want %s", got, tc.want)
			}
			if len(a.views) != len(tc.conns) {
				t.Fatalf("views %+v", a.views)
			}
		})
	}
}

// appsSnapshot is a workspace of n connections, each with one tool naming a view.
func appsSnapshot(n int) *request.State {
	conns := make([]catalog.Connection, n)
	for i := range conns {
		h := "c" + strconv.Itoa(i)
		conns[i] = catalog.Connection{ID: h, Handle: h, Name: h, Tools: []catalog.Tool{{
			ExposedName: "mcp_" + h + "_show", UpstreamName: "show", InputSchema: json.RawMessage(`{"type":"object"}`),
			Definition: json.RawMessage(`{"name":"show","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://dashboard/app.html"}}}`),
		}}}
	}
	return &request.State{Snapshot: &catalog.Snapshot{Doc: &catalog.Document{Connections: conns}}}
}

// BenchmarkAppsTables: building a server key's MCP Apps tables (once per key, like
// tools/list) grows with the workspace; routing a resources/read once they exist does not.
//
//	go test -run '^$' -bench BenchmarkApps -benchmem ./functions/mcp/gateway/apps/
func BenchmarkAppsTables(b *testing.B) {
	for _, n := range []int{10, 1000} {
		st := appsSnapshot(n)
		b.Run("build/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				Build(st)
			}
		})
		a := Build(st)
		params := json.RawMessage(`{"uri":"ui://c` + strconv.Itoa(n-1) + `/dashboard/app.html"}`)
		b.Run("route/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if _, ok := a.Reads(params); !ok {
					b.Fatal("not routed")
				}
			}
		})
	}
}

// TestAppCallResult (issue 34): a tools/call result's _meta view URIs, a resource_link to a
// ui:// view and an embedded view (ui://, or opaque with the MCP App type) are mapped in
// place; a link to another resource (an opaque URI of another type, https) is not; a
// result without views comes back byte for byte.
func TestAppCallResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, res, want string }{
		{"meta and content",
			`{"_meta":{"ui":{"resourceUri":"ui://d/a"}}, "content":[{"type":"text","text":"ui://d/a"},{"type":"resource_link","uri":"ui://d/a","name":"v"},{"type":"resource","resource":{"uri":"memo:1","mimeType":"text/html;profile=mcp-app","text":"<p>"}}]}`,
			`{"_meta":{"ui":{"resourceUri":"ui://gh/d/a"}}, "content":[{"type":"text","text":"ui://d/a"},{"type":"resource_link","uri":"ui://gh/d/a","name":"v"},{"type":"resource","resource":{"uri":"ui://gh/:memo:1","mimeType":"text/html;profile=mcp-app","text":"<p>"}}]}`},
		{"other links kept",
			`{"content":[{"type":"resource_link","uri":"memo:notes","mimeType":"text/plain"},{"type":"resource_link","uri":"https://x/ui://"}]}`,
			`{"content":[{"type":"resource_link","uri":"memo:notes","mimeType":"text/plain"},{"type":"resource_link","uri":"https://x/ui://"}]}`},
		{"no view", `{"content":[{"type":"text","text":"hi"}],"isError":false}`, `{"content":[{"type":"text","text":"hi"}],"isError":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(CallResult(json.RawMessage(tc.res), "gh")); got != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestReadRefusals: a read of no visible connection's view, and params that are no object,
// are -32602 before anything is forwarded.
func TestReadRefusals(t *testing.T) {
	t.Parallel()
	st := appsSnapshot(1)
	a := Build(st)
	for _, tc := range []struct{ uri, params, want string }{
		{"ui://zz/dashboard/app.html", `{"uri":"ui://zz/dashboard/app.html"}`, "resource not found: ui://zz/dashboard/app.html"},
		{"https://x/a", `{"uri":"https://x/a"}`, "resource not found: https://x/a"},
		{"ui://c0/dashboard/app.html", `[1]`, "params must be an object"},
	} {
		_, err := a.Read(t.Context(), nil, st, tc.uri, json.RawMessage(tc.params))
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, tc.want) {
			t.Errorf("Read(%s) = %v; want -32602 %q", tc.uri, err, tc.want)
		}
	}
	if _, ok := a.Reads(json.RawMessage(`{"uri":"ui://zz/x"}`)); ok {
		t.Error("a read of an invisible handle was routed")
	}
	if _, ok := a.Reads(json.RawMessage(`"x"`)); ok {
		t.Error("params that are no object were routed")
	}
}

// TestSingleEndpointHasNoViews: the single-server endpoint passes views through, so its
// tables are empty.
func TestSingleEndpointHasNoViews(t *testing.T) {
	t.Parallel()
	st := appsSnapshot(2)
	st.Single = &st.Snapshot.Doc.Connections[0]
	if _, ok := Build(st).Capability(); ok {
		t.Error("views on the single-server endpoint")
	}
}
