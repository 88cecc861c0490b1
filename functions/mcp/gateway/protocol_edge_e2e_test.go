package gateway_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/testpeer"
)

// newEraHeaders are the request headers of a 2026-07-28 request for method (and name).
func newEraHeaders(version, method, name string) map[string]string {
	h := map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// metaParams is a params object with _meta's per-request fields at version, plus extra
// members (a JSON object's inside, without braces; may be "").
func metaParams(version, extra string) string {
	p := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	if extra != "" {
		p += "," + extra
	}
	return p + "}"
}

// TestVersionChecks (issue 22, version checks): at 2026-07-28 a request whose
// MCP-Protocol-Version header (2025-11-25) differs from its _meta version (2026-07-28) is
// refused 400 with HeaderMismatch (-32020), and a version nobody implements (2099-01-01 in
// both) 400 with UnsupportedProtocolVersionError (-32022) naming the supported versions —
// never the tool list, and nothing reaches the upstream (2026-07-28 transport chapter,
// "Protocol Version Header"). Header and _meta that agree are still served.
func TestVersionChecks(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	path := "/mcp/" + e.ws
	echo := "mcp_" + e.handle + "_echo"
	call := func(v string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + metaParams(v, `"name":"`+echo+`","arguments":{"message":"v"}`) + `}`
	}
	list := func(v string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":` + metaParams(v, "") + `}`
	}
	for _, tc := range []struct {
		name, header, body, method, tool string
		wantCode                         int
	}{
		{"list, header 2025-11-25, _meta 2026-07-28", "2025-11-25", list("2026-07-28"), "tools/list", "", -32020},
		{"call, header 2025-11-25, _meta 2026-07-28", "2025-11-25", call("2026-07-28"), "tools/call", echo, -32020},
		{"list, header 2026-07-28, _meta 2025-11-25", "2026-07-28", list("2025-11-25"), "tools/list", "", -32020},
		{"list, 2099-01-01 in both", "2099-01-01", list("2099-01-01"), "tools/list", "", -32022},
		{"call, 2099-01-01 in both", "2099-01-01", call("2099-01-01"), "tools/call", echo, -32022},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.up.CountRequests("POST", `"tools/call"`)
			resp, b := e.env.RPC(t, path, e.admin, tc.body, newEraHeaders(tc.header, tc.method, tc.tool))
			id, code := rpcError(t, b)
			if resp.StatusCode != http.StatusBadRequest || code != tc.wantCode || id != "7" {
				t.Errorf("%d id %s code %d, want 400 id 7 code %d: %s", resp.StatusCode, id, code, tc.wantCode, b)
			}
			if strings.Contains(string(b), echo) && tc.method == "tools/list" {
				t.Errorf("served the tool list: %s", b)
			}
			if tc.wantCode == -32022 {
				var m struct {
					Error struct {
						Data struct{ Supported []string }
					}
				}
				_ = json.Unmarshal(b, &m)
				if !strings.Contains(strings.Join(m.Error.Data.Supported, ","), "2026-07-28") {
					t.Errorf("supported versions not named: %s", b)
				}
			}
			if n := e.up.CountRequests("POST", `"tools/call"`) - before; n != 0 {
				t.Errorf("%d tools/call reached the upstream", n)
			}
		})
	}
	resp, b := e.env.RPC(t, path, e.admin, list("2026-07-28"), newEraHeaders("2026-07-28", "tools/list", ""))
	if resp.StatusCode != 200 || !strings.Contains(string(b), echo) {
		t.Errorf("agreeing 2026-07-28 request: %d %.300s", resp.StatusCode, b)
	}
	resp, b = e.env.RPC(t, path, e.admin, call("2026-07-28"), newEraHeaders("2026-07-28", "tools/call", echo))
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"result"`) {
		t.Errorf("agreeing 2026-07-28 call: %d %.300s", resp.StatusCode, b)
	}
}

// TestUnknownMethodKeepsID (issue 22, unknown methods): {"id":7,"method":"foo/bar"} is
// answered -32601 under id 7 — with HTTP 200 before 2026-07-28 (a JSON-RPC error on a
// readable request: the TypeScript SDK turns a 4xx into a transport error, not an
// McpError), and with 404 at 2026-07-28, as that revision's transport chapter requires.
func TestUnknownMethodKeepsID(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	for _, path := range []string{"/mcp/" + e.ws, "/mcp/" + e.ws + "/servers/" + e.connID} {
		resp, b := e.env.RPC(t, path, e.admin, `{"jsonrpc":"2.0","id":7,"method":"foo/bar"}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		if id, code := rpcError(t, b); resp.StatusCode != http.StatusOK || id != "7" || code != -32601 {
			t.Errorf("%s 2025-11-25: %d id %s code %d, want 200 id 7 -32601: %s", path, resp.StatusCode, id, code, b)
		}
		resp, b = e.env.RPC(t, path, e.admin, `{"jsonrpc":"2.0","id":"x7","method":"foo/bar"}`, nil)
		if id, code := rpcError(t, b); resp.StatusCode != http.StatusOK || id != `"x7"` || code != -32601 {
			t.Errorf("%s no version header: %d id %s code %d: %s", path, resp.StatusCode, id, code, b)
		}
		resp, b = e.env.RPC(t, path, e.admin, `{"jsonrpc":"2.0","id":7,"method":"foo/bar","params":`+metaParams("2026-07-28", "")+`}`,
			newEraHeaders("2026-07-28", "foo/bar", ""))
		if id, code := rpcError(t, b); resp.StatusCode != http.StatusNotFound || id != "7" || code != -32601 {
			t.Errorf("%s 2026-07-28: %d id %s code %d, want 404 id 7 -32601: %s", path, resp.StatusCode, id, code, b)
		}
	}
	// The official TypeScript SDK client gets an McpError it can handle, not a transport
	// error, and its session goes on.
	res := testpeer.TSClient(t, testpeer.TSClientOptions{URL: e.env.URL + "/mcp/" + e.ws, Authorization: "Bearer " + e.admin,
		Plan: []map[string]any{{"op": "request", "method": "foo/bar"}, {"op": "ping"}}})
	if res.ConnectError != nil || len(res.Steps) != 2 {
		t.Fatalf("ts-client: %+v", res)
	}
	if er := res.Steps[0].Error; er == nil || !er.MCPError || er.Code == nil || *er.Code != -32601 {
		t.Errorf("TypeScript SDK: foo/bar = %+v, want an McpError -32601", res.Steps[0])
	}
	if res.Steps[1].Error != nil {
		t.Errorf("TypeScript SDK: ping after foo/bar: %+v", res.Steps[1].Error)
	}
	// A body that is no request keeps its 4xx.
	resp, b := e.env.RPC(t, "/mcp/"+e.ws, e.admin, `{"jsonrpc":"2.0",`, nil)
	if _, code := rpcError(t, b); resp.StatusCode != http.StatusBadRequest || code != -32700 {
		t.Errorf("malformed: %d %d", resp.StatusCode, code)
	}
}

// TestContentTypeMustBeJSON (issue 22, Content-Type): a POST with Content-Type text/plain
// (or none) gets 415 and nothing reaches the upstream, on the edge's own methods and on
// go-sdk's; application/json with parameters is served; Accept stays lenient.
func TestContentTypeMustBeJSON(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	path := "/mcp/" + e.ws
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mcp_` + e.handle + `_echo","arguments":{"message":"ct"}}}`
	bodies := []string{call, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":7,"method":"ping"}`}
	for _, ct := range []string{"text/plain", "text/plain; charset=utf-8", "", "application/x-www-form-urlencoded", "application/jsonx", "json"} {
		for _, body := range bodies {
			before := e.up.CountRequests("POST", `"tools/call"`)
			resp, b := e.env.RPC(t, path, e.admin, body, map[string]string{"Content-Type": ct, "Mcp-Protocol-Version": "2025-11-25"})
			if resp.StatusCode != http.StatusUnsupportedMediaType {
				t.Errorf("Content-Type %q: %d, want 415 (%.200s)", ct, resp.StatusCode, b)
			}
			if e.up.CountRequests("POST", `"tools/call"`) != before {
				t.Errorf("Content-Type %q: the call reached the upstream", ct)
			}
		}
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"} {
		for _, accept := range []string{"application/json", "*/*", "-"} {
			for _, body := range bodies {
				req := map[string]string{"Content-Type": ct, "Mcp-Protocol-Version": "2025-11-25"}
				if accept != "-" {
					req["Accept"] = accept
				}
				resp, b := e.env.RPC(t, path, e.admin, body, req)
				if resp.StatusCode != 200 || !strings.Contains(string(b), `"result"`) {
					t.Errorf("Content-Type %q Accept %q: %d %.200s", ct, accept, resp.StatusCode, b)
				}
			}
		}
	}
}

// TestSingleServerSetLevel (issue 22, smaller): logging/setLevel on the single-server
// endpoint of an upstream that did not declare logging is -32601 (method not found), and
// nothing is sent upstream; the aggregate endpoint, which declares logging, answers it.
func TestSingleServerSetLevel(t *testing.T) {
	t.Parallel()
	bundle := setup(t, "Level", "Level") // its raw upstream declares {"tools":{},"resources":{}}
	env, ws, admin, up, c := bundle.env, bundle.ws, bundle.admin, bundle.up, bundle.conn
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	body := `{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"debug"}}`
	before := len(up.Received(""))
	resp, b := env.RPC(t, "/mcp/"+ws+"/servers/"+c.ID, admin, body, hdr)
	if id, code := rpcError(t, b); resp.StatusCode != 200 || id != "9" || code != -32601 {
		t.Errorf("single-server setLevel: %d id %s code %d, want 200 id 9 -32601: %s", resp.StatusCode, id, code, b)
	}
	if n := len(up.Received("")) - before; n != 0 {
		t.Errorf("%d messages reached the upstream", n)
	}
	resp, b = env.RPC(t, "/mcp/"+ws, admin, body, hdr)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"result"`) {
		t.Errorf("aggregate setLevel: %d %s", resp.StatusCode, b)
	}
}

// forgetfulUpstream is a stateful MCP upstream (the demo server, go-sdk's handler with
// sessions) that, once forget is set, answers every tools/call carrying an Mcp-Session-Id
// with HTTP 404 and the TypeScript SDK's {"error":{"code":-32001,"message":"Session not
// found"},"id":null}: a session that keeps answering 404, however often it is renewed.
type forgetfulUpstream struct {
	URL         string
	forget      atomic.Bool
	initializes atomic.Int32
	refused     atomic.Int32
}

func newForgetfulUpstream(t *testing.T) *forgetfulUpstream {
	u := &forgetfulUpstream{}
	srv := demoupstream.NewServer(nil)
	h, err := demoupstream.NewHandler(srv, testpeer.ModeStateful)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"initialize"`)) {
			u.initializes.Add(1)
		}
		if u.forget.Load() && r.Header.Get("Mcp-Session-Id") != "" && bytes.Contains(body, []byte(`"method":"tools/call"`)) {
			u.refused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		s.Close()
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	u.URL = s.URL + "/mcp"
	return u
}

// TestSessionKeepsAnswering404 (issue 22, stateful upstreams): a proxied call on a session
// that keeps answering 404 is retried once on a new session and then ends as an isError
// tool result naming the connection — not the upstream's -32001 relayed as a JSON-RPC
// error.
func TestSessionKeepsAnswering404(t *testing.T) {
	t.Parallel()
	up := newForgetfulUpstream(t)
	bundle := setupWith(t, "Forgetful", "Forgetful Server", up.URL)
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	call := `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"mcp_` + c.Handle + `_echo","arguments":{"message":"m"}}}`
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	resp, b := env.RPC(t, "/mcp/"+ws, admin, call, hdr)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Echo: m") {
		t.Fatalf("first call: %d %s", resp.StatusCode, b)
	}
	before := up.initializes.Load()
	up.forget.Store(true)
	resp, b = env.RPC(t, "/mcp/"+ws, admin, call, hdr)
	var m struct {
		ID     json.RawMessage
		Error  json.RawMessage
		Result struct {
			IsError bool
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || m.Error != nil || !m.Result.IsError || string(m.ID) != "11" {
		t.Fatalf("want an isError result under id 11: %d %s", resp.StatusCode, b)
	}
	if len(m.Result.Content) == 0 || !strings.Contains(m.Result.Content[0].Text, "Forgetful Server") {
		t.Errorf("the result does not name the connection: %s", b)
	}
	if strings.Contains(string(b), "-32001") {
		t.Errorf("the upstream's -32001 leaked: %s", b)
	}
	if n := up.initializes.Load() - before; n != 1 {
		t.Errorf("%d re-initializes, want 1", n)
	}
	if n := up.refused.Load(); n != 2 {
		t.Errorf("%d refused calls, want 2 (the call and its one retry)", n)
	}
}

// TestRoutingHeaders (issue 22, headers): at 2026-07-28 the edge decodes a Base64
// Mcp-Name (=?base64?…?=) before comparing it with the body — for a proxied tool and for a
// built-in go-sdk serves —, checks the Mcp-Param-* headers of a proxied tool's
// x-mcp-header parameters against the arguments (decoded; 400 / -32020 and nothing
// upstream on a mismatch), and the upstream hop mirrors those parameters into Mcp-Param-*
// headers, Base64 where the value needs it; the upstream (go-sdk, which refuses a call whose
// headers do not match) serves the call.
func TestRoutingHeaders(t *testing.T) {
	t.Parallel()
	up := testpeer.NewHeaderUpstream(t)
	bundle := setupWith(t, "Headers", "Headers", up.URL)
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	path := "/mcp/" + ws
	tool := "mcp_" + c.Handle + "_" + testpeer.HeaderToolASCII
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	args := `{"region":"Zürich","count":3,"dry":true,"where":{"city":"Bern"},"query":"q"}`
	body := `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":` + metaParams("2026-07-28", `"name":"`+tool+`","arguments":`+args) + `}`
	good := func() map[string]string {
		h := newEraHeaders("2026-07-28", "tools/call", b64(tool))
		h["Mcp-Param-Region"] = b64("Zürich")
		h["Mcp-Param-Count"] = "3"
		h["Mcp-Param-Dry"] = "true"
		h["Mcp-Param-City"] = "Bern"
		return h
	}
	resp, b := env.RPC(t, path, admin, body, good())
	if resp.StatusCode != 200 || !strings.Contains(string(b), "ok "+testpeer.HeaderToolASCII) || strings.Contains(string(b), `"isError":true`) {
		t.Fatalf("call with a Base64 Mcp-Name: %d %s", resp.StatusCode, b)
	}
	calls := up.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls upstream, want 1", len(calls))
	}
	want := map[string]string{"Mcp-Param-Region": b64("Zürich"), "Mcp-Param-Count": "3", "Mcp-Param-Dry": "true", "Mcp-Param-City": "Bern"}
	if got := testpeer.ParamHeaders(calls[0]); !maps.Equal(got, want) {
		t.Errorf("upstream got Mcp-Param headers %v, want %v", got, want)
	}
	if got := calls[0].Get("Mcp-Name"); got != testpeer.HeaderToolASCII {
		t.Errorf("upstream got Mcp-Name %q", got)
	}
	for _, tc := range []struct {
		name string
		edit func(h map[string]string)
	}{
		{"Mcp-Param value differs", func(h map[string]string) { h["Mcp-Param-Count"] = "4" }},
		{"Mcp-Param compared undecoded", func(h map[string]string) { h["Mcp-Param-Region"] = "Zurich" }},
		{"Mcp-Param missing", func(h map[string]string) { delete(h, "Mcp-Param-Dry") }},
		{"Mcp-Name of another tool", func(h map[string]string) { h["Mcp-Name"] = b64(tool + "x") }},
		{"Mcp-Name invalid Base64", func(h map[string]string) { h["Mcp-Name"] = "=?base64?%%%?=" }},
	} {
		h := good()
		tc.edit(h)
		resp, b := env.RPC(t, path, admin, body, h)
		id, code := rpcError(t, b)
		if resp.StatusCode != http.StatusBadRequest || code != -32020 || id != "21" {
			t.Errorf("%s: %d id %s code %d, want 400 id 21 -32020: %s", tc.name, resp.StatusCode, id, code, b)
		}
		if strings.Contains(string(b), "Zürich") || strings.Contains(string(b), "Bern") {
			t.Errorf("%s: the answer quotes a header value: %s", tc.name, b)
		}
	}
	if n := len(up.Calls()); n != 1 {
		t.Errorf("%d calls upstream after the refusals, want still 1", n)
	}
	// A built-in (served by go-sdk) with its name Base64-encoded.
	bodyB := `{"jsonrpc":"2.0","id":22,"method":"tools/call","params":` + metaParams("2026-07-28", `"name":"agentpack_catalog_list","arguments":{}`) + `}`
	resp, b = env.RPC(t, path, admin, bodyB, newEraHeaders("2026-07-28", "tools/call", b64("agentpack_catalog_list")))
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"result"`) {
		t.Errorf("built-in with a Base64 Mcp-Name: %d %.300s", resp.StatusCode, b)
	}
}

// TestRawNonASCIIMcpName (issue 34): at 2026-07-28 a header value that is not plain ASCII
// must be sent Base64-encoded (transport chapter, "Value Encoding"). A call of the
// upstream's tool "météo" whose Mcp-Name carries the name's raw UTF-8 bytes — equal to the
// body's name byte for byte — is refused 400 / -32020 (the single-server endpoint, where
// the name is the upstream's), and nothing reaches the upstream; the same call with the
// name Base64-encoded is served. A raw non-ASCII Mcp-Param-* value equal to its argument is
// refused the same way on both endpoints.
func TestRawNonASCIIMcpName(t *testing.T) {
	t.Parallel()
	up := testpeer.NewHeaderUpstream(t)
	bundle := setupWith(t, "Raw names", "Headers", up.URL)
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	// The aggregate endpoint's name of the tool, as its tools/list shows it.
	resp, b := env.RPC(t, "/mcp/"+ws, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":`+metaParams("2026-07-28", "")+`}`,
		newEraHeaders("2026-07-28", "tools/list", ""))
	var listed struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(resultOf(t, resp, b), &listed); err != nil {
		t.Fatal(err)
	}
	aggName := ""
	for _, tl := range listed.Tools {
		if strings.HasPrefix(tl.Name, "mcp_"+c.Handle+"_") && tl.Name != "mcp_"+c.Handle+"_"+testpeer.HeaderToolASCII {
			aggName = tl.Name
		}
	}
	if aggName == "" {
		t.Fatalf("the Unicode tool is not listed: %s", b)
	}
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	args := `{"region":"Zürich","count":1,"dry":false,"where":{"city":"Bern"},"query":"q"}`
	params := func(h map[string]string) map[string]string {
		h["Mcp-Param-Region"], h["Mcp-Param-Count"], h["Mcp-Param-Dry"], h["Mcp-Param-City"] = b64("Zürich"), "1", "false", "Bern"
		return h
	}
	for _, ep := range []struct{ name, path, tool string }{
		{"aggregate", "/mcp/" + ws, aggName},
		{"single-server", "/mcp/" + ws + "/servers/" + c.ID, testpeer.HeaderToolUnicode},
	} {
		t.Run(ep.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":` + metaParams("2026-07-28", `"name":"`+ep.tool+`","arguments":`+args) + `}`
			before := len(up.Calls())
			for _, tc := range []struct {
				name string
				hdr  map[string]string
			}{
				{"raw UTF-8 Mcp-Name", params(newEraHeaders("2026-07-28", "tools/call", ep.tool))},
				{"raw UTF-8 Mcp-Param", func() map[string]string {
					h := params(newEraHeaders("2026-07-28", "tools/call", b64(ep.tool)))
					h["Mcp-Param-Region"] = "Zürich" // the argument's bytes, not encoded
					return h
				}()},
			} {
				if tc.name == "raw UTF-8 Mcp-Name" && ep.tool == aggName {
					continue // the aggregate's names are ASCII (names.Exposed): nothing to encode
				}
				resp, b := env.RPC(t, ep.path, admin, body, tc.hdr)
				id, code := rpcError(t, b)
				if resp.StatusCode != http.StatusBadRequest || code != -32020 || id != "31" {
					t.Errorf("%s: %d id %s code %d, want 400 id 31 -32020: %s", tc.name, resp.StatusCode, id, code, b)
				}
				if n := len(up.Calls()); n != before {
					t.Errorf("%s: %d calls reached the upstream", tc.name, n-before)
				}
			}
			resp, b := env.RPC(t, ep.path, admin, body, params(newEraHeaders("2026-07-28", "tools/call", b64(ep.tool))))
			if resp.StatusCode != 200 || !strings.Contains(string(b), "ok "+testpeer.HeaderToolUnicode) {
				t.Fatalf("call with the name Base64-encoded: %d %s", resp.StatusCode, b)
			}
			calls := up.Calls()
			if len(calls) != before+1 || calls[len(calls)-1].Get("Mcp-Name") != b64(testpeer.HeaderToolUnicode) {
				t.Errorf("upstream calls %d (want %d), last Mcp-Name %q", len(calls), before+1, calls[len(calls)-1].Get("Mcp-Name"))
			}
		})
	}
}
