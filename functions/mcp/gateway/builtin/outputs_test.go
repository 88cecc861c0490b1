package builtin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/registry/registrytest"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// outputStep is one call of a built-in with valid arguments (args is read when the step
// runs, after the steps before it; then reads the answer's data for the steps after it).
type outputStep struct {
	tool string
	args func() string
	then func(data map[string]any)
}

// TestBuiltinOutputSchemas holds every built-in's listed outputSchema to what its handler
// answers (MCP "Tools", "Output Schema": structuredContent must conform to the declared
// outputSchema, and the text content carries the same JSON for clients without it). On a
// whole stack (real Postgres, the gateway over HTTP, a loopback go-sdk upstream and a
// loopback MCP registry), a superuser — who is listed every built-in — lists the tools,
// then calls each built-in with valid arguments, in the branches that answer differently
// (a search with hits and one without, a connection test that succeeds and one that
// fails, a connection disabled and enabled again), and validates each answer against the
// outputSchema tools/list gave, with a JSON Schema validator of its own (formats
// asserted). A listed built-in without a step fails, so does a step whose tool is not
// listed.
func TestBuiltinOutputSchemas(t *testing.T) {
	t.Parallel()
	env := stacktest.New(t, nil)
	ws, _, chat := env.Workspace(t, "Outputs")
	token := stacktest.Token(t, "root", auth.RoleSuperuser, ws)
	up := testpeer.NewFixture(t, nil)
	reg := httptest.NewServer(registrytest.NewStub(nil))
	t.Cleanup(reg.Close)
	ctx := t.Context()
	if err := db.CatalogEntryUpsertSeed(ctx, env.Pool, &db.CatalogSeedEntry{Name: "Outputs Demo", URL: up.URL,
		TransportType: "streamable-http", VerificationTier: "unverified"}); err != nil {
		t.Fatal(err)
	}
	// A connection whose server is not there: its test answers success false and where
	// it failed (the answer's other branch).
	dead := env.Connection(t, stacktest.Admin("root", ws), connections.CreateInput{Name: "Dead", URL: "http://127.0.0.1:1/mcp", WorkspaceID: &ws}).Connection

	rpc := func(method, params string) json.RawMessage {
		t.Helper()
		resp, raw := env.RPC(t, "/mcp/"+ws, token, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`,
			map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		var m struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(raw, &m); err != nil || resp.StatusCode != 200 || m.Result == nil {
			t.Fatalf("%s %s: %d %s", method, params, resp.StatusCode, raw)
		}
		return m.Result
	}

	// The built-ins as a client sees them, with the validator of each listed outputSchema.
	schemas := map[string]*jsonschema.Schema{}
	listed := map[string]bool{}
	for cursor := ""; ; {
		var page struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		if err := json.Unmarshal(rpc("tools/list", params), &page); err != nil {
			t.Fatal(err)
		}
		for _, tool := range page.Tools {
			if !strings.HasPrefix(tool.Name, "agentpack_") {
				continue
			}
			listed[tool.Name] = true
			if tool.OutputSchema != nil {
				schemas[tool.Name] = compileOutput(t, tool.Name, tool.OutputSchema)
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}

	var entryID, connID, pinID, limitID string
	str := func(m map[string]any, path ...string) string {
		var v any = m
		for _, k := range path {
			v, _ = v.(map[string]any)[k]
		}
		s, _ := v.(string)
		if s == "" {
			t.Fatalf("no %v in %v", path, m)
		}
		return s
	}
	fixed := func(s string) func() string { return func() string { return s } }
	steps := []outputStep{
		{tool: "agentpack_toolsets_list", args: fixed(`{}`)},
		{tool: "agentpack_catalog_list", args: fixed(`{"search":"Outputs Demo"}`)},
		{tool: "agentpack_catalog_get", args: fixed(`{"name":"Outputs Demo"}`), then: func(d map[string]any) {
			if entryID = str(d, "entry", "id"); d["installed"] != nil {
				t.Errorf("entry not installed: installed %v, want null", d["installed"])
			}
		}},
		{tool: "agentpack_catalog_install", args: func() string { return `{"entryId":"` + entryID + `"}` }, then: func(d map[string]any) { connID = str(d, "id") }},
		{tool: "agentpack_catalog_get", args: func() string { return `{"entryId":"` + entryID + `"}` }, then: func(d map[string]any) {
			if in, _ := d["installed"].([]any); len(in) != 1 {
				t.Errorf("installed entry: installed %v, want its connection", d["installed"])
			}
		}},
		{tool: "agentpack_connections_list", args: fixed(`{}`)},
		{tool: "agentpack_connection_test", args: func() string { return `{"connectionId":"` + connID + `"}` }},
		{tool: "agentpack_connection_test", args: fixed(`{"connectionId":"` + dead.ID + `"}`)},
		{tool: "agentpack_tools_search", args: fixed(`{"query":"echo"}`)},
		{tool: "agentpack_tools_search", args: fixed(`{"query":"zzqxvw"}`), then: func(d map[string]any) {
			if d["total"] != 0.0 || d["hint"] == nil || d["servers"] == nil {
				t.Errorf("a search without hits answered %v, want total 0 with servers and a hint", d)
			}
		}},
		{tool: "agentpack_tool_call", args: fixed(`{"name":"agentpack_toolsets_list","arguments":{}}`)},
		{tool: "agentpack_pin_add", args: func() string { return `{"chatId":"` + chat + `","connectionId":"` + connID + `"}` }, then: func(d map[string]any) { pinID = str(d, "pin", "id") }},
		{tool: "agentpack_pins_list", args: fixed(`{"chatId":"` + chat + `"}`)},
		{tool: "agentpack_pin_remove", args: func() string { return `{"chatId":"` + chat + `","pinId":"` + pinID + `"}` }},
		{tool: "agentpack_ratelimit_set", args: fixed(`{"perMinute":100,"principal":"*"}`), then: func(d map[string]any) { limitID = str(d, "limit", "id") }},
		{tool: "agentpack_ratelimits_list", args: fixed(`{}`)},
		{tool: "agentpack_ratelimit_delete", args: func() string { return `{"limitId":"` + limitID + `"}` }},
		{tool: "agentpack_tool_override_set", args: func() string {
			return `{"connectionId":"` + connID + `","tool":"echo","name":"say","annotations":{"readOnlyHint":true}}`
		}},
		{tool: "agentpack_tool_overrides_list", args: fixed(`{}`)},
		{tool: "agentpack_tool_override_delete", args: func() string { return `{"connectionId":"` + connID + `","tool":"echo"}` }},
		{tool: "agentpack_registry_import", args: fixed(`{"url":"` + reg.URL + `"}`)},
		{tool: "agentpack_connection_toggle", args: func() string { return `{"connectionId":"` + connID + `"}` }},
		{tool: "agentpack_connection_toggle", args: func() string { return `{"connectionId":"` + connID + `"}` }},
		{tool: "agentpack_audit_list", args: func() string { env.FlushAudit(t); return `{}` }},
		{tool: "agentpack_catalog_uninstall", args: func() string { return `{"entryId":"` + entryID + `"}` }},
	}

	covered := map[string]bool{}
	for _, st := range steps {
		covered[st.tool] = true
		if !listed[st.tool] {
			t.Errorf("%s has a step but tools/list does not list it", st.tool)
		}
	}
	for name := range listed {
		if !covered[name] {
			t.Errorf("%s is listed but has no step here: add one that calls it with valid arguments", name)
		}
	}

	for i, st := range steps {
		args := st.args()
		var res struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		}
		raw := rpc("tools/call", `{"name":"`+st.tool+`","arguments":`+args+`}`)
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatalf("step %d %s: %v", i, st.tool, err)
		}
		answered := st.tool
		if st.tool == "agentpack_tool_call" {
			// No outputSchema: the answer is the named tool's own, held to that tool's.
			if schemas[st.tool] != nil {
				t.Errorf("%s lists an outputSchema; its answer is another tool's result", st.tool)
			}
			answered = "agentpack_toolsets_list"
		}
		var env struct {
			OK   bool           `json:"ok"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(res.StructuredContent, &env); err != nil || res.IsError || !env.OK || len(env.Data) == 0 {
			t.Fatalf("step %d %s %s: not a success with data (%v): %s", i, st.tool, args, err, raw)
		}
		if len(res.Content) != 1 || res.Content[0].Type != "text" || !jsonEqual(res.Content[0].Text, res.StructuredContent) {
			t.Errorf("step %d %s: text content is not the structured content's JSON: %s", i, st.tool, raw)
		}
		s := schemas[answered]
		if s == nil {
			t.Errorf("step %d %s: %s lists no outputSchema", i, st.tool, answered)
		} else if err := validate(s, res.StructuredContent); err != nil {
			t.Errorf("step %d %s %s: structuredContent does not conform to the listed outputSchema: %v\n%s", i, st.tool, args, err, res.StructuredContent)
		}
		if st.then != nil {
			st.then(env.Data)
		}
	}
}

// compileOutput compiles a listed outputSchema (formats asserted, as a strict client may).
func compileOutput(t *testing.T, name string, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: outputSchema: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem://"+name, doc); err != nil {
		t.Fatalf("%s: outputSchema: %v", name, err)
	}
	s, err := c.Compile("mem://" + name)
	if err != nil {
		t.Fatalf("%s: outputSchema does not compile: %v", name, err)
	}
	return s
}

func validate(s *jsonschema.Schema, raw json.RawMessage) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// jsonEqual reports whether text and raw are the same JSON value.
func jsonEqual(text string, raw json.RawMessage) bool {
	var a, b any
	return json.Unmarshal([]byte(text), &a) == nil && json.Unmarshal(raw, &b) == nil && reflect.DeepEqual(a, b)
}
