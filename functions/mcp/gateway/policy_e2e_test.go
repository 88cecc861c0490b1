package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/google/uuid"
)

// policyToolsList is the upstream of the access-policy tests: a writing tool with task
// support and arguments, a read-only one, and one an override renames.
const policyToolsList = `{"tools":[
 {"name":"create_issue","inputSchema":{"type":"object","properties":{"project":{"type":"string"},"title":{"type":"string"}}},"execution":{"taskSupport":"optional"}},
 {"name":"read_issue","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}},"annotations":{"readOnlyHint":true}},
 {"name":"delete_issue","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}},"annotations":{"destructiveHint":true}}]}`

// policyEnv is a stack with policyToolsList's upstream installed in a workspace, its
// delete_issue renamed drop_issue by an override, and the tokens of an admin and a member.
type policyEnv struct {
	env                  *stacktest.Env
	ws, chat             string
	admin, member, super string
	handle               string
	up                   *testpeer.RawUpstream
}

func newPolicyEnv(t *testing.T) *policyEnv {
	t.Helper()
	env := stacktest.New(t, nil)
	ws, _, chat := env.Workspace(t, "Policies")
	e := &policyEnv{env: env, ws: ws, chat: chat,
		admin:  stacktest.Token(t, "alice", auth.RoleAdmin, ws),
		member: stacktest.Token(t, "mallory", auth.RoleMember, ws),
		super:  stacktest.Token(t, "root", auth.RoleSuperuser),
		up:     testpeer.NewRawUpstream(t, false)}
	e.up.ToolsList = policyToolsList
	c := env.Connection(t, stacktest.Admin("alice", ws), connections.CreateInput{Name: "Tracker", URL: e.up.URL, WorkspaceID: &ws}).Connection
	e.handle = c.Handle
	status, out := env.Do(t, "PUT", "/api/mcp-connections/"+c.ID+"/tools/delete_issue/override", e.admin,
		map[string]any{"workspaceId": ws, "name": "drop_issue"})
	if status != http.StatusCreated {
		t.Fatalf("override: %d %s", status, out)
	}
	return e
}

func (e *policyEnv) tool(name string) string { return "mcp_" + e.handle + "_" + name }

// putPolicies saves text as the workspace's document and returns the status and body.
func (e *policyEnv) putPolicies(t *testing.T, token, text string) (int, []byte) {
	t.Helper()
	return e.env.Do(t, "PUT", "/api/policies", token, map[string]any{"workspaceId": e.ws, "text": text})
}

// way is one way to call a tool: it sends the call of exposed (upstream name upstream) with
// args as token and returns the answer's result object (nil when there is none).
type way struct {
	name     string
	builtins bool // also a way to call a built-in
	send     func(t *testing.T, e *policyEnv, token, exposed, upstream, args string, hdr map[string]string) json.RawMessage
}

func (e *policyEnv) post(t *testing.T, path, token, body string, hdr map[string]string) json.RawMessage {
	t.Helper()
	resp, raw := e.env.RPC(t, path, token, body, hdr)
	var m struct{ Result json.RawMessage }
	if err := json.Unmarshal(raw, &m); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("%s: %d %s", path, resp.StatusCode, raw)
	}
	return m.Result
}

func with(hdr map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range hdr {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

const newEraMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":`

var ways = []way{
	{"direct", true, func(t *testing.T, e *policyEnv, token, exposed, _, args string, hdr map[string]string) json.RawMessage {
		return e.post(t, "/mcp/"+e.ws, token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+exposed+`","arguments":`+args+`}}`,
			with(hdr, "Mcp-Protocol-Version", "2025-11-25"))
	}},
	{"agentpack_tool_call", true, func(t *testing.T, e *policyEnv, token, exposed, _, args string, hdr map[string]string) json.RawMessage {
		return e.post(t, "/mcp/"+e.ws, token, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agentpack_tool_call","arguments":{"name":"`+exposed+`","arguments":`+args+`}}}`,
			with(hdr, "Mcp-Protocol-Version", "2025-11-25"))
	}},
	{"task 2025-11-25", true, func(t *testing.T, e *policyEnv, token, exposed, _, args string, hdr map[string]string) json.RawMessage {
		return e.post(t, "/mcp/"+e.ws, token, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"`+exposed+`","arguments":`+args+`,"task":{"ttl":60000}}}`,
			with(hdr, "Mcp-Protocol-Version", "2025-11-25"))
	}},
	{"2026-07-28", true, func(t *testing.T, e *policyEnv, token, exposed, _, args string, hdr map[string]string) json.RawMessage {
		return e.post(t, "/mcp/"+e.ws, token, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{`+newEraMeta+`{}},"name":"`+exposed+`","arguments":`+args+`}}`,
			with(hdr, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", exposed))
	}},
	{"2026-07-28 task extension", false, func(t *testing.T, e *policyEnv, token, exposed, _, args string, hdr map[string]string) json.RawMessage {
		return e.post(t, "/mcp/"+e.ws, token, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{`+newEraMeta+`{"extensions":{"io.modelcontextprotocol/tasks":{}}}},"name":"`+exposed+`","arguments":`+args+`}}`,
			with(hdr, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", exposed))
	}},
	{"single-server endpoint", false, func(t *testing.T, e *policyEnv, token, _, upstream, args string, hdr map[string]string) json.RawMessage {
		return e.post(t, "/mcp/"+e.ws+"/servers/"+e.handle, token, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"`+upstream+`","arguments":`+args+`}}`,
			with(hdr, "Mcp-Protocol-Version", "2025-11-25"))
	}},
}

// denied checks that res is the policy denial naming policy id, and returns its details.
func denied(t *testing.T, what string, res json.RawMessage, id string) {
	t.Helper()
	var r struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			OK    bool `json:"ok"`
			Error struct {
				Code    string `json:"code"`
				Details struct {
					Reason    string   `json:"reason"`
					PolicyIDs []string `json:"policyIds"`
				} `json:"details"`
			} `json:"error"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil || !r.IsError || r.StructuredContent.Error.Code != "FORBIDDEN" ||
		r.StructuredContent.Error.Details.Reason != "policy_denied" || !slices.Contains(r.StructuredContent.Error.Details.PolicyIDs, id) {
		t.Errorf("%s: not the denial of %s: %s", what, id, res)
	}
	if strings.Contains(string(res), "forbid(") || strings.Contains(string(res), "permit(") {
		t.Errorf("%s: the answer shows policy text: %s", what, res)
	}
}

// upstreamCalls counts the tools/call requests of upstream tool name the upstream got.
func (e *policyEnv) upstreamCalls(name string) int {
	n := 0
	for _, r := range e.up.Received("tools/call") {
		var p struct{ Name string }
		_ = json.Unmarshal(r.Params, &p)
		if p.Name == name {
			n++
		}
	}
	return n
}

// deniedRows counts the denied audit rows of a tool called by its exposed or (on the
// single-server endpoint) its upstream name: a row names the tool as the client called it.
// The gateway's queued audit rows are flushed first (they are written after the answer).
func (e *policyEnv) deniedRows(t *testing.T, exposed, upstream string) int {
	t.Helper()
	e.env.FlushAudit(t)
	var n int
	if err := e.env.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE workspace_id = $1 AND kind = 'denied' AND tool IN ($2, $3)`, e.ws, exposed, upstream).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// listNames is tools/list's tool names for token on path.
func (e *policyEnv) listNames(t *testing.T, path, token string, hdr map[string]string) []string {
	t.Helper()
	res := e.post(t, path, token, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, with(hdr, "Mcp-Protocol-Version", "2025-11-25"))
	var l struct{ Tools []struct{ Name string } }
	_ = json.Unmarshal(res, &l)
	var out []string
	for _, tl := range l.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// TestAccessPoliciesEveryWay: for each kind of policy — members read-only, an argument
// allow-list, a renamed tool, a chat that may read but not write, a built-in withheld from
// members, a tool hidden from members' lists — the call is sent every way the gateway
// takes one (direct, agentpack_tool_call, a 2025-11-25 task, 2026-07-28 with and without the
// tasks extension, the single-server endpoint) and each answers the FORBIDDEN isError
// result naming the policy, with an audit row per denial and nothing reaching the upstream;
// the same call by a caller the policies allow does reach it.
func TestAccessPoliciesEveryWay(t *testing.T) {
	t.Parallel()
	e := newPolicyEnv(t)
	doc := `// base: everything the roles allow
@id("base") permit(principal, action, resource);
@id("members-read-only") forbid(principal in Role::"member", action == Action::"call", resource is Tool) unless { resource.readOnly };
@id("alpha-only") forbid(principal, action == Action::"call", resource == Tool::"` + e.tool("create_issue") + `")
  unless { context.arguments has project && ["alpha"].contains(context.arguments.project) };
@id("no-drop") forbid(principal, action == Action::"call", resource == Tool::"drop_issue");
@id("chat-reads") forbid(principal, action == Action::"call", resource) when { context.chat == "` + e.chat + `" && !resource.readOnly };
@id("members-no-catalog") forbid(principal in Role::"member", action, resource == Builtin::"agentpack_catalog_list");
@id("hide-read") forbid(principal in Role::"member", action == Action::"list", resource == Tool::"` + e.tool("read_issue") + `");`
	if status, out := e.putPolicies(t, e.admin, doc); status != http.StatusOK {
		t.Fatalf("save: %d %s", status, out)
	}
	cases := []struct {
		name, policy      string
		token             string
		exposed, upstream string
		args              string
		hdr               map[string]string
		builtin           bool
		allowedToken      string // a caller the policies allow the same call ("" = none)
		allowedArgs       string
	}{
		{name: "members read-only", policy: "members-read-only", token: e.member, exposed: e.tool("create_issue"), upstream: "create_issue",
			args: `{"project":"alpha","title":"x"}`, allowedToken: e.admin},
		{name: "argument allow-list", policy: "alpha-only", token: e.admin, exposed: e.tool("create_issue"), upstream: "create_issue",
			args: `{"project":"beta","title":"x"}`, allowedToken: e.admin, allowedArgs: `{"project":"alpha","title":"x"}`},
		{name: "renamed tool", policy: "no-drop", token: e.admin, exposed: "drop_issue", upstream: "delete_issue", args: `{"id":"1"}`},
		{name: "chat reads only", policy: "chat-reads", token: e.admin, exposed: e.tool("create_issue"), upstream: "create_issue",
			args: `{"project":"alpha"}`, hdr: map[string]string{"X-Chat-Id": e.chat}, allowedToken: e.admin},
		{name: "built-in", policy: "members-no-catalog", token: e.member, exposed: "agentpack_catalog_list", args: `{}`, builtin: true, allowedToken: e.admin},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, rows := e.upstreamCalls(c.upstream), e.deniedRows(t, c.exposed, c.upstream)
			sent := 0
			for _, w := range ways {
				if c.builtin && !w.builtins {
					continue
				}
				if w.name == "single-server endpoint" && c.hdr != nil {
					continue // a chat is an aggregate-endpoint notion
				}
				denied(t, w.name, w.send(t, e, c.token, c.exposed, c.upstream, c.args, c.hdr), c.policy)
				sent++
			}
			if !c.builtin {
				if n := e.upstreamCalls(c.upstream); n != before {
					t.Errorf("the upstream got %d calls of %s after denials", n-before, c.upstream)
				}
			}
			if n := e.deniedRows(t, c.exposed, c.upstream) - rows; n != sent {
				t.Errorf("%d denied audit rows for %d denials", n, sent)
			}
			if c.allowedToken == "" {
				return
			}
			args := c.args
			if c.allowedArgs != "" {
				args = c.allowedArgs
			}
			res := ways[0].send(t, e, c.allowedToken, c.exposed, c.upstream, args, nil)
			if strings.Contains(string(res), `"isError":true`) {
				t.Errorf("allowed caller refused: %s", res)
			}
			if !c.builtin && e.upstreamCalls(c.upstream) != before+1 {
				t.Errorf("the allowed call did not reach the upstream")
			}
		})
	}

	t.Run("list", func(t *testing.T) {
		member := e.listNames(t, "/mcp/"+e.ws, e.member, nil)
		admin := e.listNames(t, "/mcp/"+e.ws, e.admin, nil)
		for _, hidden := range []string{e.tool("read_issue"), "agentpack_catalog_list"} {
			if slices.Contains(member, hidden) || !slices.Contains(admin, hidden) {
				t.Errorf("%s: member sees it %v, admin %v", hidden, slices.Contains(member, hidden), slices.Contains(admin, hidden))
			}
		}
		if !slices.Contains(member, e.tool("create_issue")) {
			t.Errorf("member's list lacks a tool only its call is denied: %v", member)
		}
		search := func(token string) string {
			return string(ways[0].send(t, e, token, "agentpack_tools_search", "", `{"query":"read issue"}`, nil))
		}
		if m, a := search(e.member), search(e.admin); strings.Contains(m, e.tool("read_issue")) || !strings.Contains(a, e.tool("read_issue")) {
			t.Errorf("agentpack_tools_search: member %s\nadmin %s", m, a)
		}
		single := e.listNames(t, "/mcp/"+e.ws+"/servers/"+e.handle, e.member, nil)
		if slices.Contains(single, "read_issue") || !slices.Contains(single, "create_issue") {
			t.Errorf("single-server list for the member: %v", single)
		}
	})
}

// TestAccessPolicyREST: a document that does not parse or names an unknown tool or
// argument is refused 400 with line and column and nothing is stored; one that would lock
// every admin out of the policy API is refused 409; members may not read or write; the
// what-if pad answers the decision and its policy; a superuser's global document is
// decided first.
func TestAccessPolicyREST(t *testing.T) {
	t.Parallel()
	e := newPolicyEnv(t)
	type problem struct {
		Line, Column int
		Message      string
	}
	refused := func(status int, out []byte, want int, line int, msg string) {
		t.Helper()
		var b struct {
			Error struct {
				Code    string
				Message string
				Details struct{ Problems []problem }
			}
		}
		_ = json.Unmarshal(out, &b)
		if status != want {
			t.Fatalf("status %d, want %d: %s", status, want, out)
		}
		if line > 0 && (len(b.Error.Details.Problems) == 0 || b.Error.Details.Problems[0].Line != line ||
			b.Error.Details.Problems[0].Column < 1 || !strings.Contains(b.Error.Details.Problems[0].Message, msg)) {
			t.Fatalf("problems %+v, want line %d %q", b.Error.Details.Problems, line, msg)
		}
	}
	stored := func() string {
		t.Helper()
		status, out := e.env.Do(t, "GET", "/api/policies?workspaceId="+e.ws, e.admin, nil)
		if status != http.StatusOK {
			t.Fatalf("get: %d %s", status, out)
		}
		var v struct{ Text string }
		_ = json.Unmarshal(out, &v)
		return v.Text
	}
	base := "permit(principal, action, resource);\n"
	status, out := e.putPolicies(t, e.admin, base+"forbid(principal, action, resource)\n  when { context.arguments.project == };")
	refused(status, out, 400, 3, "syntax error")
	status, out = e.putPolicies(t, e.admin, base+`forbid(principal, action, resource == Tool::"`+e.tool("create_isue")+`");`)
	refused(status, out, 400, 2, "unknown tool")
	status, out = e.putPolicies(t, e.admin, base+`forbid(principal, action, resource == Tool::"`+e.tool("create_issue")+`")`+"\n"+`  when { context.arguments.projet == "x" };`)
	refused(status, out, 400, 3, "unknown argument")
	status, out = e.putPolicies(t, e.admin, `forbid(principal, action, resource) when { resource.destructive };`)
	refused(status, out, 409, 0, "")
	status, out = e.putPolicies(t, e.admin, base+`forbid(principal in Role::"admin", action, resource == Api::"policies");`)
	refused(status, out, 409, 0, "")
	if s := stored(); s != "" {
		t.Fatalf("a refused document was stored: %q", s)
	}
	if status, out := e.env.Do(t, "POST", "/api/policies/validate", e.admin, map[string]any{"workspaceId": e.ws, "text": base}); status != 200 {
		t.Fatalf("validate: %d %s", status, out)
	}
	status, _ = e.putPolicies(t, e.member, base)
	refused(status, nil, 403, 0, "")
	status, _ = e.env.Do(t, "GET", "/api/policies?workspaceId="+e.ws, e.member, nil)
	refused(status, nil, 403, 0, "")

	doc := base + `@id("members-read-only") forbid(principal in Role::"member", action == Action::"call", resource) unless { resource.readOnly };`
	if status, out := e.putPolicies(t, e.admin, doc); status != 200 {
		t.Fatalf("save: %d %s", status, out)
	}
	if stored() != doc {
		t.Fatalf("stored text differs")
	}
	whatIf := func(body map[string]any) (bool, []string) {
		t.Helper()
		body["workspaceId"] = e.ws
		status, out := e.env.Do(t, "POST", "/api/policies/what-if", e.admin, body)
		if status != 200 {
			t.Fatalf("what-if: %d %s", status, out)
		}
		var d struct {
			Allowed   bool
			PolicyIDs []string
		}
		_ = json.Unmarshal(out, &d)
		return d.Allowed, d.PolicyIDs
	}
	if ok, ids := whatIf(map[string]any{"subject": "m", "role": "member", "action": "call", "tool": e.tool("create_issue"), "arguments": map[string]any{"project": "a"}}); ok || !slices.Equal(ids, []string{"members-read-only"}) {
		t.Errorf("member what-if: %v %v", ok, ids)
	}
	if ok, _ := whatIf(map[string]any{"subject": "a", "role": "admin", "action": "call", "tool": e.tool("create_issue")}); !ok {
		t.Errorf("admin what-if denied")
	}
	if ok, ids := whatIf(map[string]any{"subject": "a", "role": "admin", "action": "call", "tool": e.tool("read_issue"),
		"text": base + `@id("x") forbid(principal, action, resource == Tool::"` + e.tool("read_issue") + `");`}); ok || ids[0] != "x" {
		t.Errorf("what-if with unsaved text: %v %v", ok, ids)
	}

	// The global document: superusers only; decided before the workspace's.
	status, _ = e.env.Do(t, "PUT", "/api/policies/global", e.admin, map[string]any{"text": base})
	refused(status, nil, 403, 0, "")
	status, out = e.env.Do(t, "PUT", "/api/policies/global", e.super, map[string]any{"text": `forbid(principal, action, resource);`})
	refused(status, out, 409, 0, "")
	if status, out := e.env.Do(t, "PUT", "/api/policies/global", e.super, map[string]any{"text": base +
		`@id("no-reads") forbid(principal, action == Action::"call", resource) when { resource.upstreamName == "read_issue" };`}); status != 200 {
		t.Fatalf("global: %d %s", status, out)
	}
	res := ways[0].send(t, e, e.admin, e.tool("read_issue"), "read_issue", `{"id":"1"}`, nil)
	denied(t, "global", res, "global/no-reads")
}

// TestRegistryImportListedToSuperusersOnly: the platform tool agentpack_registry_import is
// listed to superusers only, and an admin calling it by name gets FORBIDDEN.
func TestRegistryImportListedToSuperusersOnly(t *testing.T) {
	t.Parallel()
	e := newPolicyEnv(t)
	super := stacktest.Token(t, "root", auth.RoleSuperuser, e.ws)
	if names := e.listNames(t, "/mcp/"+e.ws, e.admin, nil); slices.Contains(names, "agentpack_registry_import") {
		t.Errorf("listed to an admin")
	}
	if names := e.listNames(t, "/mcp/"+e.ws, super, nil); !slices.Contains(names, "agentpack_registry_import") {
		t.Errorf("not listed to a superuser")
	}
	res := ways[0].send(t, e, e.admin, "agentpack_registry_import", "", `{"url":"http://127.0.0.1:1"}`, nil)
	if !strings.Contains(string(res), `"FORBIDDEN"`) || !strings.Contains(string(res), "superuser") {
		t.Errorf("admin call: %s", res)
	}
}

// TestUsage: after 50 proxied calls and 3 denied ones, GET /api/usage counts them per tool
// and per principal (the denials as errors, with latency percentiles of the others), and as
// CSV; a bad window is 400 and a member 403.
func TestUsage(t *testing.T) {
	t.Parallel()
	e := newPolicyEnv(t)
	read := e.tool("read_issue")
	for range 50 {
		if res := ways[0].send(t, e, e.admin, read, "read_issue", `{"id":"1"}`, nil); strings.Contains(string(res), `"isError":true`) {
			t.Fatalf("call: %s", res)
		}
	}
	if status, out := e.putPolicies(t, e.admin, `permit(principal, action, resource);
@id("no-create") forbid(principal, action == Action::"call", resource == Tool::"`+e.tool("create_issue")+`");`); status != 200 {
		t.Fatalf("save: %d %s", status, out)
	}
	for range 3 {
		denied(t, "usage", ways[0].send(t, e, e.admin, e.tool("create_issue"), "create_issue", `{}`, nil), "no-create")
	}
	e.env.FlushAudit(t)
	usage := e.usage
	tools := usage(t, "tool")
	if r := tools[read]; r.Calls != 50 || r.Errors != 0 || r.P50Ms == nil || r.P95Ms == nil || *r.P95Ms < *r.P50Ms {
		t.Errorf("read_issue: %+v", r)
	}
	if r := tools[e.tool("create_issue")]; r.Calls != 3 || r.Errors != 3 {
		t.Errorf("create_issue: %+v", r)
	}
	if r := usage(t, "principal")["alice"]; r.Calls != 53 || r.Errors != 3 {
		t.Errorf("alice: %+v", r)
	}
	status, out := e.env.Do(t, "GET", "/api/usage?workspaceId="+e.ws+"&by=tool&window=7d&format=csv", e.admin, nil)
	if status != 200 || !strings.HasPrefix(string(out), "tool,calls,errors,p50_ms,p95_ms\n") || !strings.Contains(string(out), read+",50,0,") {
		t.Errorf("csv: %d %s", status, out)
	}
	if status, _ := e.env.Do(t, "GET", "/api/usage?workspaceId="+e.ws+"&window=1y", e.admin, nil); status != 400 {
		t.Errorf("bad window: %d", status)
	}
	if status, out := e.env.Do(t, "GET", "/api/usage?workspaceId="+e.ws+"&by=chats", e.admin, nil); status != 400 || !strings.Contains(string(out), `"by"`) {
		t.Errorf("bad grouping: %d %s", status, out)
	}
	if status, _ := e.env.Do(t, "GET", "/api/usage?workspaceId="+e.ws, e.member, nil); status != 403 {
		t.Errorf("member: %d", status)
	}
}

// usageRow is one row of GET /api/usage.
type usageRow struct {
	Key          string
	Calls        int
	Errors       int
	P50Ms, P95Ms *float64
}

// usage reads the workspace's usage over 24 h grouped by by, keyed by group.
func (e *policyEnv) usage(t *testing.T, by string) map[string]usageRow {
	t.Helper()
	status, out := e.env.Do(t, "GET", "/api/usage?workspaceId="+e.ws+"&by="+by+"&window=24h", e.admin, nil)
	if status != 200 {
		t.Fatalf("usage: %d %s", status, out)
	}
	var u struct{ Rows []usageRow }
	_ = json.Unmarshal(out, &u)
	m := map[string]usageRow{}
	for _, r := range u.Rows {
		m[r.Key] = r
	}
	return m
}

// TestUsagePerChat: proxied calls made in two chats (X-Chat-Id and ?chat=) and in none are
// counted per chat by GET /api/usage?by=chat ("none" for the calls without a chat), denials
// as errors of their chat, and as CSV; a chat the gateway does not accept (unknown, or
// another workspace's) fails the request and is in no audit row.
func TestUsagePerChat(t *testing.T) {
	t.Parallel()
	e := newPolicyEnv(t)
	chat2 := uuid.NewString()
	if err := db.ChatEnsure(t.Context(), e.env.Pool, chat2, e.ws, "second"); err != nil {
		t.Fatal(err)
	}
	_, _, otherChat := e.env.Workspace(t, "Other")
	read := e.tool("read_issue")
	call := func(path string, hdr map[string]string) json.RawMessage {
		t.Helper()
		return e.post(t, path, e.admin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+read+`","arguments":{"id":"1"}}}`,
			with(hdr, "Mcp-Protocol-Version", "2025-11-25"))
	}
	for range 3 {
		if res := call("/mcp/"+e.ws, map[string]string{"X-Chat-Id": e.chat}); strings.Contains(string(res), `"isError":true`) {
			t.Fatalf("chat 1 call: %s", res)
		}
	}
	for range 2 {
		if res := call("/mcp/"+e.ws+"?chat="+chat2, nil); strings.Contains(string(res), `"isError":true`) {
			t.Fatalf("chat 2 call: %s", res)
		}
	}
	if res := call("/mcp/"+e.ws, nil); strings.Contains(string(res), `"isError":true`) {
		t.Fatalf("chatless call: %s", res)
	}
	// A denial in chat 2 is one of its errors.
	if status, out := e.putPolicies(t, e.admin, `permit(principal, action, resource);
@id("no-create") forbid(principal, action == Action::"call", resource == Tool::"`+e.tool("create_issue")+`");`); status != 200 {
		t.Fatalf("save: %d %s", status, out)
	}
	denied(t, "chat 2", ways[0].send(t, e, e.admin, e.tool("create_issue"), "create_issue", `{}`, map[string]string{"X-Chat-Id": chat2}), "no-create")
	// Chats the gateway refuses: not a UUID, unknown, another workspace's.
	before := e.upstreamCalls("read_issue")
	for _, bad := range []string{"not-a-chat", uuid.NewString(), otherChat} {
		resp, raw := e.env.RPC(t, "/mcp/"+e.ws, e.admin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+read+`","arguments":{"id":"1"}}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-11-25", "X-Chat-Id": bad})
		if resp.StatusCode == http.StatusOK && !strings.Contains(string(raw), `"error"`) {
			t.Errorf("chat %q accepted: %d %s", bad, resp.StatusCode, raw)
		}
	}
	if n := e.upstreamCalls("read_issue"); n != before {
		t.Errorf("refused chats reached the upstream: %d calls, want %d", n, before)
	}
	e.env.FlushAudit(t)

	per := e.usage(t, "chat")
	if r := per[e.chat]; r.Calls != 3 || r.Errors != 0 || r.P50Ms == nil {
		t.Errorf("chat 1: %+v", r)
	}
	if r := per[chat2]; r.Calls != 3 || r.Errors != 1 {
		t.Errorf("chat 2: %+v", r)
	}
	if r := per["none"]; r.Calls != 1 || r.Errors != 0 {
		t.Errorf("no chat: %+v", r)
	}
	if len(per) != 3 {
		t.Errorf("groups: %+v (refused chats must not appear)", per)
	}
	if r := e.usage(t, "tool")[read]; r.Calls != 6 {
		t.Errorf("read_issue: %+v (the refused calls must not count)", r)
	}
	status, out := e.env.Do(t, "GET", "/api/usage?workspaceId="+e.ws+"&by=chat&format=csv", e.admin, nil)
	if status != 200 || !strings.HasPrefix(string(out), "chat,calls,errors,p50_ms,p95_ms\n") || !strings.Contains(string(out), "\n"+e.chat+",3,0,") {
		t.Errorf("csv: %d %s", status, out)
	}
}
