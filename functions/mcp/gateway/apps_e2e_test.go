package gateway_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/testpeer"
)

// appsRPC sends one request at version to path and returns the answer's body; at
// 2026-07-28 it adds the headers and _meta that revision requires (name is Mcp-Name).
func appsRPC(t *testing.T, env *stacktest.Env, path, token, version, method, name, params string) (*http.Response, []byte) {
	t.Helper()
	hdr := map[string]string{"Mcp-Protocol-Version": version}
	if version >= "2026-07-28" {
		hdr["Mcp-Method"] = method
		if name != "" {
			hdr["Mcp-Name"] = name
		}
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}}`
		if params == "{}" {
			params = "{" + meta + "}"
		} else {
			params = strings.Replace(params, "{", "{"+meta+",", 1)
		}
	}
	return env.RPC(t, path, token, `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":`+params+`}`, hdr)
}

// TestMCPAppsAggregate (issue 22, MCP Apps): two upstreams whose tools both name
// ui://dashboard/app.html. On the aggregate endpoint, at 2025-06-18, 2025-11-25 and
// 2026-07-28:
//   - each tool's _meta.ui.resourceUri and deprecated _meta["ui/resourceUri"] name
//     ui://<handle>/dashboard/app.html (distinct per connection), the rest of _meta kept;
//   - resources/list lists both views (text/html;profile=mcp-app) next to the gateway's own;
//   - resources/read of each reaches its own upstream, which receives its own URI
//     ui://dashboard/app.html, and answers that upstream's view with the uri mapped back
//     and every other member as the single-server endpoint passes it through;
//   - a ui:// URI of no connection, or without a handle, reaches no upstream and is an error;
//   - initialize advertises the io.modelcontextprotocol/ui extension (settings {}: the two
//     upstreams declared different ones).
//
// The single-server endpoint advertises the upstream's own extensions with their settings.
func TestMCPAppsAggregate(t *testing.T) {
	t.Parallel()
	bundle := setupWorkspace(t, "Apps two")
	env, ws, admin := bundle.env, bundle.ws, bundle.admin
	type conn struct {
		up         *testpeer.AppsUpstream
		ID, Handle string
	}
	var conns []*conn
	for _, label := range []string{"alpha", "beta"} {
		up := testpeer.NewAppsUpstream(t, label)
		dc := bundle.install(t, "Dash "+label, up.URL)
		conns = append(conns, &conn{up: up, ID: dc.ID, Handle: dc.Handle})
	}
	if conns[0].Handle == conns[1].Handle {
		t.Fatalf("both connections have handle %q", conns[0].Handle)
	}
	agg := "/mcp/" + ws
	view := func(c *conn) string { return "ui://" + c.Handle + "/dashboard/app.html" }

	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			rpc := func(t *testing.T, path, method, name, params string) json.RawMessage {
				t.Helper()
				resp, body := appsRPC(t, env, path, admin, version, method, name, params)
				return resultOf(t, resp, body)
			}
			var listed struct {
				Tools []struct {
					Name string
					Meta map[string]json.RawMessage `json:"_meta"`
				}
			}
			if err := json.Unmarshal(rpc(t, agg, "tools/list", "", "{}"), &listed); err != nil {
				t.Fatal(err)
			}
			for _, c := range conns {
				i := slices.IndexFunc(listed.Tools, func(x struct {
					Name string
					Meta map[string]json.RawMessage `json:"_meta"`
				}) bool {
					return x.Name == "mcp_"+c.Handle+"_show"
				})
				if i < 0 {
					t.Fatalf("mcp_%s_show not listed: %+v", c.Handle, listed.Tools)
				}
				meta := listed.Tools[i].Meta
				var ui struct {
					ResourceURI string   `json:"resourceUri"`
					Visibility  []string `json:"visibility"`
				}
				var flat string
				_ = json.Unmarshal(meta["ui"], &ui)
				_ = json.Unmarshal(meta["ui/resourceUri"], &flat)
				if ui.ResourceURI != view(c) || flat != view(c) || !slices.Equal(ui.Visibility, []string{"model", "app"}) {
					t.Errorf("mcp_%s_show _meta: %s / %s, want resourceUri %s with visibility kept", c.Handle, meta["ui"], meta["ui/resourceUri"], view(c))
				}
			}

			var resources struct {
				Resources []struct {
					URI, Name, MimeType, Description string
					Meta                             map[string]any `json:"_meta"`
				}
			}
			if err := json.Unmarshal(rpc(t, agg, "resources/list", "", "{}"), &resources); err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range resources.Resources {
				uris = append(uris, r.URI)
				if strings.HasPrefix(r.URI, "ui://") && (r.MimeType != "text/html;profile=mcp-app" || r.Name == "") {
					t.Errorf("view %s listed as %+v", r.URI, r)
				}
			}
			for _, want := range []string{"agentpack://catalog", view(conns[0]), view(conns[1]),
				"ui://" + conns[0].Handle + "/dashboard/extra.html", "ui://" + conns[1].Handle + "/dashboard/extra.html"} {
				if !slices.Contains(uris, want) {
					t.Errorf("resources/list lacks %s: %v", want, uris)
				}
			}
			if slices.Contains(uris, testpeer.AppsViewURI) || slices.Contains(uris, "file:///notes.txt") {
				t.Errorf("resources/list shows an upstream's own URI or a resource that is no view: %v", uris)
			}
			for _, c := range conns {
				// As the upstream listed it (refresh-time resources/list), under the new URI.
				i := slices.IndexFunc(resources.Resources, func(r struct {
					URI, Name, MimeType, Description string
					Meta                             map[string]any `json:"_meta"`
				}) bool {
					return r.URI == view(c)
				})
				if i < 0 {
					continue
				}
				r := resources.Resources[i]
				csp, _ := json.Marshal(r.Meta["ui"])
				if r.Name != "dashboard" || r.Description != "Dashboard of "+c.up.Label ||
					string(csp) != `{"csp":{"connectDomains":["https://`+c.up.Label+`.example"]}}` {
					t.Errorf("%s listed as %+v (ui meta %s), want the upstream's listing", view(c), r, csp)
				}
			}

			for _, c := range conns {
				before := len(c.up.Reads())
				got := rpc(t, agg, "resources/read", view(c), `{"uri":"`+view(c)+`"}`)
				reads := c.up.Reads()
				if len(reads) != before+1 || reads[len(reads)-1] != testpeer.AppsViewURI {
					t.Fatalf("%s: upstream reads %v, want one more of %s", c.Handle, reads, testpeer.AppsViewURI)
				}
				// What the single-server endpoint passes through untouched, with the uri
				// mapped back, is what the aggregate endpoint answers.
				single := rpc(t, agg+"/servers/"+c.ID, "resources/read", testpeer.AppsViewURI, `{"uri":"`+testpeer.AppsViewURI+`"}`)
				var sm struct{ Contents []json.RawMessage }
				if err := json.Unmarshal(single, &sm); err != nil || len(sm.Contents) != 1 {
					t.Fatalf("single-server read: %s", single)
				}
				ub, _ := json.Marshal(view(c))
				item, _ := jsonobj.SetMember(sm.Contents[0], "uri", ub)
				want, _ := jsonobj.SetMember(single, "contents", json.RawMessage("["+string(item)+"]"))
				if !jsonEqual(t, got, want) {
					t.Errorf("%s: aggregate read\n got %s\nwant %s", c.Handle, got, want)
				}
				if !strings.Contains(string(got), `dashboard of `+c.up.Label) {
					t.Errorf("%s: read reached the wrong upstream: %s", c.Handle, got)
				}
			}

			for _, uri := range []string{"ui://nosuch/dashboard/app.html", testpeer.AppsViewURI, "ui://" + conns[0].Handle} {
				before := len(conns[0].up.Reads()) + len(conns[1].up.Reads())
				resp, body := appsRPC(t, env, agg, admin, version, "resources/read", uri, `{"uri":"`+uri+`"}`)
				if resp.StatusCode == http.StatusOK {
					if _, code := rpcError(t, body); code == 0 {
						t.Errorf("read %s: %s", uri, body)
					}
				}
				if n := len(conns[0].up.Reads()) + len(conns[1].up.Reads()); n != before {
					t.Errorf("read %s reached an upstream", uri)
				}
			}
		})
	}

	initialize := `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`
	var init struct {
		Capabilities struct {
			Extensions map[string]json.RawMessage
		}
	}
	resp, body := appsRPC(t, env, agg, admin, "2025-11-25", "initialize", "", initialize)
	if err := json.Unmarshal(resultOf(t, resp, body), &init); err != nil {
		t.Fatal(err)
	}
	if s, ok := init.Capabilities.Extensions["io.modelcontextprotocol/ui"]; !ok || string(s) != `{}` {
		t.Errorf("aggregate extensions %v, want io.modelcontextprotocol/ui with {} (the upstreams disagree)", init.Capabilities.Extensions)
	}
	init.Capabilities.Extensions = nil
	resp, body = appsRPC(t, env, agg+"/servers/"+conns[0].ID, admin, "2025-11-25", "initialize", "", initialize)
	if err := json.Unmarshal(resultOf(t, resp, body), &init); err != nil {
		t.Fatal(err)
	}
	if s := init.Capabilities.Extensions["io.modelcontextprotocol/ui"]; !jsonEqual(t, s, []byte(`{"label":"alpha"}`)) {
		t.Errorf("single-server extensions %v, want the upstream's io.modelcontextprotocol/ui {\"label\":\"alpha\"}", init.Capabilities.Extensions)
	}
}

// TestMCPAppsNotAdvertisedWithoutViews: a workspace whose tools name no ui:// view lists
// no view and does not advertise the io.modelcontextprotocol/ui extension.
func TestMCPAppsNotAdvertisedWithoutViews(t *testing.T) {
	t.Parallel()
	bundle := setupWorkspace(t, "No apps")
	env, ws, admin := bundle.env, bundle.ws, bundle.admin
	f := testpeer.NewFixture(t, nil)
	bundle.install(t, "Plain", f.URL)
	resp, body := appsRPC(t, env, "/mcp/"+ws, admin, "2025-11-25", "initialize", "",
		`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	if res := resultOf(t, resp, body); strings.Contains(string(res), "io.modelcontextprotocol/ui") {
		t.Errorf("extension advertised without views: %s", res)
	}
	resp, body = appsRPC(t, env, "/mcp/"+ws, admin, "2025-11-25", "resources/list", "", "{}")
	if res := resultOf(t, resp, body); strings.Contains(string(res), "ui://") {
		t.Errorf("views listed: %s", res)
	}
}

// TestMCPAppsFollowVisibility: a project-scoped connection's view is listed, advertised and
// readable only for a caller in that project (docs/DESIGN.md §7, request.State.Visible);
// for any other caller its ui://<handle>/… reaches no upstream.
func TestMCPAppsFollowVisibility(t *testing.T) {
	t.Parallel()
	env := stacktest.New(t, nil)
	ws, proj, _ := env.Workspace(t, "Apps scoped")
	admin := stacktest.Token(t, "alice", auth.RoleAdmin, ws)
	up := testpeer.NewAppsUpstream(t, "gamma")
	c := env.Connection(t, stacktest.Admin("alice", ws), connections.CreateInput{Name: "Scoped", URL: up.URL, WorkspaceID: &ws, ProjectID: &proj}).Connection
	view := "ui://" + c.Handle + "/dashboard/app.html"
	read := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + view + `"}}`
	list := `{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{}}`
	initialize := `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name    string
		hdr     map[string]string
		visible bool
	}{
		{"other project", map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, false},
		{"its project", map[string]string{"Mcp-Protocol-Version": "2025-11-25", "X-Project-Id": proj}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := env.RPC(t, "/mcp/"+ws, admin, list, tc.hdr)
			if got := strings.Contains(string(resultOf(t, resp, body)), view); got != tc.visible {
				t.Errorf("view listed: %v, want %v: %s", got, tc.visible, body)
			}
			resp, body = env.RPC(t, "/mcp/"+ws, admin, initialize, tc.hdr)
			if got := strings.Contains(string(resultOf(t, resp, body)), "io.modelcontextprotocol/ui"); got != tc.visible {
				t.Errorf("extension advertised: %v, want %v: %s", got, tc.visible, body)
			}
			before := len(up.Reads())
			_, body = env.RPC(t, "/mcp/"+ws, admin, read, tc.hdr)
			if tc.visible {
				if !strings.Contains(string(body), "dashboard of gamma") || len(up.Reads()) != before+1 {
					t.Errorf("read: %s", body)
				}
				return
			}
			if _, code := rpcError(t, body); code == 0 || len(up.Reads()) != before {
				t.Errorf("a hidden connection's view was read: %s", body)
			}
		})
	}
}

// TestMCPAppsListingFailure: the views' listing at refresh is an extra, never the reason a
// refresh fails. An upstream that declares resources but refuses resources/list
// (RawUpstream) is refreshed, stores no listing, and the view its tool names is listed
// from the tool definition alone; an upstream whose listing breaks after a good one keeps
// the stored listing (its extra view stays listed and readable).
func TestMCPAppsListingFailure(t *testing.T) {
	t.Parallel()
	bundle := setupWorkspace(t, "Apps listing")
	env, ws, admin := bundle.env, bundle.ws, bundle.admin
	raw := testpeer.NewRawUpstream(t, false)
	apps := testpeer.NewAppsUpstream(t, "delta")
	ids := map[string]string{}
	handles := map[string]string{}
	for name, url := range map[string]string{"Raw": raw.URL, "Delta": apps.URL} {
		c := bundle.install(t, name, url)
		ids[name], handles[name] = c.ID, c.Handle
	}
	if len(raw.Received("resources/list")) == 0 {
		t.Fatal("the refresh did not ask the upstream for its resources")
	}
	var stored *string
	if err := env.Pool.QueryRow(t.Context(), `SELECT ui_resources::text FROM mcp_connections WHERE id = $1`, ids["Raw"]).Scan(&stored); err != nil || stored != nil {
		t.Fatalf("stored listing of a refused resources/list: %v %v", stored, err)
	}
	apps.SetListFailing(true)
	if status, out := env.Do(t, "POST", "/api/mcp-connections/"+ids["Delta"]+"/refresh", admin, nil); status != http.StatusOK {
		t.Fatalf("refresh with a broken listing: %d %s", status, out)
	}
	if err := env.Pool.QueryRow(t.Context(), `SELECT ui_resources::text FROM mcp_connections WHERE id = $1`, ids["Delta"]).Scan(&stored); err != nil ||
		stored == nil || !strings.Contains(*stored, testpeer.AppsExtraURI) {
		t.Fatalf("listing after a broken resources/list: %v %v", stored, err)
	}
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	resp, body := env.RPC(t, "/mcp/"+ws, admin, `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{}}`, hdr)
	list := string(resultOf(t, resp, body))
	extra := "ui://" + handles["Delta"] + "/dashboard/extra.html"
	for _, want := range []string{"ui://" + handles["Raw"] + "/report/view.html", extra, "Dashboard of delta"} {
		if !strings.Contains(list, want) {
			t.Errorf("resources/list lacks %s: %s", want, list)
		}
	}
	resp, body = env.RPC(t, "/mcp/"+ws, admin, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"`+extra+`"}}`, hdr)
	if got := string(resultOf(t, resp, body)); !strings.Contains(got, `"uri":"`+extra+`"`) || !slices.Equal(apps.Reads(), []string{testpeer.AppsExtraURI}) {
		t.Errorf("read of the extra view: %s; upstream reads %v", got, apps.Reads())
	}
}

// TestMCPAppsResultAndOpaqueViews (issue 34: where a rule holds in one place, it holds in
// every place). On the aggregate endpoint, at 2025-11-25 and 2026-07-28:
//   - the tools/call result of mcp_<handle>_show names the view as tools/list does
//     (ui://<handle>/dashboard/app.html) in _meta.ui.resourceUri, _meta["ui/resourceUri"]
//     and its resource_link, and its embedded opaque view memo:board-1 as
//     ui://<handle>/:memo:board-1 — and so does tasks/result of the same call run as a
//     task; the single-server endpoint answers the upstream's bytes;
//   - the upstream's views under opaque URIs (memo:board-1, urn:agentpack:view:stats;
//     mimeType text/html;profile=mcp-app) are listed as ui://<handle>/:<uri> next to its
//     ui:// views, a resource that is no view (memo:notes, text/plain) is not, and reading
//     one reaches the upstream with its own URI and answers under the aggregate one.
func TestMCPAppsResultAndOpaqueViews(t *testing.T) {
	t.Parallel()
	up := testpeer.NewAppsUpstream(t, "eta")
	bundle := setupWith(t, "Apps results", "Dash eta", up.URL)
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	var stored string
	if err := env.Pool.QueryRow(t.Context(), `SELECT ui_resources::text FROM mcp_connections WHERE id = $1`, c.ID).Scan(&stored); err != nil ||
		!strings.Contains(stored, testpeer.AppsMemoURI) || !strings.Contains(stored, testpeer.AppsURNURI) || strings.Contains(stored, testpeer.AppsMemoNotesURI) {
		t.Fatalf("stored views %s (%v): want the opaque views, not memo:notes", stored, err)
	}
	agg, single := "/mcp/"+ws, "/mcp/"+ws+"/servers/"+c.ID
	view := "ui://" + c.Handle + "/dashboard/app.html"
	memo := "ui://" + c.Handle + "/:" + testpeer.AppsMemoURI
	urn := "ui://" + c.Handle + "/:" + testpeer.AppsURNURI
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			rpc := func(t *testing.T, path, method, name, params string) json.RawMessage {
				t.Helper()
				resp, body := appsRPC(t, env, path, admin, version, method, name, params)
				return resultOf(t, resp, body)
			}
			tool := "mcp_" + c.Handle + "_show"
			var res struct {
				Meta    map[string]json.RawMessage `json:"_meta"`
				Content []struct {
					Type, URI string
					Resource  *struct{ URI, Text string }
				}
			}
			raw := rpc(t, agg, "tools/call", tool, `{"name":"`+tool+`","arguments":{}}`)
			if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 3 || res.Content[2].Resource == nil {
				t.Fatalf("call result: %v %s", err, raw)
			}
			var ui struct{ ResourceURI string }
			var flat string
			_ = json.Unmarshal(res.Meta["ui"], &ui)
			_ = json.Unmarshal(res.Meta["ui/resourceUri"], &flat)
			if ui.ResourceURI != view || flat != view || res.Content[1].URI != view || res.Content[2].Resource.URI != memo ||
				!strings.Contains(res.Content[2].Resource.Text, "dashboard of eta") {
				t.Errorf("aggregate call result names %q, %q, link %q, embedded %q; want %s and %s: %s",
					ui.ResourceURI, flat, res.Content[1].URI, res.Content[2].Resource.URI, view, memo, raw)
			}
			if version == "2025-11-25" {
				// The same call as a task: its tasks/result is the synchronous call's answer.
				traw := rpc(t, agg, "tools/call", tool, `{"name":"`+tool+`","arguments":{},"task":{"ttl":60000}}`)
				var ct struct{ Task struct{ TaskID string } }
				if err := json.Unmarshal(traw, &ct); err != nil || ct.Task.TaskID == "" {
					t.Fatalf("task-augmented call: %s", traw)
				}
				tres := rpc(t, agg, "tasks/result", "", `{"taskId":"`+ct.Task.TaskID+`"}`)
				if !strings.Contains(string(tres), `"resourceUri":"`+view+`"`) || !strings.Contains(string(tres), `"uri":"`+memo+`"`) ||
					strings.Contains(string(tres), testpeer.AppsViewURI+`"`) {
					t.Errorf("tasks/result names the upstream's own view URIs: %s", tres)
				}
			}
			sraw := rpc(t, single, "tools/call", "show", `{"name":"show","arguments":{}}`)
			if strings.Contains(string(sraw), "ui://"+c.Handle) || !strings.Contains(string(sraw), `"resourceUri":"`+testpeer.AppsViewURI+`"`) ||
				!strings.Contains(string(sraw), `"uri":"`+testpeer.AppsMemoURI+`"`) {
				t.Errorf("single-server call result changed: %s", sraw)
			}

			var listed struct {
				Resources []struct{ URI, Name, MimeType string }
			}
			if err := json.Unmarshal(rpc(t, agg, "resources/list", "", "{}"), &listed); err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range listed.Resources {
				uris = append(uris, r.URI)
			}
			for _, want := range []string{view, memo, urn} {
				if !slices.Contains(uris, want) {
					t.Errorf("resources/list lacks %s: %v", want, uris)
				}
			}
			for _, not := range []string{testpeer.AppsMemoNotesURI, "ui://" + c.Handle + "/:" + testpeer.AppsMemoNotesURI, testpeer.AppsMemoURI} {
				if slices.Contains(uris, not) {
					t.Errorf("resources/list shows %s: %v", not, uris)
				}
			}
			before := len(up.Reads())
			got := rpc(t, agg, "resources/read", memo, `{"uri":"`+memo+`"}`)
			if reads := up.Reads(); len(reads) != before+1 || reads[len(reads)-1] != testpeer.AppsMemoURI {
				t.Errorf("upstream reads %v, want one more of %s", reads, testpeer.AppsMemoURI)
			}
			if !strings.Contains(string(got), `"uri":"`+memo+`"`) || !strings.Contains(string(got), "dashboard of eta") {
				t.Errorf("read of %s: %s", memo, got)
			}
		})
	}
}
