package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/mcp/gateway"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
)

// outcomeToolsList is an upstream whose tools end every way a proxied call can: fine
// answers a result, broken a result with isError: true, refusing a JSON-RPC error, and slow
// (called with delayMs past the gateway's budget) nothing in time.
const outcomeToolsList = `{"tools":[
 {"name":"fine","inputSchema":{"type":"object"}},
 {"name":"broken","inputSchema":{"type":"object"}},
 {"name":"refusing","inputSchema":{"type":"object"}},
 {"name":"slow","inputSchema":{"type":"object"}}]}`

// TestUsageCountsFailedCalls: every proxied call that went upstream is one audit row with
// its outcome and one call on the Usage page, and every outcome but ok is one error there —
// an isError result, a JSON-RPC error, a timeout and an unreachable upstream, through real
// upstreams on loopback and the real audit writer and rollup (migrations 00045, 00046).
func TestUsageCountsFailedCalls(t *testing.T) {
	t.Parallel()
	env := stacktest.New(t, &stacktest.Options{Stack: &stack.Options{Gateway: func(g *gateway.Options) { g.CallTimeout = 2 * time.Second }}})
	ws, _, _ := env.Workspace(t, "Usage")
	admin := stacktest.Token(t, "alice", auth.RoleAdmin, ws)
	up := testpeer.NewRawUpstream(t, false)
	up.ToolsList = outcomeToolsList
	up.CallResults = map[string]string{"broken": `{"content":[{"type":"text","text":"no such issue"}],"isError":true}`}
	up.CallErrors = map[string]string{"refusing": `{"code":-32602,"message":"unknown argument"}`}
	c := env.Connection(t, stacktest.Admin("alice", ws), connections.CreateInput{Name: "Tracker", URL: up.URL, WorkspaceID: &ws}).Connection
	dead := testpeer.NewRawUpstream(t, false)
	dc := env.Connection(t, stacktest.Admin("alice", ws), connections.CreateInput{Name: "Dead", URL: dead.URL, WorkspaceID: &ws}).Connection
	dead.Server.Close()

	tool := func(name string) string { return "mcp_" + c.Handle + "_" + name }
	deadTool := "mcp_" + dc.Handle + "_report"
	call := func(name, args string) string {
		t.Helper()
		resp, raw := env.RPC(t, "/mcp/"+ws, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", name, resp.StatusCode, raw)
		}
		return string(raw)
	}
	cases := []struct {
		tool, args, answer, outcome string
		errors                      int
	}{
		{tool("fine"), `{}`, `"result"`, "ok", 0},
		{tool("broken"), `{}`, `"isError":true`, "tool_error", 1},
		{tool("refusing"), `{}`, `"code":-32602`, "rpc_error", 1},
		{tool("slow"), `{"delayMs":30000}`, "UPSTREAM_TIMEOUT", "timeout", 1},
		{deadTool, `{"q":"x"}`, "UPSTREAM_UNAVAILABLE", "unavailable", 1},
	}
	for _, k := range cases {
		if raw := call(k.tool, k.args); !strings.Contains(raw, k.answer) || (k.outcome == "ok" && strings.Contains(raw, `"isError":true`)) {
			t.Errorf("%s: answer %s, want %s", k.tool, raw, k.answer)
		}
	}
	env.FlushAudit(t)

	rows, err := db.AuditEventList(t.Context(), env.Pool, ws, 50)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string][]string{}
	for _, r := range rows {
		outcomes[r.Tool] = append(outcomes[r.Tool], r.Kind+"/"+r.Outcome)
	}
	status, out := env.Do(t, "GET", "/api/usage?workspaceId="+ws+"&by=tool&window=24h", admin, nil)
	var u struct{ Rows []usageRow }
	if status != 200 || json.Unmarshal(out, &u) != nil {
		t.Fatalf("usage: %d %s", status, out)
	}
	usage := map[string]usageRow{}
	for _, r := range u.Rows {
		usage[r.Key] = r
	}
	for _, k := range cases {
		if got := outcomes[k.tool]; len(got) != 1 || got[0] != "proxied/"+k.outcome {
			t.Errorf("%s: audit rows %v, want one proxied/%s", k.tool, got, k.outcome)
		}
		if r := usage[k.tool]; r.Calls != 1 || r.Errors != k.errors {
			t.Errorf("%s: usage %+v, want 1 call and %d errors", k.tool, r, k.errors)
		}
	}
	if r := usage[tool("fine")]; r.P50Ms == nil {
		t.Errorf("fine: no latency: %+v", r)
	}
	if len(usage) != len(cases) {
		t.Errorf("usage rows %+v, want one per tool", usage)
	}
}
