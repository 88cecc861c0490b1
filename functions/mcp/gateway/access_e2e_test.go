package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/demoupstream"
)

// demoWorld is a stack with two workspaces and the in-process demo upstream (echo, add,
// slow, big, fail) installed in workspace A.
type demoWorld struct {
	env             *stacktest.Env
	wsA, wsB, projA string
	projB           string
	handle, connID  string
	upstream        *httptest.Server
	adminA          string
	tokens          map[string]string // role → token for workspace A
	adminB          string
	echo            string
}

func newDemoWorld(t *testing.T) *demoWorld {
	t.Helper()
	env := stacktest.New(t, nil)
	w := &demoWorld{env: env}
	w.wsA, w.projA, _ = env.Workspace(t, "A")
	w.wsB, w.projB, _ = env.Workspace(t, "B")
	w.adminA = stacktest.Token(t, "alice", auth.RoleAdmin, w.wsA)
	w.tokens = map[string]string{
		auth.RoleMember:    stacktest.Token(t, "mallory", auth.RoleMember, w.wsA),
		auth.RoleAdmin:     w.adminA,
		auth.RoleSuperuser: stacktest.Token(t, "root", auth.RoleSuperuser),
	}
	w.adminB = stacktest.Token(t, "bob", auth.RoleAdmin, w.wsB)
	h, err := demoupstream.NewHandler(demoupstream.NewServer(nil), demoupstream.ModeStreamable)
	if err != nil {
		t.Fatal(err)
	}
	w.upstream = httptest.NewServer(h)
	t.Cleanup(w.upstream.Close)
	c := env.Connection(t, stacktest.Admin("alice", w.wsA), connections.CreateInput{Name: "Demo", URL: w.upstream.URL,
		TransportType: "streamable-http", WorkspaceID: &w.wsA}).Connection
	w.connID, w.handle = c.ID, c.Handle
	w.echo = "mcp_" + c.Handle + "_echo"
	return w
}

// rpc posts one JSON-RPC request and decodes the response body.
func (w *demoWorld) rpc(t *testing.T, path, token, method string, params any, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	p, _ := json.Marshal(params)
	resp, body := w.env.RPC(t, path, token, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, p), hdr)
	var out map[string]any
	_ = json.Unmarshal(body, &out)
	return resp.StatusCode, out
}

// callOutcome is what a tools/call answered: "ok", an envelope error code, "unknown"
// (JSON-RPC -32602 unknown tool) or "http <status>".
func callOutcome(status int, out map[string]any) string {
	if status != http.StatusOK {
		return fmt.Sprintf("http %d", status)
	}
	if e, ok := out["error"].(map[string]any); ok {
		if strings.Contains(fmt.Sprint(e["message"]), "unknown tool") {
			return "unknown"
		}
		return fmt.Sprintf("rpc %v", e["code"])
	}
	res, _ := out["result"].(map[string]any)
	if res["isError"] == true {
		if sc, ok := res["structuredContent"].(map[string]any); ok {
			return fmt.Sprint(sc["error"].(map[string]any)["code"])
		}
		return "tool_error"
	}
	return "ok"
}

// TestAccessMatrix: role × workspace × toolset × tool kind. The rules (docs/DESIGN.md §4, §8):
// another workspace's endpoint is refused (403) unless superuser; admin-only built-ins are
// listed to admins only, and a member calling one gets FORBIDDEN (before argument
// parsing); a toolset selection narrows the listed built-ins (meta always listed), and a
// built-in outside it answers "unknown tool"; proxied tools are not affected by toolsets.
func TestAccessMatrix(t *testing.T) {
	t.Parallel()
	w := newDemoWorld(t)
	type kind struct {
		name, tool, toolset string
		adminOnly, proxied  bool
		args                map[string]any
	}
	kinds := []kind{
		{name: "builtin-read", tool: "agentpack_catalog_list", toolset: "catalog", args: map[string]any{"limit": 1}},
		// {"bogus":1} fails the schema: an outcome of FORBIDDEN proves access runs first.
		{name: "builtin-admin", tool: "agentpack_audit_list", toolset: "audit", adminOnly: true, args: map[string]any{"bogus": 1}},
		{name: "meta", tool: "agentpack_toolsets_list", toolset: "meta", args: map[string]any{}},
		{name: "proxied", tool: w.echo, proxied: true, args: map[string]any{"message": "hi"}},
	}
	for _, role := range []string{auth.RoleMember, auth.RoleAdmin, auth.RoleSuperuser} {
		for _, ws := range []string{"own", "other"} {
			for _, toolsets := range []string{"", "catalog", "audit"} {
				path := "/mcp/" + w.wsA
				token := w.tokens[role]
				if ws == "other" {
					// A's principal on B's endpoint; the superuser is in every workspace.
					path = "/mcp/" + w.wsB
				}
				var hdr map[string]string
				if toolsets != "" {
					hdr = map[string]string{"X-MCP-Toolsets": toolsets}
				}
				status, listed := w.rpc(t, path, token, "tools/list", map[string]any{}, hdr)
				var names []string
				if status == http.StatusOK {
					for _, tl := range listed["result"].(map[string]any)["tools"].([]any) {
						names = append(names, tl.(map[string]any)["name"].(string))
					}
				}
				for _, k := range kinds {
					name := fmt.Sprintf("%s/%s/toolsets=%s/%s", role, ws, toolsets, k.name)
					t.Run(name, func(t *testing.T) {
						inWS := ws == "own" || role == auth.RoleSuperuser
						isAdmin := role != auth.RoleMember
						inToolset := toolsets == "" || toolsets == k.toolset || k.toolset == "meta"
						// Proxied tools exist only in workspace A.
						exists := !k.proxied || ws == "own"
						wantListed := inWS && exists && (k.proxied || (inToolset && (!k.adminOnly || isAdmin)))
						var wantCall string
						switch {
						case !inWS:
							wantCall = "http 403"
						case !exists:
							wantCall = "unknown"
						case k.adminOnly && !isAdmin:
							wantCall = "FORBIDDEN"
						case !k.proxied && !inToolset:
							wantCall = "unknown"
						case k.adminOnly:
							wantCall = "VALIDATION_ERROR" // admitted, then the bogus argument is refused
						default:
							wantCall = "ok"
						}
						if got := slices.Contains(names, k.tool); got != wantListed {
							t.Errorf("listed = %v, want %v (status %d)", got, wantListed, status)
						}
						st, out := w.rpc(t, path, token, "tools/call", map[string]any{"name": k.tool, "arguments": k.args}, hdr)
						if got := callOutcome(st, out); got != wantCall {
							t.Errorf("call = %s, want %s: %v", got, wantCall, out)
						}
					})
				}
			}
		}
	}
}

// TestAuditRule: one row per successful write (docs/DESIGN.md §4) and per failed proxied
// call, with its outcome; read-only built-ins and failed built-ins are not audited; every
// proxied call is a write.
func TestAuditRule(t *testing.T) {
	t.Parallel()
	w := newDemoWorld(t)
	// A catalog entry that points at the demo upstream, so that install (a write built-in)
	// succeeds on loopback.
	var entryID string
	if err := w.env.Pool.QueryRow(context.Background(),
		`INSERT INTO mcp_catalog_entries (name, description, url, transport_type) VALUES ('Loopback Demo', 'demo', $1, 'streamable-http') RETURNING id`,
		w.upstream.URL).Scan(&entryID); err != nil {
		t.Fatalf("catalog entry: %v", err)
	}
	mcpA := "/mcp/" + w.wsA
	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		wantCall string
		wantRows int
		wantKind string
		wantConn bool
		outcome  string
	}{
		{"read-only built-in", "agentpack_catalog_list", map[string]any{}, "ok", 0, "", false, ""},
		{"write built-in", "agentpack_catalog_install", map[string]any{"entryId": entryID, "name": "Audited Demo"}, "ok", 1, "builtin", false, "ok"},
		{"failed write built-in", "agentpack_catalog_install", map[string]any{"entryId": "00000000-0000-4000-8000-000000000000"}, "NOT_FOUND", 0, "", false, ""},
		{"proxied call", w.echo, map[string]any{"message": "secret-arg"}, "ok", 1, "proxied", true, "ok"},
		{"failed proxied call (upstream error result)", "mcp_" + w.handle + "_fail", map[string]any{}, "tool_error", 1, "proxied", true, "tool_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := auditRows(t, w, tt.tool)
			st, out := w.rpc(t, mcpA, w.adminA, "tools/call", map[string]any{"name": tt.tool, "arguments": tt.args}, nil)
			if got := callOutcome(st, out); got != tt.wantCall {
				t.Fatalf("call = %s, want %s: %v", got, tt.wantCall, out)
			}
			rows := auditRows(t, w, tt.tool)
			if len(rows)-len(before) != tt.wantRows {
				t.Fatalf("audit rows %d → %d, want +%d", len(before), len(rows), tt.wantRows)
			}
			if tt.wantRows == 1 {
				r := rows[len(rows)-1]
				if r.kind != tt.wantKind || (r.conn != "") != tt.wantConn || r.principal != "alice" || r.ws != w.wsA || r.outcome != tt.outcome ||
					!strings.HasPrefix(r.digest, "sha256:") || strings.Contains(r.digest, "secret-arg") {
					t.Errorf("audit row = %+v", r)
				}
			}
		})
	}
}

type auditRow struct{ kind, conn, principal, ws, digest, outcome string }

func auditRows(t *testing.T, w *demoWorld, tool string) []auditRow {
	t.Helper()
	w.env.FlushAudit(t)
	rows, err := w.env.Pool.Query(context.Background(),
		`SELECT kind, coalesce(connection_id::text, ''), principal, coalesce(workspace_id::text, ''), args_digest, coalesce(outcome, '') FROM audit_events WHERE tool = $1 ORDER BY id`, tool)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var r auditRow
		if err := rows.Scan(&r.kind, &r.conn, &r.principal, &r.ws, &r.digest, &r.outcome); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestDefaultProject: tools that take projectId get the workspace's default project when
// it is omitted; a project of another workspace is refused.
func TestDefaultProject(t *testing.T) {
	t.Parallel()
	w := newDemoWorld(t)
	mcpA := "/mcp/" + w.wsA
	tests := []struct {
		name     string
		args     map[string]any
		wantCall string
		wantProj string
	}{
		{"omitted → default", map[string]any{}, "ok", w.projA},
		{"own project", map[string]any{"projectId": w.projA}, "ok", w.projA},
		{"other workspace's project", map[string]any{"projectId": w.projB}, "INVALID_REFERENCE", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, out := w.rpc(t, mcpA, w.adminA, "tools/call", map[string]any{"name": "agentpack_connections_list", "arguments": tt.args}, nil)
			if got := callOutcome(st, out); got != tt.wantCall {
				t.Fatalf("call = %s, want %s: %v", got, tt.wantCall, out)
			}
			if tt.wantProj != "" {
				data := out["result"].(map[string]any)["structuredContent"].(map[string]any)["data"].(map[string]any)
				if data["projectId"] != tt.wantProj {
					t.Errorf("projectId = %v, want %s", data["projectId"], tt.wantProj)
				}
			}
		})
	}
}

// TestSingleServerEndpoint: one connection under its upstream names, the same auth and
// workspace rules as the aggregate endpoint.
func TestSingleServerEndpoint(t *testing.T) {
	t.Parallel()
	w := newDemoWorld(t)
	path := "/mcp/" + w.wsA + "/servers/" + w.handle
	st, out := w.rpc(t, path, w.tokens[auth.RoleMember], "tools/list", map[string]any{}, nil)
	if st != http.StatusOK || !strings.Contains(fmt.Sprint(out), "name:echo") || strings.Contains(fmt.Sprint(out), "agentpack_") {
		t.Fatalf("tools/list = %d %v", st, out)
	}
	st, out = w.rpc(t, path, w.tokens[auth.RoleMember], "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "x"}}, nil)
	if got := callOutcome(st, out); got != "ok" {
		t.Errorf("echo = %s %v", got, out)
	}
	// Counted under the tool's exposed name, as on the aggregate endpoint (issue 44).
	if rows := auditRows(t, w, "mcp_"+w.handle+"_echo"); len(rows) != 1 || rows[0].kind != "proxied" {
		t.Errorf("audit rows for the single-server call = %+v", rows)
	}
	for _, tc := range []struct {
		name, path, token string
		want              int
	}{
		{"by connection id", "/mcp/" + w.wsA + "/servers/" + w.connID, w.adminA, http.StatusOK},
		{"unknown connection", "/mcp/" + w.wsA + "/servers/nope", w.adminA, http.StatusNotFound},
		{"other workspace's principal", path, w.adminB, http.StatusForbidden},
		{"A's connection under B", "/mcp/" + w.wsB + "/servers/" + w.handle, w.adminB, http.StatusNotFound},
		{"no token", path, "", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if st, out := w.rpc(t, tc.path, tc.token, "tools/list", map[string]any{}, nil); st != tc.want {
				t.Errorf("status %d, want %d: %v", st, tc.want, out)
			}
		})
	}
}

// TestConnectionAdminBuiltins: test, toggle and uninstall through the gateway, and their
// refusal for another workspace's connection.
func TestConnectionAdminBuiltins(t *testing.T) {
	t.Parallel()
	w := newDemoWorld(t)
	mcpA := "/mcp/" + w.wsA
	call := func(token, path, tool string, args map[string]any) (string, map[string]any) {
		st, out := w.rpc(t, path, token, "tools/call", map[string]any{"name": tool, "arguments": args}, nil)
		return callOutcome(st, out), out
	}
	if got, out := call(w.adminA, mcpA, "agentpack_connection_test", map[string]any{"connectionId": w.connID}); got != "ok" || !strings.Contains(fmt.Sprint(out), "success:true") {
		t.Errorf("test = %s %v", got, out)
	}
	if got, _ := call(w.tokens[auth.RoleMember], mcpA, "agentpack_connection_toggle", map[string]any{"connectionId": w.connID}); got != "FORBIDDEN" {
		t.Errorf("member toggle = %s", got)
	}
	// Bob is an admin of B only: on B's endpoint, A's connection does not exist.
	if got, _ := call(w.adminB, "/mcp/"+w.wsB, "agentpack_connection_toggle", map[string]any{"connectionId": w.connID}); got != "NOT_FOUND" {
		t.Errorf("toggle of another workspace's connection = %s", got)
	}
	if got, out := call(w.adminA, mcpA, "agentpack_connection_toggle", map[string]any{"connectionId": w.connID}); got != "ok" {
		t.Fatalf("toggle = %s %v", got, out)
	}
	if _, out := w.rpc(t, mcpA, w.adminA, "tools/list", map[string]any{}, nil); strings.Contains(fmt.Sprint(out), w.echo) {
		t.Errorf("a disabled connection's tools are still listed")
	}
	if got, _ := call(w.adminA, mcpA, "agentpack_catalog_uninstall", map[string]any{"entryId": "00000000-0000-4000-8000-000000000000"}); got != "NOT_FOUND" {
		t.Errorf("uninstall of a non-installed entry = %s", got)
	}
}
