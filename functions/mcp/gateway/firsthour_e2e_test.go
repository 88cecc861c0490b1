package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
)

// rpcMessage is the error code and message of a JSON-RPC error answer ("" when none).
func rpcMessage(t *testing.T, b []byte) (int, string) {
	t.Helper()
	var m struct {
		Error *struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %s", b)
	}
	return m.Error.Code, m.Error.Message
}

// TestUnknownVersionAnswer (issue 34, item 4): any MCP-Protocol-Version the gateway does
// not know — a future date, a word, an old date — with or without _meta, gets 400 with
// UnsupportedProtocolVersionError (-32022), "Unsupported protocol version (supported
// versions: …)" and data.supported, under the request's id; never "-32602 missing _meta".
// Nothing reaches the upstream.
func TestUnknownVersionAnswer(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	echo := "mcp_" + e.handle + "_echo"
	for _, v := range []string{"2099-01-01", "banana", "2024-01-01"} {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"` + echo + `","arguments":{"message":"v"}}}`,
			`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":` + metaParams(v, "") + `}`,
		} {
			before := e.up.CountRequests("POST", `"tools/call"`)
			resp, b := e.env.RPC(t, "/mcp/"+e.ws, e.admin, body, map[string]string{"Mcp-Protocol-Version": v})
			code, msg := rpcMessage(t, b)
			id, _ := rpcError(t, b)
			if resp.StatusCode != http.StatusBadRequest || code != -32022 || id != "9" ||
				!strings.Contains(msg, "Unsupported protocol version") || !strings.Contains(msg, "(supported versions: ") ||
				!strings.Contains(msg, "2025-11-25") || strings.Contains(msg, "_meta") {
				t.Errorf("%s %s: %d %s", v, body, resp.StatusCode, b)
			}
			var d struct {
				Error struct {
					Data struct {
						Supported []string
						Requested string
					}
				}
			}
			if json.Unmarshal(b, &d) != nil || d.Error.Data.Requested != v || len(d.Error.Data.Supported) == 0 {
				t.Errorf("%s: data %s", v, b)
			}
			if n := e.up.CountRequests("POST", `"tools/call"`) - before; n != 0 {
				t.Errorf("%s: %d calls reached the upstream", v, n)
			}
		}
	}
}

// TestUnknownToolSuggests (issue 34, item 6): a tools/call of a tool that does not exist
// answers -32602 `unknown tool "…"` with the next step: `did you mean "…"?` for a prefix
// (mcp_<handle>_ech) or a near miss (a transposition), else a pointer at
// agentpack_tools_search on the aggregate endpoint; on the single-server endpoint the
// suggestion is among that server's tools. Nothing reaches the upstream.
func TestUnknownToolSuggests(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	echo := "mcp_" + e.handle + "_echo"
	v := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	call := func(path, name string) (int, string) {
		t.Helper()
		before := e.up.CountRequests("POST", `"tools/call"`)
		_, b := e.env.RPC(t, path, e.admin, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`, v)
		if n := e.up.CountRequests("POST", `"tools/call"`) - before; n != 0 {
			t.Errorf("%s: %d calls reached the upstream", name, n)
		}
		return rpcMessage(t, b)
	}
	agg := "/mcp/" + e.ws
	for _, tc := range []struct{ path, name, want string }{
		{agg, "mcp_" + e.handle + "_ech", `unknown tool "mcp_` + e.handle + `_ech"; did you mean "` + echo + `"?`},
		{agg, "mcp_" + e.handle + "_ecoh", `did you mean "` + echo + `"?`},
		{agg, "agentpack_tools_serch", `did you mean "agentpack_tools_search"?`},
		{agg, "zz_nothing_like_any_tool", "call agentpack_tools_search to find the tool you need"},
		{agg + "/servers/" + e.connID, "ech", `unknown tool "ech"; did you mean "echo"?`},
		{agg + "/servers/" + e.connID, "zz_nothing_like_any_tool", "tools/list names every tool of this server"},
	} {
		code, msg := call(tc.path, tc.name)
		if code != -32602 || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: %d %q, want %q", tc.path, tc.name, code, msg, tc.want)
		}
	}
	// The exact name is still served.
	_, b := e.env.RPC(t, agg, e.admin, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"`+echo+`","arguments":{"message":"hi"}}}`, v)
	if !strings.Contains(string(b), `"result"`) {
		t.Errorf("exact name: %s", b)
	}
	// go-sdk's per-request Info lines (issue 34, item 7) stay out of the log; the access
	// lines are there.
	if logs := e.env.Logs.String(); strings.Contains(logs, "server connecting") || strings.Contains(logs, "session initialized") ||
		!strings.Contains(logs, "tools/call") {
		t.Errorf("logs:\n%.3000s", logs)
	}
}

// TestAuthErrorsSayWhatToDo (issue 34, item 5): a refused token's 401 says whether it
// expired (and when) or is invalid (and why), in the JSON-RPC message and in
// WWW-Authenticate as RFC 6750 error="invalid_token" with error_description; a missing
// token's challenge carries no error code (RFC 6750 §3.1). A token without access to the
// workspace gets 403 naming the workspaces it does carry and the endpoint URL to use.
func TestAuthErrorsSayWhatToDo(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	exp := time.Now().Add(-time.Hour).Truncate(time.Second)
	expired, err := auth.Mint(stacktest.Secret, auth.Principal{Subject: "alice", Role: auth.RoleAdmin, Workspaces: []string{e.ws}}, time.Until(exp))
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := auth.Mint("another-secret", auth.Principal{Subject: "alice", Role: auth.RoleAdmin, Workspaces: []string{e.ws}}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	v := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	for _, tc := range []struct{ name, token, want string }{
		{"expired", expired, "token expired at " + exp.UTC().Format(time.RFC3339)},
		{"not a JWT", "banana", "invalid token: not a JWT"},
		{"another secret", foreign, "invalid token: its signature does not verify"},
	} {
		resp, b := e.env.RPC(t, "/mcp/"+e.ws, tc.token, list, v)
		wa := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), tc.want) ||
			!strings.Contains(wa, `error="invalid_token"`) || !strings.Contains(wa, `error_description="`+tc.want) ||
			!strings.Contains(wa, `resource_metadata="`) {
			t.Errorf("%s: %d %q %s", tc.name, resp.StatusCode, wa, b)
		}
		if tc.name != "expired" && strings.Contains(string(b), "expired") {
			t.Errorf("%s: called expired: %s", tc.name, b)
		}
	}
	resp, b := e.env.RPC(t, "/mcp/"+e.ws, "", list, v)
	if wa := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || strings.Contains(wa, "error=") {
		t.Errorf("missing token: %d %q %s", resp.StatusCode, wa, b)
	}
	// Another workspace: the token's own workspace and the URL to use.
	other, _, _ := e.env.Workspace(t, "Other")
	resp, b = e.env.RPC(t, "/mcp/"+other, e.admin, list, v)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "no access to workspace "+other+": this token is for workspace "+e.ws) ||
		!strings.Contains(string(b), "; use "+e.env.URL+"/mcp/"+e.ws) {
		t.Errorf("other workspace: %d %s", resp.StatusCode, b)
	}
	two := stacktest.Token(t, "bob", auth.RoleAdmin, e.ws, other)
	third, _, _ := e.env.Workspace(t, "Third")
	resp, b = e.env.RPC(t, "/mcp/"+third, two, list, v)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "this token is for workspaces ") ||
		!strings.Contains(string(b), e.ws) || !strings.Contains(string(b), other) {
		t.Errorf("a token of two workspaces: %d %s", resp.StatusCode, b)
	}
}
