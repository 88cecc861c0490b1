package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/overrides"
	"github.com/agentpack/gateway/shared/testpeer"
)

// TestToolOverridesThroughTheGateway (docs/OVERRIDES.md), against a real loopback upstream
// with fixed bytes (testpeer.RawUpstream) and overrides set over REST:
//   - a renamed tool is listed under its new name only, with the overridden description
//     and annotations, the override marker in _meta and the upstream's other members kept;
//   - a call by the new name reaches the upstream under its own name with the client's
//     argument bytes, byte for byte, and the result comes back byte-equal;
//   - a hidden tool is neither listed nor callable (unknown tool), on both endpoints;
//   - a refresh keeps them applied; deleting an override gives the upstream's tool back.
func TestToolOverridesThroughTheGateway(t *testing.T) {
	t.Parallel()
	bundle := setup(t, "Overrides", "Raw")
	env, ws, admin, up, c := bundle.env, bundle.ws, bundle.admin, bundle.up, bundle.conn
	var status int
	var out []byte
	base := "/api/mcp-connections/" + c.ID + "/tools/"
	if status, out = env.Do(t, "PUT", base+"report/override", admin, map[string]any{
		"name": "quarterly_report", "description": "Ours.", "annotations": map[string]any{"readOnlyHint": false, "futureHint": nil}}); status != http.StatusBadRequest {
		t.Fatalf("an unknown annotation: %d %s", status, out) // futureHint is the upstream's, not an MCP annotation
	}
	if status, out = env.Do(t, "PUT", base+"report/override", admin, map[string]any{
		"name": "quarterly_report", "description": "Ours.", "annotations": map[string]any{"readOnlyHint": false}}); status != http.StatusCreated {
		t.Fatalf("override report: %d %s", status, out)
	}
	if status, out = env.Do(t, "PUT", base+"plain/override", admin, map[string]any{"hidden": true}); status != http.StatusCreated {
		t.Fatalf("hide plain: %d %s", status, out)
	}
	agg, single := "/mcp/"+ws, "/mcp/"+ws+"/servers/"+c.ID
	gen := "mcp_" + c.Handle + "_"

	list := func(t *testing.T, path string) map[string]map[string]any {
		t.Helper()
		resp, body := env.RPC(t, path, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, nil)
		var got struct{ Tools []map[string]any }
		if err := json.Unmarshal(resultOf(t, resp, body), &got); err != nil {
			t.Fatal(err)
		}
		m := map[string]map[string]any{}
		for _, d := range got.Tools {
			m[d["name"].(string)] = d
		}
		return m
	}
	call := func(t *testing.T, path, name, args string) (*http.Response, []byte) {
		t.Helper()
		return env.RPC(t, path, admin, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`, nil)
	}
	unknown := func(t *testing.T, path, name string) {
		t.Helper()
		resp, body := call(t, path, name, `{}`)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		if got := callOutcome(resp.StatusCode, m); got != "unknown" {
			t.Fatalf("call %s on %s: %s (%s), want unknown tool", name, path, got, body)
		}
	}
	check := func(t *testing.T) {
		t.Helper()
		tools := list(t, agg)
		def, ok := tools["quarterly_report"]
		if !ok || tools[gen+"report"] != nil || tools[gen+"plain"] != nil {
			t.Fatalf("listed %v", keys(tools))
		}
		if def["description"] != "Ours." || def["title"] != "Quarterly report" {
			t.Errorf("definition %v", def)
		}
		ann := def["annotations"].(map[string]any)
		if ann["readOnlyHint"] != false || ann["title"] != "Report" || ann["futureHint"] != "kept" {
			t.Errorf("annotations %v", ann)
		}
		meta := def["_meta"].(map[string]any)
		mark, _ := meta["io.agentpack/override"].(map[string]any)
		if mark["upstreamName"] != "report" || strings.Join(strs(mark["fields"]), ",") != "name,description,annotations" {
			t.Errorf("marker %v", meta)
		}
		if meta["vendor/flag"] == nil || def["unknownMember"] == nil || def["icons"] == nil {
			t.Errorf("the upstream's members were lost: %v", def)
		}
		// The call by the new name: the upstream's own name and the client's bytes.
		args := `{"q": "x",  "n":1.50}`
		resp, body := call(t, agg, "quarterly_report", args)
		if res := resultOf(t, resp, body); string(res) != testpeer.RawCallResult {
			t.Errorf("result changed:\n got %s\nwant %s", res, testpeer.RawCallResult)
		}
		calls := up.Received("tools/call")
		var sent struct {
			Name      string
			Arguments json.RawMessage
		}
		_ = json.Unmarshal(calls[len(calls)-1].Params, &sent)
		if sent.Name != "report" || string(sent.Arguments) != args {
			t.Errorf("upstream received %q %s", sent.Name, sent.Arguments)
		}
		unknown(t, agg, gen+"report")
		unknown(t, agg, gen+"plain")
		// The single-server endpoint keeps upstream names; the rest of the override applies.
		st := list(t, single)
		if st["report"]["description"] != "Ours." || st["plain"] != nil {
			t.Errorf("single endpoint lists %v", st)
		}
		unknown(t, single, "plain")
	}
	t.Run("applied", check)
	if status, out = env.Do(t, "POST", "/api/mcp-connections/"+c.ID+"/refresh", admin, nil); status != http.StatusOK {
		t.Fatalf("refresh: %d %s", status, out)
	}
	t.Run("after refresh", check)

	status, out = env.Do(t, "GET", "/api/mcp-connections/"+c.ID+"/overrides", admin, nil)
	var l struct {
		Overrides []struct {
			Tool, ExposedName string
			Dormant           bool
			Upstream          *struct{ ExposedName string }
		}
	}
	_ = json.Unmarshal(out, &l)
	if status != http.StatusOK || len(l.Overrides) != 2 || l.Overrides[1].Tool != "report" ||
		l.Overrides[1].ExposedName != "quarterly_report" || l.Overrides[1].Upstream.ExposedName != gen+"report" {
		t.Fatalf("list: %d %s", status, out)
	}
	if status, out = env.Do(t, "DELETE", base+"plain/override", admin, nil); status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", status, out)
	}
	resp, body := call(t, agg, gen+"plain", `{}`)
	if res := resultOf(t, resp, body); string(res) != testpeer.RawPlainResult {
		t.Fatalf("plain after its override was deleted: %s", res)
	}
}

// TestToolOverrideREST: the REST edge's answers — created/replaced, the documented error
// statuses, and another workspace's admin refused with 404 on every route.
func TestToolOverrideREST(t *testing.T) {
	t.Parallel()
	bundle := setup(t, "Mine", "Raw")
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	other, _, _ := env.Workspace(t, "Theirs")
	member := stacktest.Token(t, "bob", auth.RoleMember, ws)
	alien := stacktest.Token(t, "eve", auth.RoleAdmin, other)
	path := "/api/mcp-connections/" + c.ID + "/tools/report/override"
	for _, tc := range []struct {
		name, token, method, path string
		body                      any
		want                      int
		code                      string
	}{
		{"create", admin, "PUT", path, map[string]any{"name": "rpt"}, 201, ""},
		{"replace", admin, "PUT", path, map[string]any{"name": "rpt", "title": "R"}, 200, ""},
		{"get", admin, "GET", path, nil, 200, ""},
		{"member", member, "PUT", path, map[string]any{"name": "x"}, 403, "FORBIDDEN"},
		{"another workspace's admin: put", alien, "PUT", path, map[string]any{"name": "x"}, 404, "NOT_FOUND"},
		{"another workspace's admin: get", alien, "GET", path, nil, 404, "NOT_FOUND"},
		{"another workspace's admin: list", alien, "GET", "/api/mcp-connections/" + c.ID + "/overrides", nil, 404, "NOT_FOUND"},
		{"another workspace's admin: delete", alien, "DELETE", path, nil, 404, "NOT_FOUND"},
		{"another workspace's admin naming theirs", alien, "GET", path + "?workspaceId=" + other, nil, 404, "NOT_FOUND"},
		{"unknown member", admin, "PUT", path, map[string]any{"rename": "x"}, 400, "VALIDATION_ERROR"},
		{"name type", admin, "PUT", path, map[string]any{"name": 7}, 400, "VALIDATION_ERROR"},
		{"empty body", admin, "PUT", path, map[string]any{}, 400, "VALIDATION_ERROR"},
		{"name over 64", admin, "PUT", path, map[string]any{"name": strings.Repeat("n", 65)}, 400, "VALIDATION_ERROR"},
		{"a built-in", admin, "PUT", path, map[string]any{"name": "agentpack_tool_search"}, 409, "CONFLICT"},
		{"another tool", admin, "PUT", path, map[string]any{"name": "mcp_" + c.Handle + "_plain"}, 409, "CONFLICT"},
		{"unknown tool", admin, "PUT", "/api/mcp-connections/" + c.ID + "/tools/nope/override", map[string]any{"hidden": true}, 404, "NOT_FOUND"},
		{"unknown connection", admin, "GET", "/api/mcp-connections/00000000-0000-0000-0000-000000000000/tools/report/override", nil, 404, "NOT_FOUND"},
		{"no override", admin, "GET", "/api/mcp-connections/" + c.ID + "/tools/plain/override", nil, 404, "NOT_FOUND"},
		{"delete", admin, "DELETE", path, nil, 204, ""},
		{"delete again", admin, "DELETE", path, nil, 404, "NOT_FOUND"},
	} {
		status, out := env.Do(t, tc.method, tc.path, tc.token, tc.body)
		var e struct{ Error struct{ Code string } }
		_ = json.Unmarshal(out, &e)
		if status != tc.want || e.Error.Code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, status, out, tc.want, tc.code)
		}
	}
}

// TestToolOverrideBuiltins: the agentpack_tool_override* built-ins set, list and delete
// overrides in the request's workspace, with answers that match their output schemas;
// the gateway lists the override at once; a member is FORBIDDEN, a collision CONFLICT, a
// bad argument VALIDATION_ERROR (nothing written), and another workspace's connection
// NOT_FOUND.
func TestToolOverrideBuiltins(t *testing.T) {
	t.Parallel()
	bundle := setup(t, "Builtins", "Raw")
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	other, _, _ := env.Workspace(t, "Other")
	member := stacktest.Token(t, "bob", auth.RoleMember, ws)
	alien := stacktest.Token(t, "eve", auth.RoleAdmin, other)
	checker := outputChecker(t)
	call := func(token, path, tool, args string) map[string]any {
		t.Helper()
		resp, raw := env.RPC(t, path, token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		var m struct {
			Result struct {
				StructuredContent json.RawMessage `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &m); err != nil || resp.StatusCode != 200 || m.Result.StructuredContent == nil {
			t.Fatalf("%s: %d %s", tool, resp.StatusCode, raw)
		}
		if err := checker.Lookup(tool).ValidateOutput(m.Result.StructuredContent); err != nil {
			t.Error(err)
		}
		var env map[string]any
		_ = json.Unmarshal(m.Result.StructuredContent, &env)
		return env
	}
	code := func(env map[string]any) string {
		e, _ := env["error"].(map[string]any)
		s, _ := e["code"].(string)
		return s
	}
	agg := "/mcp/" + ws
	target := `"connectionId":"` + c.ID + `","tool":"report"`
	set := call(admin, agg, "agentpack_tool_override_set", `{`+target+`,"name":"rpt","title":"Report (ours)","annotations":{"title":null}}`)
	data, _ := set["data"].(map[string]any)
	ov, _ := data["override"].(map[string]any)
	if set["ok"] != true || data["created"] != true || ov["exposedName"] != "rpt" {
		t.Fatalf("set: %v", set)
	}
	resp, body := env.RPC(t, agg, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, nil)
	if res := resultOf(t, resp, body); !strings.Contains(string(res), `"name":"rpt"`) || !strings.Contains(string(res), `"title":"Report (ours)"`) {
		t.Fatalf("tools/list after the built-in set: %s", res)
	}
	list := call(admin, agg, "agentpack_tool_overrides_list", `{"connectionId":"`+c.ID+`"}`)
	if ls, _ := list["data"].(map[string]any)["overrides"].([]any); len(ls) != 1 {
		t.Fatalf("list: %v", list)
	}
	for _, tc := range []struct {
		name, token, tool, args, code string
	}{
		{"member", member, "agentpack_tool_override_set", `{` + target + `,"hidden":true}`, "FORBIDDEN"},
		{"a built-in's name", admin, "agentpack_tool_override_set", `{` + target + `,"name":"agentpack_pins_list"}`, "CONFLICT"},
		{"another tool's name", admin, "agentpack_tool_override_set", `{` + target + `,"name":"mcp_` + c.Handle + `_plain"}`, "CONFLICT"},
		{"name over 64", admin, "agentpack_tool_override_set", `{` + target + `,"name":"` + strings.Repeat("x", 65) + `"}`, "VALIDATION_ERROR"},
		{"unknown annotation", admin, "agentpack_tool_override_set", `{` + target + `,"annotations":{"x":true}}`, "VALIDATION_ERROR"},
		{"nothing to change", admin, "agentpack_tool_override_set", `{` + target + `}`, "VALIDATION_ERROR"},
		{"unknown tool", admin, "agentpack_tool_override_set", `{"connectionId":"` + c.ID + `","tool":"nope","hidden":true}`, "NOT_FOUND"},
		{"delete of none", admin, "agentpack_tool_override_delete", `{"connectionId":"` + c.ID + `","tool":"plain"}`, "NOT_FOUND"},
	} {
		if got := code(call(tc.token, agg, tc.tool, tc.args)); got != tc.code {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.code)
		}
	}
	// Another workspace's admin, on their own endpoint, cannot reach this connection.
	if got := code(call(alien, "/mcp/"+other, "agentpack_tool_override_set", `{`+target+`,"hidden":true}`)); got != "NOT_FOUND" {
		t.Errorf("alien set: %s", got)
	}
	if got := code(call(alien, "/mcp/"+other, "agentpack_tool_overrides_list", `{"connectionId":"`+c.ID+`"}`)); got != "NOT_FOUND" {
		t.Errorf("alien list: %s", got)
	}
	// The failed calls wrote nothing: the override is as set.
	var n int
	var title string
	_ = env.Pool.QueryRow(t.Context(), `SELECT count(*), max(title) FROM tool_overrides`).Scan(&n, &title)
	if n != 1 || title != "Report (ours)" {
		t.Fatalf("%d overrides, title %q", n, title)
	}
	if del := call(admin, agg, "agentpack_tool_override_delete", `{`+target+`}`); del["ok"] != true {
		t.Fatalf("delete: %v", del)
	}
	// Every built-in's name carries the prefix a rename may not take (docs/OVERRIDES.md).
	for _, b := range checker.All() {
		if !strings.HasPrefix(b.Name, overrides.BuiltinPrefix) {
			t.Errorf("built-in %s does not start with %s: a rename could take its name", b.Name, overrides.BuiltinPrefix)
		}
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestToolOverrideSurvivesDriftApprovalOverREST: through the REST routes an admin uses —
// an overridden tool whose upstream definition changes is withheld as drifted (drift
// compares the upstream's definitions, not the override), comes back under its override
// once approved, and when the upstream stops listing it the override is listed dormant.
func TestToolOverrideSurvivesDriftApprovalOverREST(t *testing.T) {
	t.Parallel()
	fx := testpeer.NewFixture(t, nil)
	bundle := setupWith(t, "Drift", "Fx", fx.URL)
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	var status int
	var out []byte
	conn := "/api/mcp-connections/" + c.ID
	if status, out = env.Do(t, "PUT", conn+"/tools/echo/override", admin, map[string]any{"name": "say_back", "description": "Ours."}); status != http.StatusCreated {
		t.Fatalf("override: %d %s", status, out)
	}
	listed := func(t *testing.T) map[string]string {
		t.Helper()
		resp, body := env.RPC(t, "/mcp/"+ws, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, nil)
		var got struct {
			Tools []struct{ Name, Description string }
		}
		_ = json.Unmarshal(resultOf(t, resp, body), &got)
		m := map[string]string{}
		for _, tl := range got.Tools {
			m[tl.Name] = tl.Description
		}
		return m
	}
	refresh := func(t *testing.T) {
		t.Helper()
		if status, out := env.Do(t, "POST", conn+"/refresh", admin, nil); status != http.StatusOK {
			t.Fatalf("refresh: %d %s", status, out)
		}
	}
	if d, ok := listed(t)["say_back"]; !ok || d != "Ours." {
		t.Fatalf("override not listed: %v", listed(t))
	}
	fx.SetToolDescription("echo", "Echoes back the input message. Changed upstream.")
	refresh(t)
	if _, ok := listed(t)["say_back"]; ok {
		t.Fatal("a drifted tool is listed under its override")
	}
	if status, out = env.Do(t, "POST", conn+"/tools/echo/approve", admin, nil); status != http.StatusOK {
		t.Fatalf("approve: %d %s", status, out)
	}
	if d, ok := listed(t)["say_back"]; !ok || d != "Ours." {
		t.Fatalf("override lost on approval: %v", listed(t))
	}
	fx.Server.RemoveTools("echo")
	refresh(t)
	if _, ok := listed(t)["say_back"]; ok {
		t.Fatal("a tool the upstream no longer lists is listed")
	}
	status, out = env.Do(t, "GET", conn+"/tools/echo/override", admin, nil)
	var v struct {
		Dormant  bool
		Upstream *json.RawMessage
	}
	_ = json.Unmarshal(out, &v)
	if status != http.StatusOK || !v.Dormant || v.Upstream != nil {
		t.Fatalf("dormant override: %d %s", status, out)
	}
}
