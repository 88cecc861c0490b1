package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rpcAnswer is one JSON-RPC answer as sent: its result bytes or its error.
type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// newEraRPC sends one request at protocol version with what that revision requires of a
// request (at 2026-07-28: Mcp-Method / Mcp-Name headers and _meta protocolVersion, plus
// clientCapabilities caps when not ""), params being the params without _meta, and returns
// the answer (JSON or the last SSE message).
func newEraRPC(t *testing.T, env *stacktest.Env, path, token, version, method, name, params, caps string) rpcAnswer {
	t.Helper()
	hdr := map[string]string{"Mcp-Protocol-Version": version}
	if version >= "2026-07-28" {
		hdr["Mcp-Method"] = method
		if name != "" {
			hdr["Mcp-Name"] = name
		}
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `"`
		if caps != "" {
			meta += `,"io.modelcontextprotocol/clientCapabilities":` + caps
		}
		meta += "}"
		if params == "{}" {
			params = "{" + meta + "}"
		} else {
			params = strings.Replace(params, "{", "{"+meta+",", 1)
		}
	}
	resp, body := env.RPC(t, path, token, `{"jsonrpc":"2.0","id":"r-1","method":"`+method+`","params":`+params+`}`, hdr)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		msgs := sseMessages(t, body)
		body = []byte(msgs[len(msgs)-1])
	}
	var a rpcAnswer
	if err := json.Unmarshal(body, &a); err != nil || (a.Result == nil && a.Error == nil) {
		t.Fatalf("%s: not a JSON-RPC answer (%v; HTTP %d): %s", method, err, resp.StatusCode, body)
	}
	return a
}

// TestMRTRPassThrough: a 2026-07-28-only upstream (testpeer.RawUpstream
// WithRevision20260728) answers an InputRequiredResult when the request's client
// capabilities declare elicitation, and completes on the retry that carries its
// requestState and inputResponses. Through the aggregate and the single-server endpoint,
// with the upstream answering JSON and SSE:
//   - the caller's per-request clientCapabilities reach the upstream (not {}), and the
//     InputRequiredResult reaches the client byte for byte;
//   - the retry's requestState and inputResponses reach the upstream byte for byte and its
//     final result reaches the client byte for byte;
//   - a client without elicitation (2026-07-28 without it, or 2025-11-25, whose hop sends
//     {}) gets the upstream's own answer for that case.
func TestMRTRPassThrough(t *testing.T) {
	t.Parallel()
	bundle := setupWorkspace(t, "MRTR")
	env, ws, admin := bundle.env, bundle.ws, bundle.admin
	for _, mode := range []struct {
		name string
		sse  bool
	}{{"json", false}, {"sse", true}} {
		t.Run(mode.name, func(t *testing.T) {
			up := testpeer.NewRawUpstream(t, mode.sse).WithRevision20260728()
			c := bundle.install(t, "Stateless "+mode.name, up.URL)
			for _, ep := range []struct{ name, path, tool string }{
				{"aggregate", "/mcp/" + ws, "mcp_" + c.Handle + "_needs_input"},
				{"single", "/mcp/" + ws + "/servers/" + c.ID, "needs_input"},
			} {
				t.Run(ep.name, func(t *testing.T) {
					caps := `{"elicitation":{"form":{}},"sampling":{}}`
					call := `{"name":"` + ep.tool + `","arguments":{"q": "x"}}`
					audited := func() int { // after the queued rows are written (they follow the answer)
						env.FlushAudit(t)
						var n int
						if err := env.Pool.QueryRow(t.Context(), `SELECT count(*) FROM audit_events WHERE connection_id = $1 AND tool = $2`, c.ID,
							"mcp_"+c.Handle+"_needs_input").Scan(&n); err != nil { // the exposed name from either endpoint (issue 44)
							t.Fatal(err)
						}
						return n
					}
					rows := audited()
					a := newEraRPC(t, env, ep.path, admin, "2026-07-28", "tools/call", ep.tool, call, caps)
					if a.Error != nil || string(a.Result) != testpeer.RawInputRequired {
						t.Fatalf("first call: %+v %s\nwant %s", a.Error, a.Result, testpeer.RawInputRequired)
					}
					// Issue 34: an InputRequiredResult is no completed call: no audit row yet.
					if n := audited() - rows; n != 0 {
						t.Errorf("%d audit rows after the InputRequiredResult, want 0", n)
					}
					got := lastParams(t, up)
					if !jsonEqual(t, got.Meta["io.modelcontextprotocol/clientCapabilities"], []byte(caps)) {
						t.Errorf("upstream received clientCapabilities %s, want %s", got.Meta["io.modelcontextprotocol/clientCapabilities"], caps)
					}
					responses := `{"confirm": {"action": "accept", "content": {"ok": true}}}`
					retry := `{"name":"` + ep.tool + `","arguments":{"q": "x"},"inputResponses":` + responses +
						`,"requestState":"` + testpeer.RawMRTRState + `"}`
					a = newEraRPC(t, env, ep.path, admin, "2026-07-28", "tools/call", ep.tool, retry, caps)
					if a.Error != nil || string(a.Result) != testpeer.RawMRTRResult {
						t.Fatalf("retry: %+v %s\nwant %s", a.Error, a.Result, testpeer.RawMRTRResult)
					}
					if n := audited() - rows; n != 1 {
						t.Errorf("%d audit rows for one call completed after one InputRequiredResult round, want 1", n)
					}
					got = lastParams(t, up)
					if string(got.InputResponses) != responses || string(got.RequestState) != `"`+testpeer.RawMRTRState+`"` {
						t.Errorf("upstream received inputResponses %s requestState %s", got.InputResponses, got.RequestState)
					}
					// Without elicitation the upstream must not ask for it.
					for _, v := range []struct{ version, caps string }{{"2026-07-28", `{"sampling":{}}`}, {"2025-11-25", ""}} {
						a = newEraRPC(t, env, ep.path, admin, v.version, "tools/call", ep.tool, call, v.caps)
						if a.Error != nil || !strings.Contains(string(a.Result), "declared no elicitation") {
							t.Errorf("%s without elicitation: %+v %s", v.version, a.Error, a.Result)
						}
						caps := lastParams(t, up).Meta["io.modelcontextprotocol/clientCapabilities"]
						if want := v.caps; want == "" && string(caps) != "{}" || want != "" && !jsonEqual(t, caps, []byte(want)) {
							t.Errorf("%s: upstream received clientCapabilities %s", v.version, caps)
						}
					}
				})
			}
		})
	}
}

// TestMRTRGoSDKClient: go-sdk's own 2026-07-28 client, through the aggregate and the
// single-server endpoint, answers a 2026-07-28 upstream's form elicitation with its
// handler and its multi round-trip middleware retries with the upstream's requestState:
// the call completes with the upstream's final result.
func TestMRTRGoSDKClient(t *testing.T) {
	t.Parallel()
	up := testpeer.NewRawUpstream(t, false).WithRevision20260728()
	bundle := setupWith(t, "MRTRClient", "Stateless", up.URL)
	env, ws, token, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	for _, ep := range []struct{ name, path, tool string }{
		{"aggregate", "/mcp/" + ws, "mcp_" + c.Handle + "_needs_input"},
		{"single", "/mcp/" + ws + "/servers/" + c.ID, "needs_input"},
	} {
		t.Run(ep.name, func(t *testing.T) {
			var asked []string
			cl := mcp.NewClient(&mcp.Implementation{Name: "mrtr-client", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
				},
			})
			tr := &mcp.StreamableClientTransport{Endpoint: env.URL + ep.path, DisableStandaloneSSE: true,
				HTTPClient: &http.Client{Transport: bearer{token}}}
			cs, err := cl.Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ep.tool, Arguments: map[string]any{"q": "x"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(asked) != 1 || asked[0] != "Proceed <now>?" || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "confirmed & done" {
				t.Errorf("asked %q, result %+v", asked, res)
			}
		})
	}
}

// bearer sends every request with a bearer token.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// upstreamCall is the part of a tools/call the upstream received that MRTR concerns.
type upstreamCall struct {
	Meta           map[string]json.RawMessage `json:"_meta"`
	InputResponses json.RawMessage            `json:"inputResponses"`
	RequestState   json.RawMessage            `json:"requestState"`
}

func lastParams(t *testing.T, up *testpeer.RawUpstream) upstreamCall {
	t.Helper()
	calls := up.Received("tools/call")
	if len(calls) == 0 {
		t.Fatal("the upstream received no tools/call")
	}
	var p upstreamCall
	if err := json.Unmarshal(calls[len(calls)-1].Params, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestResourceNotFoundByRevision: resource not found is -32602 for a 2026-07-28 client,
// which must not receive -32002 (MCP 2026-07-28 basic/index "Error Codes") — an upstream's
// -32002 on the single-server endpoint is mapped, message and data kept — and the
// upstream's -32002 reaches a 2025-11-25 client unchanged. The gateway's own resources/read
// of an unknown URI is -32602 at 2026-07-28 too.
func TestResourceNotFoundByRevision(t *testing.T) {
	t.Parallel()
	bundle := setup(t, "NotFound", "Raw")
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	single := "/mcp/" + ws + "/servers/" + c.ID
	read := `{"uri":"` + testpeer.RawMissingURI + `"}`
	for version, want := range map[string]int64{"2026-07-28": -32602, "2025-11-25": -32002} {
		a := newEraRPC(t, env, single, admin, version, "resources/read", testpeer.RawMissingURI, read, "{}")
		if a.Error == nil || a.Error.Code != want || a.Error.Message != "Resource not found" ||
			string(a.Error.Data) != `{"uri":"`+testpeer.RawMissingURI+`"}` {
			t.Errorf("%s: single-server answer %+v %s, want %d with the upstream's message and data", version, a.Error, a.Result, want)
		}
	}
	a := newEraRPC(t, env, "/mcp/"+ws, admin, "2026-07-28", "resources/read", "agentpack://nothing-here", `{"uri":"agentpack://nothing-here"}`, "{}")
	if a.Error == nil || a.Error.Code != -32602 {
		t.Errorf("gateway's own resource not found at 2026-07-28: %+v %s", a.Error, a.Result)
	}
}

// TestOlderUpstreamGetsNoCallerCapabilities: a 2026-07-28 caller's per-request
// clientCapabilities are not sent to an upstream whose session is of an older revision
// (its capabilities were the pool's, declared at initialize); the arguments arrive as sent.
func TestOlderUpstreamGetsNoCallerCapabilities(t *testing.T) {
	t.Parallel()
	bundle := setup(t, "Older", "Older")
	env, ws, admin, up, c := bundle.env, bundle.ws, bundle.admin, bundle.up, bundle.conn
	tool := "mcp_" + c.Handle + "_plain"
	a := newEraRPC(t, env, "/mcp/"+ws, admin, "2026-07-28", "tools/call", tool,
		`{"name":"`+tool+`","arguments":{"q": 1}}`, `{"elicitation":{"url":{}}}`)
	if a.Error != nil {
		t.Fatalf("call: %+v", a.Error)
	}
	calls := up.Received("tools/call")
	var got struct {
		Arguments json.RawMessage            `json:"arguments"`
		Meta      map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(calls[len(calls)-1].Params, &got); err != nil {
		t.Fatal(err)
	}
	if got.Meta["io.modelcontextprotocol/clientCapabilities"] != nil || string(got.Arguments) != `{"q": 1}` {
		t.Errorf("the 2025-11-25 upstream received %s", calls[len(calls)-1].Params)
	}
}

// TestUpstreamURLElicitationByRevision: an upstream of 2025-11-25 answering -32042 (URL
// elicitation required) reaches a 2025-11-25 client as sent, and a 2026-07-28 client —
// which must not receive -32042 — as an InputRequiredResult carrying the upstream's URL as
// a URL-mode elicitation/create (when it declared URL elicitation), or as an isError
// result with the link (when it did not).
func TestUpstreamURLElicitationByRevision(t *testing.T) {
	t.Parallel()
	bundle := setup(t, "Elicit", "Elicit")
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	tool := "mcp_" + c.Handle + "_plain"
	call := `{"name":"` + tool + `","arguments":{"elicit":true}}`

	a := newEraRPC(t, env, "/mcp/"+ws, admin, "2025-11-25", "tools/call", tool, call, "")
	if a.Error == nil || a.Error.Code != -32042 || !strings.Contains(string(a.Error.Data), "https://up.example/connect?x=1") {
		t.Errorf("2025-11-25: %+v %s", a.Error, a.Result)
	}
	a = newEraRPC(t, env, "/mcp/"+ws, admin, "2026-07-28", "tools/call", tool, call, `{"elicitation":{"url":{}}}`)
	want := `{"resultType":"input_required","inputRequests":{"upstream_1":{"method":"elicitation/create","params":{"message":"Link your account","mode":"url","url":"https://up.example/connect?x=1"}}}}`
	if a.Error != nil || !jsonEqual(t, a.Result, []byte(want)) {
		t.Errorf("2026-07-28 with URL elicitation: %+v %s\nwant %s", a.Error, a.Result, want)
	}
	a = newEraRPC(t, env, "/mcp/"+ws, admin, "2026-07-28", "tools/call", tool, call, `{}`)
	if a.Error != nil || !strings.Contains(string(a.Result), `"isError":true`) || !strings.Contains(string(a.Result), "https://up.example/connect?x=1") {
		t.Errorf("2026-07-28 without URL elicitation: %+v %s", a.Error, a.Result)
	}
}
