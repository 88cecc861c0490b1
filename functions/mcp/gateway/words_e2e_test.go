package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
)

// jsonRPCErr is a JSON-RPC error answer as the gateway writes it.
type jsonRPCErr struct {
	Error *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestOneNamePerTool (issue 44): a tool called on the aggregate endpoint (its exposed name)
// and on the single-server endpoint (the upstream's name) is one tool: one audit name, one
// row on the Usage page with both calls, and a rate limit on the exposed name holds on
// both endpoints.
func TestOneNamePerTool(t *testing.T) {
	t.Parallel()
	bundle := setupWorkspace(t, "One name")
	env, ws, admin := bundle.env, bundle.ws, bundle.admin
	up := testpeer.NewRawUpstream(t, false)
	up.ToolsList = `{"tools":[{"name":"fine","inputSchema":{"type":"object"}},{"name":"capped","inputSchema":{"type":"object"}}]}`
	c := bundle.install(t, "Tracker", up.URL)
	exposed := func(n string) string { return "mcp_" + c.Handle + "_" + n }
	call := func(path, name string) string {
		t.Helper()
		resp, raw := env.RPC(t, path, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", path, name, resp.StatusCode, raw)
		}
		return string(raw)
	}
	single := "/mcp/" + ws + "/servers/" + c.Handle
	call("/mcp/"+ws, exposed("fine"))
	call(single, "fine")
	call(single, "fine")

	perDay := 1
	if status, out := env.Do(t, "POST", "/api/rate-limits", admin, map[string]any{"workspaceId": ws, "tool": exposed("capped"), "perDay": perDay}); status != 201 {
		t.Fatalf("rate limit: %d %s", status, out)
	}
	if raw := call("/mcp/"+ws, exposed("capped")); strings.Contains(raw, "RATE_LIMITED") {
		t.Fatalf("first call refused: %s", raw)
	}
	if raw := call(single, "capped"); !strings.Contains(raw, "RATE_LIMITED") {
		t.Errorf("the single-server call of a tool whose daily limit is spent on the aggregate was not refused: %s", raw)
	}
	env.FlushAudit(t)

	rows, err := db.AuditEventList(t.Context(), env.Pool, ws, 50)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, r := range rows {
		names[r.Tool]++
	}
	if names[exposed("fine")] != 3 || names["fine"] != 0 {
		t.Errorf("audit names %v, want %s three times and no %q", names, exposed("fine"), "fine")
	}
	status, out := env.Do(t, "GET", "/api/usage?workspaceId="+ws+"&by=tool&window=24h", admin, nil)
	var u struct{ Rows []usageRow }
	if status != 200 || json.Unmarshal(out, &u) != nil {
		t.Fatalf("usage: %d %s", status, out)
	}
	for _, r := range u.Rows {
		if r.Key == "fine" || (r.Key == exposed("fine") && r.Calls != 3) {
			t.Errorf("usage %+v: want one row %s with 3 calls", u.Rows, exposed("fine"))
		}
	}
}

// TestMCPPathErrorsAreJSON (issue 44): a trailing slash (or any other unknown path under
// /mcp/) answers 404 with a JSON-RPC error that names the endpoint, never the mux's
// plain-text "404 page not found", and is not served as the endpoint (an MCP URL is its
// OAuth resource identifier; "/mcp/x/" is another resource).
func TestMCPPathErrorsAreJSON(t *testing.T) {
	t.Parallel()
	bundle := setup(t, "Slashes", "Tracker")
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	for _, k := range []struct{ path, want string }{
		{"/mcp/", "remove the trailing slash (the endpoint is " + env.URL + "/mcp)"},
		{"/mcp/" + ws + "/", "remove the trailing slash (the endpoint is " + env.URL + "/mcp/" + ws + ")"},
		{"/mcp/" + ws + "/servers/" + c.Handle + "/", "remove the trailing slash (the endpoint is " + env.URL + "/mcp/" + ws + "/servers/" + c.Handle + ")"},
		{"/mcp/" + ws + "/tools", "the endpoints are /mcp, /mcp/{workspaceId} and /mcp/{workspaceId}/servers/{handle}"},
	} {
		resp, raw := env.RPC(t, k.path, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
		var e jsonRPCErr
		if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal(raw, &e) != nil || e.Error == nil || e.Error.Code != -32600 {
			t.Errorf("%s: %d %s %s, want 404 with a JSON-RPC -32600", k.path, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
			continue
		}
		if !strings.Contains(e.Error.Message, k.want) {
			t.Errorf("%s: message %q, want it to contain %q", k.path, e.Error.Message, k.want)
		}
	}
}

// TestUnknownServerListsHandles (issue 44): /mcp/{ws}/servers/<unknown> answers 404 naming
// the handles of the caller's workspace, and none of another workspace's.
func TestUnknownServerListsHandles(t *testing.T) {
	t.Parallel()
	env := stacktest.New(t, nil)
	wsA, _, _ := env.Workspace(t, "Mine")
	wsB, _, _ := env.Workspace(t, "Theirs")
	empty, _, _ := env.Workspace(t, "Empty")
	up := testpeer.NewRawUpstream(t, false)
	a1 := env.Connection(t, stacktest.Admin("alice", wsA), connections.CreateInput{Name: "Issue tracker", URL: up.URL, WorkspaceID: &wsA}).Connection
	a2 := env.Connection(t, stacktest.Admin("alice", wsA), connections.CreateInput{Name: "Wiki", URL: up.URL, WorkspaceID: &wsA}).Connection
	b := env.Connection(t, stacktest.Admin("bob", wsB), connections.CreateInput{Name: "Secret payroll", URL: up.URL, WorkspaceID: &wsB}).Connection
	msg := func(ws, handle string) string {
		t.Helper()
		resp, raw := env.RPC(t, "/mcp/"+ws+"/servers/"+handle, stacktest.Token(t, "alice", auth.RoleAdmin, ws),
			`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
		var e jsonRPCErr
		if resp.StatusCode != 404 || json.Unmarshal(raw, &e) != nil || e.Error == nil {
			t.Fatalf("%s: %d %s, want 404 with a JSON-RPC error", handle, resp.StatusCode, raw)
		}
		return e.Error.Message
	}
	got := msg(wsA, b.Handle)
	for _, want := range []string{`no server "` + b.Handle + `"`, a1.Handle, a2.Handle, "/mcp/" + wsA + "/servers/<handle>"} {
		if !strings.Contains(got, want) {
			t.Errorf("message %q, want %q in it", got, want)
		}
	}
	if strings.Contains(got, "payroll") || strings.Count(got, b.Handle) != 1 {
		t.Errorf("message %q names another workspace's server", got)
	}
	if got := msg(empty, "nope"); !strings.Contains(got, "has no servers yet") {
		t.Errorf("empty workspace: %q", got)
	}
}
