package gateway_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/testpeer"
)

// resultOf returns the "result" member of a JSON-RPC answer as sent (JSON or a one-event
// SSE body), failing the test on anything else.
func resultOf(t *testing.T, resp *http.Response, body []byte) json.RawMessage {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		msgs := sseMessages(t, body)
		body = []byte(msgs[len(msgs)-1])
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.Result == nil {
		t.Fatalf("not a result (%v): %s", err, body)
	}
	return m.Result
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %v: %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}

// revisionResult is what a client of version receives for the upstream result raw: raw
// itself, or at 2026-07-28 raw with "resultType":"complete" appended (that revision
// requires it; the upstream speaks an older one) — and, for a cacheable result,
// "cacheScope":"private" and "ttlMs":0 — with every other byte kept.
func revisionResult(t *testing.T, version, raw string, cacheable bool) string {
	t.Helper()
	if version < "2026-07-28" {
		return raw
	}
	out, err := jsonobj.SetMember(json.RawMessage(raw), "resultType", json.RawMessage(`"complete"`))
	if err == nil && cacheable { // resources/read: the answer depends on the caller's credentials
		if out, err = jsonobj.SetMember(out, "cacheScope", json.RawMessage(`"private"`)); err == nil {
			out, err = jsonobj.SetMember(out, "ttlMs", json.RawMessage(`0`))
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// upstreamTools decodes testpeer.RawToolsList into its definitions by name.
func upstreamTools(t *testing.T) map[string]map[string]any {
	t.Helper()
	var l struct{ Tools []map[string]any }
	if err := json.Unmarshal([]byte(testpeer.RawToolsList), &l); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, d := range l.Tools {
		out[d["name"].(string)] = d
	}
	return out
}

// TestPassThroughIntact is the differential test of the forwarding path: an upstream of the
// project's own (testpeer.RawUpstream) sends fixed bytes holding every content type of
// 2025-11-25 plus an unknown kind, unknown members and _meta at every level, and tool
// definitions with icons, title, annotations, outputSchema, execution and _meta. Through
// the aggregate and the single-server endpoint, at 2025-06-18, 2025-11-25 and 2026-07-28,
// and with the upstream answering as JSON and as an awkwardly framed event stream:
//   - the tools/call and resources/read results the client receives are byte-equal to
//     what the upstream sent;
//   - every listed tool definition is JSON-equal to the upstream's, with only the name
//     changed on the aggregate endpoint (and execution.taskSupport "optional" added to a
//     definition without execution: the gateway runs any tool as a task);
//   - the upstream received the upstream tool name and the client's arguments, byte for
//     byte.
func TestPassThroughIntact(t *testing.T) {
	t.Parallel()
	bundle := setupWorkspace(t, "Intact")
	env, ws, admin := bundle.env, bundle.ws, bundle.admin
	want := upstreamTools(t)
	for _, mode := range []struct {
		name string
		sse  bool
	}{{"json", false}, {"sse", true}} {
		t.Run(mode.name, func(t *testing.T) {
			up := testpeer.NewRawUpstream(t, mode.sse)
			c := bundle.install(t, "Raw "+mode.name, up.URL)
			agg, single := "/mcp/"+ws, "/mcp/"+ws+"/servers/"+c.ID
			for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
				t.Run(version, func(t *testing.T) {
					rpc := func(t *testing.T, path, method, name, params string) json.RawMessage {
						t.Helper()
						hdr := map[string]string{"Mcp-Protocol-Version": version}
						if version >= "2026-07-28" {
							hdr["Mcp-Method"] = method
							if name != "" {
								hdr["Mcp-Name"] = name
							}
							meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version +
								`","io.modelcontextprotocol/clientCapabilities":{}}`
							if params == "{}" {
								params = "{" + meta + "}"
							} else {
								params = strings.Replace(params, "{", "{"+meta+",", 1)
							}
						}
						resp, body := env.RPC(t, path, admin, `{"jsonrpc":"2.0","id":"req-1","method":"`+method+`","params":`+params+`}`, hdr)
						return resultOf(t, resp, body)
					}
					for _, ep := range []struct{ name, path, prefix string }{
						{"aggregate", agg, "mcp_" + c.Handle + "_"},
						{"single", single, ""},
					} {
						t.Run(ep.name, func(t *testing.T) {
							var got struct{ Tools []map[string]any }
							if err := json.Unmarshal(rpc(t, ep.path, "tools/list", "", "{}"), &got); err != nil {
								t.Fatal(err)
							}
							seen := 0
							for _, def := range got.Tools {
								name, _ := def["name"].(string)
								upName, ok := strings.CutPrefix(name, ep.prefix)
								if !ok || want[upName] == nil {
									continue
								}
								seen++
								exp := map[string]any{}
								for k, v := range want[upName] {
									exp[k] = v
								}
								exp["name"] = name
								if exp["execution"] == nil {
									// The one member the gateway adds: it runs any tool as a task.
									exp["execution"] = map[string]any{"taskSupport": "optional"}
								}
								if meta, ok := exp["_meta"].(map[string]any); ok && ep.name == "aggregate" {
									// The aggregate endpoint shows an MCP App's ui:// view under the
									// connection's handle (package apps); the rest of _meta is kept.
									m := map[string]any{}
									for k, v := range meta {
										m[k] = v
									}
									m["ui"] = map[string]any{"resourceUri": "ui://" + c.Handle + "/report/view.html"}
									exp["_meta"] = m
								}
								if !reflect.DeepEqual(def, exp) {
									gb, _ := json.Marshal(def)
									eb, _ := json.Marshal(exp)
									t.Errorf("tool %s:\n got %s\nwant %s", name, gb, eb)
								}
							}
							if seen != len(want) {
								t.Fatalf("listed %d of the upstream's %d tools: %v", seen, len(want), got.Tools)
							}
							res := rpc(t, ep.path, "tools/call", ep.prefix+"report",
								`{"name":"`+ep.prefix+`report","arguments":{"q": "x",  "n":1.50}}`)
							if want := revisionResult(t, version, testpeer.RawCallResult, false); string(res) != want {
								t.Errorf("tools/call result changed:\n got %s\nwant %s", res, want)
							}
							calls := up.Received("tools/call")
							var sent struct {
								Name      string
								Arguments json.RawMessage
							}
							_ = json.Unmarshal(calls[len(calls)-1].Params, &sent)
							if sent.Name != "report" || string(sent.Arguments) != `{"q": "x",  "n":1.50}` {
								t.Errorf("upstream received name %q arguments %s", sent.Name, sent.Arguments)
							}
							uri, raw := "ui://report/view.html", testpeer.RawReadResult
							if ep.name == "aggregate" {
								// The view under the connection's handle: only the uri member differs.
								uri = "ui://" + c.Handle + "/report/view.html"
								raw = strings.Replace(raw, `"ui://report/view.html"`, `"`+uri+`"`, 1)
							}
							before := len(up.Received("resources/read"))
							res = rpc(t, ep.path, "resources/read", uri, `{"uri":"`+uri+`"}`)
							if want := revisionResult(t, version, raw, true); string(res) != want {
								t.Errorf("resources/read result changed:\n got %s\nwant %s", res, want)
							}
							reads := up.Received("resources/read")
							var asked struct{ URI string }
							if len(reads) == before+1 {
								_ = json.Unmarshal(reads[before].Params, &asked)
							}
							if asked.URI != "ui://report/view.html" {
								t.Errorf("upstream received resources/read %+v, want its own URI", reads[before:])
							}
						})
					}
				})
			}
		})
	}
}

// TestMCPAppsThroughGateway: the official TypeScript SDK client sees a tool's
// _meta.ui.resourceUri through both endpoints (under the connection's handle on the
// aggregate one, docs/ARCHITECTURE.md "MCP Apps"), and reads the ui:// view it names
// through each with its text/html;profile=mcp-app content unchanged (the uri the one it
// asked for).
func TestMCPAppsThroughGateway(t *testing.T) {
	t.Parallel()
	bundle := setup(t, "Apps", "Apps")
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	for _, ep := range []struct{ path, tool, uri string }{
		{"/mcp/" + ws, "mcp_" + c.Handle + "_report", "ui://" + c.Handle + "/report/view.html"},
		{"/mcp/" + ws + "/servers/" + c.ID, "report", "ui://report/view.html"},
	} {
		var view struct{ Contents []map[string]any }
		_ = json.Unmarshal([]byte(testpeer.RawReadResult), &view)
		view.Contents[0]["uri"] = ep.uri
		plan := []map[string]any{{"op": "listTools"}, {"op": "readResource", "uri": ep.uri}}
		res := testpeer.TSClient(t, testpeer.TSClientOptions{URL: env.URL + ep.path, Authorization: "Bearer " + admin, Plan: plan})
		if res.ConnectError != nil {
			t.Fatalf("%s: connect: %+v", ep.path, res.ConnectError)
		}
		var listed struct {
			Tools []struct {
				Name string
				Meta struct {
					UI struct{ ResourceURI string } `json:"ui"`
				} `json:"_meta"`
			}
		}
		_ = json.Unmarshal(res.Steps[0].Result, &listed)
		found := false
		for _, tool := range listed.Tools {
			if tool.Name == ep.tool {
				found = tool.Meta.UI.ResourceURI == ep.uri
			}
		}
		if !found {
			t.Errorf("%s: the TS client does not see %s's _meta.ui.resourceUri %s: %s", ep.path, ep.tool, ep.uri, res.Steps[0].Result)
		}
		var got struct{ Contents []map[string]any }
		_ = json.Unmarshal(res.Steps[1].Result, &got)
		if len(got.Contents) != 1 || !reflect.DeepEqual(got.Contents[0], view.Contents[0]) {
			t.Errorf("%s: ui:// view as the TS client read it: %s", ep.path, res.Steps[1].Result)
		}
	}
}

// TestSingleServerCapabilitiesAreHonest (issue 14 item 5): the single-server endpoint of
// an upstream that declares tools and resources only advertises exactly those, forwards
// resources/* to it, and answers prompts/list and completion/complete -32601 without
// asking the upstream; the aggregate endpoint keeps its own capabilities.
func TestSingleServerCapabilitiesAreHonest(t *testing.T) {
	t.Parallel()
	bundle := setup(t, "Caps", "Caps") // its raw upstream declares {"tools":{},"resources":{}}
	env, ws, admin, up, c := bundle.env, bundle.ws, bundle.admin, bundle.up, bundle.conn
	single := "/mcp/" + ws + "/servers/" + c.ID
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	resp, body := env.RPC(t, single, admin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, hdr)
	var init struct {
		Capabilities map[string]json.RawMessage
	}
	if err := json.Unmarshal(resultOf(t, resp, body), &init); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range init.Capabilities {
		got = append(got, k)
	}
	slices.Sort(got)
	// The upstream's own, plus tasks: the gateway runs any tool call as a task.
	if !slices.Equal(got, []string{"resources", "tasks", "tools"}) {
		t.Errorf("advertised %v, want exactly the upstream's [resources tools] and the gateway's tasks", got)
	}
	for _, method := range []string{"prompts/list", "completion/complete"} {
		before := len(up.Received(method))
		_, b := env.RPC(t, single, admin, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":{}}`, hdr)
		if _, code := rpcError(t, b); code != -32601 {
			t.Errorf("%s: code %d, want -32601", method, code)
		}
		if len(up.Received(method)) != before {
			t.Errorf("%s reached the upstream", method)
		}
	}
	before := len(up.Received("resources/read"))
	resp, body = env.RPC(t, single, admin, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"ui://report/view.html"}}`, hdr)
	if string(resultOf(t, resp, body)) != testpeer.RawReadResult || len(up.Received("resources/read")) != before+1 {
		t.Errorf("resources/read not forwarded: %s", body)
	}
	resp, body = env.RPC(t, "/mcp/"+ws, admin, `{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, hdr)
	if !strings.Contains(string(resultOf(t, resp, body)), `"prompts"`) {
		t.Errorf("aggregate endpoint lost its own prompts capability: %s", body)
	}
}
