package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// skeleton is the walking-skeleton world: two workspaces, server-everything installed
// twice in A (streamable HTTP, and SSE declared as streamable-http so the fallback runs).
type skeleton struct {
	env          *stacktest.Env
	wsA, wsB     string
	adminA       string
	memberA      string
	adminB       string
	handleStream string
	handleSSE    string
	connStream   string
	connSSE      string
	mcpA         string
}

func newSkeleton(t *testing.T) *skeleton {
	t.Helper()
	env := stacktest.New(t, nil)
	s := &skeleton{env: env}
	s.wsA, _, _ = env.Workspace(t, "A")
	s.wsB, _, _ = env.Workspace(t, "B")
	s.adminA = stacktest.Token(t, "alice", auth.RoleAdmin, s.wsA)
	s.memberA = stacktest.Token(t, "mallory", auth.RoleMember, s.wsA)
	s.adminB = stacktest.Token(t, "bob", auth.RoleAdmin, s.wsB)
	s.mcpA = "/mcp/" + s.wsA

	streamURL := testpeer.Everything(t, "streamable")
	sseURL := testpeer.Everything(t, "sse")
	s.connStream, s.handleStream = s.create(t, "Everything", streamURL, "streamable-http")
	s.connSSE, s.handleSSE = s.create(t, "Everything SSE", sseURL, "streamable-http")
	return s
}

func (s *skeleton) create(t *testing.T, name, url, transport string) (id, handle string) {
	t.Helper()
	status, body := s.env.Do(t, "POST", "/api/mcp-connections", s.adminA, map[string]any{
		"name": name, "url": url, "transportType": transport, "workspaceId": s.wsA,
		"headers": map[string]string{"X-Upstream-Secret": "s3cr3t-header-value"},
	})
	if status != http.StatusCreated {
		t.Fatalf("create %s: %d %s", name, status, body)
	}
	var c struct {
		ID, Handle string
		Connect    struct {
			Success   bool
			ToolCount int
			Error     string
		}
		WorkingTransport *string
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	if !c.Connect.Success || c.Connect.ToolCount == 0 {
		t.Fatalf("create %s: connect %+v", name, c.Connect)
	}
	if strings.Contains(string(body), "s3cr3t-header-value") {
		t.Fatalf("create %s: response leaks a header value: %s", name, body)
	}
	return c.ID, c.Handle
}

func listAll(t *testing.T, s *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func envelopeOf(t *testing.T, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	if len(r.Content) != 1 {
		t.Fatalf("built-in result has %d content blocks", len(r.Content))
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &env); err != nil {
		t.Fatalf("built-in text is not the envelope: %v", err)
	}
	// The structured content matches the tool's declared outputSchema (a strict client's check).
	if name, _ := env["meta"].(map[string]any)["tool"].(string); name != "" {
		raw, _ := json.Marshal(r.StructuredContent)
		if b := outputChecker(t).Lookup(name); b == nil {
			t.Errorf("envelope of unknown built-in %q", name)
		} else if err := b.ValidateOutput(raw); err != nil {
			t.Error(err)
		}
	}
	return env
}

// outputChecker is a built-in set used only for its compiled output schemas.
func outputChecker(t *testing.T) *builtin.Set {
	t.Helper()
	s, err := builtin.New(builtin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func auditCount(t *testing.T, env *stacktest.Env) map[string]int {
	t.Helper()
	env.FlushAudit(t)
	rows, err := env.Pool.Query(context.Background(), `SELECT tool, count(*) FROM audit_events GROUP BY tool`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var tool string
		var n int
		_ = rows.Scan(&tool, &n)
		out[tool] = n
	}
	return out
}

func TestWalkingSkeletonGoClient(t *testing.T) {
	t.Parallel()
	s := newSkeleton(t)
	for _, pv := range []string{"", "2025-06-18"} {
		t.Run("protocol="+pv, func(t *testing.T) {
			sess := s.env.MCP(t, s.mcpA, s.adminA, pv, nil)
			names := listAll(t, sess)
			echoStream := "mcp_" + s.handleStream + "_echo"
			echoSSE := "mcp_" + s.handleSSE + "_echo"
			for _, want := range []string{"agentpack_catalog_list", "agentpack_catalog_install", echoStream, echoSSE} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}
			for _, n := range names {
				if len(n) > 64 {
					t.Errorf("tool name %q longer than 64", n)
				}
			}

			res, err := sess.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentpack_catalog_list", Arguments: map[string]any{"search": "deepwiki"}})
			if err != nil || res.IsError {
				t.Fatalf("catalog_list: %v %+v", err, res)
			}
			env := envelopeOf(t, res)
			meta := env["meta"].(map[string]any)
			if env["ok"] != true || meta["tool"] != "agentpack_catalog_list" || meta["version"] != "1.0.0" {
				t.Errorf("envelope = %v", env)
			}
			if data := env["data"].(map[string]any); data["total"].(float64) != 1 {
				t.Errorf("search deepwiki: %v", data)
			}

			for _, name := range []string{echoStream, echoSSE} {
				res, err := sess.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": "hello " + pv}})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %+v", name, err, res)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != "Echo: hello "+pv {
					t.Errorf("%s returned %q, want the upstream's own text", name, got)
				}
			}
		})
	}
	// 2 runs × 2 proxied echo calls are writes; catalog_list is read-only.
	got := auditCount(t, s.env)
	want := map[string]int{"mcp_" + s.handleStream + "_echo": 2, "mcp_" + s.handleSSE + "_echo": 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audit rows = %v, want %v", got, want)
	}
	var secrets int
	_ = s.env.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE args_digest LIKE '%hello%'`).Scan(&secrets)
	if secrets != 0 {
		t.Errorf("audit rows hold raw arguments")
	}
	if strings.Contains(s.env.Logs.String(), "s3cr3t-header-value") {
		t.Errorf("logs leak a header value")
	}
}

func TestWalkingSkeletonTypeScriptClient(t *testing.T) {
	t.Parallel()
	s := newSkeleton(t)
	echo := "mcp_" + s.handleSSE + "_echo"
	for _, pv := range []string{"", "2025-06-18"} {
		res := testpeer.TSClient(t, testpeer.TSClientOptions{
			URL: s.env.URL + s.mcpA, Authorization: "Bearer " + s.adminA, ProtocolVersion: pv,
			Plan: []map[string]any{
				{"op": "listTools"},
				{"op": "callTool", "name": "agentpack_catalog_get", "arguments": map[string]any{"name": "DeepWiki"}},
				{"op": "callTool", "name": echo, "arguments": map[string]any{"message": "from ts"}},
			},
		})
		if res.ConnectError != nil {
			t.Fatalf("ts connect (%q): %+v", pv, res.ConnectError)
		}
		for _, st := range res.Steps {
			if st.Error != nil {
				t.Fatalf("ts %s (%q): %+v", st.Op, pv, st.Error)
			}
		}
		if !strings.Contains(string(res.Steps[0].Result), echo) || !strings.Contains(string(res.Steps[0].Result), "agentpack_catalog_list") {
			t.Errorf("ts listTools lacks tools: %s", res.Steps[0].Result)
		}
		if !strings.Contains(string(res.Steps[1].Result), `\"ok\":true`) {
			t.Errorf("ts catalog_get: %s", res.Steps[1].Result)
		}
		if !strings.Contains(string(res.Steps[2].Result), "Echo: from ts") {
			t.Errorf("ts echo: %s", res.Steps[2].Result)
		}
	}
	if got := auditCount(t, s.env)[echo]; got != 2 {
		t.Errorf("audit rows for %s = %d, want 2", echo, got)
	}
}

func TestMemberCannotCallAdminBuiltin(t *testing.T) {
	t.Parallel()
	s := newSkeleton(t)
	sess := s.env.MCP(t, s.mcpA, s.memberA, "", nil)
	names := listAll(t, sess)
	if slices.Contains(names, "agentpack_catalog_install") {
		t.Errorf("member sees the admin-only install tool")
	}
	// Arguments that fail the schema: FORBIDDEN proves access is checked before parsing.
	res, err := sess.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentpack_catalog_install", Arguments: map[string]any{"bogus": 1}})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	env := envelopeOf(t, res)
	if !res.IsError || env["error"].(map[string]any)["code"] != "FORBIDDEN" {
		t.Errorf("member install = %v, want FORBIDDEN", env)
	}
	if n := len(auditCount(t, s.env)); n != 0 {
		t.Errorf("a refused call was audited")
	}
}

func TestOtherWorkspaceSeesNothing(t *testing.T) {
	t.Parallel()
	s := newSkeleton(t)
	sess := s.env.MCP(t, "/mcp/"+s.wsB, s.adminB, "", nil)
	for _, n := range listAll(t, sess) {
		if strings.HasPrefix(n, "mcp_") {
			t.Errorf("workspace B sees proxied tool %s of A", n)
		}
	}
	res, err := sess.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp_" + s.handleStream + "_echo", Arguments: map[string]any{"message": "x"}})
	if err == nil {
		t.Errorf("B called A's tool: %+v", res)
	} else if !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("B calling A's tool: %v, want unknown tool", err)
	}
	resp, _ := s.env.RPC(t, s.mcpA, s.adminB, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("B on A's endpoint: %d, want 403", resp.StatusCode)
	}
	if n := len(auditCount(t, s.env)); n != 0 {
		t.Errorf("audit rows written: %d", n)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	s := newSkeleton(t)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	tests := []struct {
		name       string
		token      string
		body       string
		wantStatus int
		wantInBody string
	}{
		{"malformed JSON", s.adminA, `{"jsonrpc":"2.0",`, http.StatusBadRequest, `"code":-32700`},
		{"unknown method", s.adminA, `{"jsonrpc":"2.0","id":2,"method":"tools/explode"}`, http.StatusOK, `"id":2,"error":{"code":-32601`},
		{"schema failure", s.adminA, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agentpack_catalog_list","arguments":{"limit":"ten"}}}`, http.StatusOK, `VALIDATION_ERROR`},
		{"missing token", "", list, http.StatusUnauthorized, ""},
		{"invalid token", "not.a.jwt", list, http.StatusUnauthorized, ""},
		{"wrong secret", forged(t, s.wsA), list, http.StatusUnauthorized, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := s.env.RPC(t, s.mcpA, tt.token, tt.body, nil)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantStatus == http.StatusUnauthorized {
				if h := resp.Header.Get("WWW-Authenticate"); !strings.Contains(h, `Bearer resource_metadata="`) {
					t.Errorf("WWW-Authenticate = %q", h)
				}
			}
			if !strings.Contains(string(body), tt.wantInBody) {
				t.Errorf("body %s lacks %s", body, tt.wantInBody)
			}
		})
	}
	// Client-chosen selectors are part of the server cache key: only known toolsets and
	// project ids are accepted (found in review: free text let a client churn the cache).
	for _, hdr := range []map[string]string{{"X-MCP-Toolsets": "catalog,no-such-toolset"}, {"X-Project-Id": "not-a-uuid"}} {
		resp, body := s.env.RPC(t, s.mcpA, s.adminA, list, hdr)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "-32600") {
			t.Errorf("%v: %d %s, want 400 with a JSON-RPC error", hdr, resp.StatusCode, body)
		}
	}
	// Still serving.
	resp, body := s.env.RPC(t, s.mcpA, s.adminA, list, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "agentpack_catalog_list") {
		t.Fatalf("after bad input: %d %s", resp.StatusCode, body)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(m, s.env.URL+s.mcpA, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s /mcp = %d, want 405", m, resp.StatusCode)
		}
	}
}

func forged(t *testing.T, ws string) string {
	tok, err := auth.Mint("some-other-secret", auth.Principal{Subject: "eve", Role: auth.RoleSuperuser, Workspaces: []string{ws}}, 3600e9)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
