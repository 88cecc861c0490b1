package stack_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
)

// MCP access tokens (docs/AUTH.md "MCP access tokens", shared/grants/tokens.go): a token a
// signed-in person makes for a header-only MCP client, valid at /mcp only.

// createMCPToken posts in as token's caller and returns the status and answer.
func (w *asWorld) createMCPToken(t *testing.T, token string, in map[string]any) (int, map[string]any) {
	t.Helper()
	return w.do(t, "POST", "/api/mcp-tokens", token, in)
}

// TestMCPAccessToken: a person signed in to the console (through the authorization server)
// creates a token; it lists tools at /mcp, is refused by every REST API and on another
// workspace, is listed (never shown again), is neither stored nor logged, cannot be seen
// or revoked by another person, and is refused at the next call once revoked.
func TestMCPAccessToken(t *testing.T) {
	w := newASWorld(t, nil)
	a, b := w.ws["A"], w.ws["B"]
	console := w.consoleSignIn(t, "ada", nil)["access_token"].(string)
	st, m := w.createMCPToken(t, console, map[string]any{"name": "Cursor on laptop", "workspaceId": a.id, "lifetimeSeconds": 7200})
	mustStatus(t, "create", st, http.StatusCreated, m)
	tok, id := m["token"].(string), m["id"].(string)
	if tok == "" || m["name"] != "Cursor on laptop" || m["role"] != auth.RoleMember || m["workspaceId"] != a.id ||
		m["resource"] != w.env.URL+"/mcp" {
		t.Fatalf("created: %v", m)
	}
	c := jwtClaims(t, tok)
	if aud := fmt.Sprint(c["aud"]); aud != "["+w.env.URL+"/mcp]" {
		t.Fatalf("aud = %s, want only %s/mcp", aud, w.env.URL)
	}
	if c["sid"] != id || c["sub"] != "ada" || c["client_id"] != db.MCPTokenClientID || c["role"] != auth.RoleMember ||
		fmt.Sprint(c["workspaces"]) != "["+a.id+"]" || c["exp"].(float64)-c["iat"].(float64) != 7200 {
		t.Fatalf("claims: %v", c)
	}

	// It works at /mcp: tools/list as ada.
	st, m = w.rpc(t, "/mcp/"+a.id, tok, "tools/list", nil, nil)
	if st != http.StatusOK || len(toolNames(m)) == 0 {
		t.Fatalf("tools/list with the MCP access token: %d %v", st, m)
	}
	// And on the single-server URL of the same workspace (the gateway-wide /mcp resource
	// covers every MCP URL of the origin).
	if st, m := w.rpc(t, "/mcp/"+a.id+"/servers/"+a.handle, tok, "tools/list", nil, nil); st != http.StatusOK || len(toolNames(m)) == 0 {
		t.Fatalf("tools/list on the single-server URL: %d %v", st, m)
	}
	// Another workspace: refused.
	if st, _ := w.rpc(t, "/mcp/"+b.id, tok, "tools/list", nil, nil); st != http.StatusForbidden {
		t.Fatalf("workspace B: %d, want 403", st)
	}
	// Never the REST API: every REST function, reads and writes, the token routes included.
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/mcp-marketplace?workspaceId=" + a.id}, {"GET", "/api/chats?workspaceId=" + a.id},
		{"GET", "/api/mcp-tokens"}, {"POST", "/api/mcp-tokens"}, {"GET", "/api/connected-clients"},
		{"DELETE", "/api/mcp-tokens/" + id}, {"GET", "/api/mcp-connections?workspaceId=" + a.id},
	} {
		var body any
		if r.method == "POST" {
			body = map[string]any{"workspaceId": a.id, "lifetimeSeconds": 3600}
		}
		st, m := w.do(t, r.method, r.path, tok, body)
		if st != http.StatusUnauthorized || !strings.Contains(fmt.Sprint(m), "another resource") {
			t.Errorf("%s %s with the MCP access token: %d %v, want 401 for another resource", r.method, r.path, st, m)
		}
	}

	// Listed, without the token; and it is shown nowhere else.
	st, raw := w.env.Do(t, "GET", "/api/mcp-tokens", console, nil)
	if st != http.StatusOK || !strings.Contains(string(raw), id) || strings.Contains(string(raw), tok) || strings.Contains(string(raw), `"token"`) {
		t.Fatalf("list: %d %s", st, raw)
	}
	sig := tok[strings.LastIndexByte(tok, '.')+1:]
	for _, table := range []string{"as_grants", "as_tokens", "as_consents", "as_clients", "event_log"} {
		if n := w.count(t, `SELECT count(*) FROM `+table+` x WHERE strpos(row_to_json(x)::text, $1) > 0 OR strpos(row_to_json(x)::text, $2) > 0`, tok, sig); n != 0 {
			t.Errorf("%s holds the token", table)
		}
	}
	if logs := w.env.Logs.String(); strings.Contains(logs, tok) || strings.Contains(logs, sig) {
		t.Error("the token is in the logs")
	}
	// It appears among ada's connected clients (its grant), by its name.
	st, m = w.do(t, "GET", "/api/connected-clients", console, nil)
	if items, _ := m["items"].([]any); st != 200 || len(items) != 1 || items[0].(map[string]any)["clientName"] != "Cursor on laptop" {
		t.Fatalf("connected clients: %d %v", st, m)
	}

	// Another person: bob, a member of A too, sees none of ada's and cannot revoke it; nor
	// can the admin of workspace B, by either route.
	w.id.set("bob", authserver.Membership{WorkspaceID: a.id, Role: auth.RoleMember})
	bob := w.consoleSignIn(t, "bob", nil)["access_token"].(string)
	st, m = w.do(t, "GET", "/api/mcp-tokens", bob, nil)
	if items, _ := m["items"].([]any); st != 200 || len(items) != 0 {
		t.Fatalf("bob lists: %d %v", st, m)
	}
	for _, who := range []struct{ name, token string }{{"bob", bob}, {"admin of B", b.admin}} {
		for _, path := range []string{"/api/mcp-tokens/" + id, "/api/connected-clients/" + id} {
			if st, m := w.do(t, "DELETE", path, who.token, nil); st != http.StatusNotFound {
				t.Fatalf("%s DELETE %s: %d %v, want 404", who.name, path, st, m)
			}
		}
	}
	if st, _ := w.do(t, "GET", "/api/connected-clients?workspaceId="+a.id, b.admin, nil); st != http.StatusForbidden {
		t.Fatalf("admin of B lists A's connected clients: %d", st)
	}
	if st, _ := w.rpc(t, "/mcp/"+a.id, tok, "tools/list", nil, nil); st != http.StatusOK {
		t.Fatalf("the token after the others' attempts: %d", st)
	}

	// ada revokes it: the next call is challenged; it is no longer listed; a second
	// revocation is 404.
	if st, m := w.do(t, "DELETE", "/api/mcp-tokens/"+id, console, nil); st != http.StatusNoContent {
		t.Fatalf("revoke: %d %v", st, m)
	}
	w.challenged(t, tok, "/mcp/"+a.id)
	st, m = w.do(t, "GET", "/api/mcp-tokens", console, nil)
	if items, _ := m["items"].([]any); st != 200 || len(items) != 0 {
		t.Fatalf("list after revoke: %d %v", st, m)
	}
	if st, _ := w.do(t, "DELETE", "/api/mcp-tokens/"+id, console, nil); st != http.StatusNotFound {
		t.Fatalf("second revoke: %d", st)
	}
}

// TestMCPAccessTokenAdminRevokes: an admin of the workspace revokes a member's token as a
// connected client; the token is refused at the next call.
func TestMCPAccessTokenAdminRevokes(t *testing.T) {
	w := newASWorld(t, nil)
	a := w.ws["A"]
	console := w.consoleSignIn(t, "ada", nil)["access_token"].(string)
	st, m := w.createMCPToken(t, console, map[string]any{"workspaceId": a.id, "lifetimeSeconds": 3600})
	mustStatus(t, "create", st, http.StatusCreated, m)
	if m["name"] != "MCP access token" {
		t.Fatalf("default name: %v", m["name"])
	}
	if st, m := w.do(t, "DELETE", "/api/connected-clients/"+m["id"].(string), a.admin, nil); st != http.StatusNoContent {
		t.Fatalf("admin revokes: %d %v", st, m)
	}
	w.challenged(t, m["token"].(string), "/mcp/"+a.id)
}

// TestMCPAccessTokenBadInput: each bad creation is a 400 (or 403) naming the member, and
// stores nothing; the bounds themselves are accepted.
func TestMCPAccessTokenBadInput(t *testing.T) {
	w := newASWorld(t, nil)
	a, b := w.ws["A"], w.ws["B"]
	console := w.consoleSignIn(t, "ada", nil)["access_token"].(string)
	for _, c := range []struct {
		name   string
		in     any
		status int
		field  string
		text   string
	}{
		{"lifetime 0", map[string]any{"workspaceId": a.id}, 400, "lifetimeSeconds", "between 3600 (1 hour) and 7776000 (90 days); got 0"},
		{"lifetime under an hour", map[string]any{"workspaceId": a.id, "lifetimeSeconds": 3599}, 400, "lifetimeSeconds", "got 3599"},
		{"lifetime over 90 days", map[string]any{"workspaceId": a.id, "lifetimeSeconds": 7776001}, 400, "lifetimeSeconds", "got 7776001"},
		{"negative lifetime", map[string]any{"workspaceId": a.id, "lifetimeSeconds": -5}, 400, "lifetimeSeconds", "got -5"},
		{"lifetime not a number", map[string]any{"workspaceId": a.id, "lifetimeSeconds": "1h"}, 400, "", "malformed JSON body"},
		{"no workspace", map[string]any{"lifetimeSeconds": 3600}, 400, "workspaceId", "workspaceId must be"},
		{"workspace not a UUID", map[string]any{"workspaceId": "nope", "lifetimeSeconds": 3600}, 400, "workspaceId", "workspaceId must be"},
		{"another workspace", map[string]any{"workspaceId": b.id, "lifetimeSeconds": 3600}, 403, "", "not a member"},
		{"name too long", map[string]any{"workspaceId": a.id, "lifetimeSeconds": 3600, "name": strings.Repeat("x", 101)}, 400, "name", "longer than 100 bytes"},
		{"name with a control character", map[string]any{"workspaceId": a.id, "lifetimeSeconds": 3600, "name": "a\x07b"}, 400, "name", "printable"},
		{"unknown member", map[string]any{"workspaceId": a.id, "lifetimeSeconds": 3600, "scope": "api"}, 400, "", "unknown field"},
		{"empty body", "", 400, "", "empty"},
	} {
		st, m := w.do(t, "POST", "/api/mcp-tokens", console, c.in)
		e, _ := m["error"].(map[string]any)
		details, _ := e["details"].(map[string]any)
		if st != c.status || !strings.Contains(fmt.Sprint(e["message"]), c.text) || (c.field != "" && details["field"] != c.field) {
			t.Errorf("%s: %d %v, want %d naming %q (field %q)", c.name, st, m, c.status, c.text, c.field)
		}
	}
	if n := w.count(t, `SELECT count(*) FROM as_grants WHERE client_id = $1`, db.MCPTokenClientID); n != 0 {
		t.Fatalf("refused creations stored %d grants", n)
	}
	for _, life := range []int{3600, 7776000} {
		st, m := w.createMCPToken(t, console, map[string]any{"workspaceId": a.id, "lifetimeSeconds": life})
		mustStatus(t, fmt.Sprint("lifetime ", life), st, http.StatusCreated, m)
		exp, _ := time.Parse(time.RFC3339, m["expiresAt"].(string))
		created, _ := time.Parse(time.RFC3339, m["createdAt"].(string))
		if exp.Sub(created) != time.Duration(life)*time.Second {
			t.Fatalf("lifetime %d: %v to %v", life, created, exp)
		}
	}
	// Without the authorization server the routes answer 404.
	env := stacktest.New(t, nil)
	ws, _, _ := env.Workspace(t, "plain")
	st, raw := env.Do(t, "POST", "/api/mcp-tokens", stacktest.Token(t, "x", auth.RoleAdmin, ws), map[string]any{"workspaceId": ws, "lifetimeSeconds": 3600})
	if st != http.StatusNotFound || !strings.Contains(string(raw), "authorization server is not configured") {
		t.Fatalf("without the authorization server: %d %s", st, raw)
	}
}

// TestMCPAccessTokenExpiry: a token past its exp is refused at /mcp, and so is one whose
// grant says it expired (the grant check, whatever the JWT says).
func TestMCPAccessTokenExpiry(t *testing.T) {
	w := newASWorld(t, nil)
	a := w.ws["A"]
	console := w.consoleSignIn(t, "ada", nil)["access_token"].(string)
	// Made two hours ago for one hour.
	w.env.Deps.Grants.Now = func() time.Time { return time.Now().Add(-2 * time.Hour) }
	st, m := w.createMCPToken(t, console, map[string]any{"workspaceId": a.id, "lifetimeSeconds": 3600})
	w.env.Deps.Grants.Now = nil
	mustStatus(t, "create", st, http.StatusCreated, m)
	resp, _ := w.env.RPC(t, "/mcp/"+a.id, m["token"].(string), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "expired") {
		t.Fatalf("expired token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// Not listed once expired.
	st, m = w.do(t, "GET", "/api/mcp-tokens", console, nil)
	if items, _ := m["items"].([]any); st != 200 || len(items) != 0 {
		t.Fatalf("list: %d %v", st, m)
	}
	// A live JWT whose grant has expired.
	st, m = w.createMCPToken(t, console, map[string]any{"workspaceId": a.id, "lifetimeSeconds": 3600})
	mustStatus(t, "create", st, http.StatusCreated, m)
	if st, _ := w.rpc(t, "/mcp/"+a.id, m["token"].(string), "tools/list", nil, nil); st != http.StatusOK {
		t.Fatalf("fresh token: %d", st)
	}
	if _, err := w.env.Pool.Exec(t.Context(), `UPDATE as_grants SET expires_at = now() - interval '1 second' WHERE id = $1`, m["id"]); err != nil {
		t.Fatal(err)
	}
	w.challenged(t, m["token"].(string), "/mcp/"+a.id)
}

// TestMCPAccessTokenMembership: for a person of the people table, each call checks that
// they still hold the token's role in its workspace: a demoted admin's admin token is
// refused, and works again once the role is back; a removed member's is refused. The role
// comes from the membership, not from the console token.
func TestMCPAccessTokenMembership(t *testing.T) {
	w := newASWorld(t, nil)
	a := w.ws["A"]
	ctx := t.Context()
	p, err := db.PersonUpsert(ctx, w.env.Pool, &db.Person{Issuer: "https://idp.example", Subject: "cy", Email: "cy@example.com", EmailVerified: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.MembershipInsert(ctx, w.env.Pool, a.id, p.ID, auth.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	// A console token that says member: the membership (admin) decides.
	console := stacktest.Token(t, p.ID, auth.RoleMember, a.id)
	st, m := w.createMCPToken(t, console, map[string]any{"workspaceId": a.id, "lifetimeSeconds": 3600})
	mustStatus(t, "create", st, http.StatusCreated, m)
	tok := m["token"].(string)
	if m["role"] != auth.RoleAdmin || jwtClaims(t, tok)["role"] != auth.RoleAdmin {
		t.Fatalf("role: %v", m)
	}
	ok := func(step string, want int) {
		t.Helper()
		if st, m := w.rpc(t, "/mcp/"+a.id, tok, "tools/list", nil, nil); st != want {
			t.Fatalf("%s: %d %v, want %d", step, st, m, want)
		}
	}
	ok("admin", http.StatusOK)
	if err := db.MembershipSetRole(ctx, w.env.Pool, a.id, p.ID, auth.RoleMember); err != nil {
		t.Fatal(err)
	}
	ok("demoted to member", http.StatusUnauthorized)
	if err := db.MembershipSetRole(ctx, w.env.Pool, a.id, p.ID, auth.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	ok("admin again", http.StatusOK)
	// A member token survives promotion; a group role counts as membership.
	if err := db.MembershipSetRole(ctx, w.env.Pool, a.id, p.ID, auth.RoleMember); err != nil {
		t.Fatal(err)
	}
	st, m = w.createMCPToken(t, console, map[string]any{"workspaceId": a.id, "lifetimeSeconds": 3600})
	mustStatus(t, "create member token", st, http.StatusCreated, m)
	if m["role"] != auth.RoleMember {
		t.Fatalf("member token role: %v", m["role"])
	}
	tok = m["token"].(string)
	ok("member token", http.StatusOK)
	if err := db.MembershipDelete(ctx, w.env.Pool, a.id, p.ID); err != nil {
		t.Fatal(err)
	}
	ok("removed", http.StatusUnauthorized)
	if _, err := w.env.Pool.Exec(ctx, `UPDATE people SET groups = '{eng}' WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.env.Pool.Exec(ctx, `INSERT INTO group_roles (workspace_id, group_name, role) VALUES ($1, 'eng', 'member')`, a.id); err != nil {
		t.Fatal(err)
	}
	ok("member by group role", http.StatusOK)
	// A person with no membership in the workspace cannot create one there, whatever the
	// console token says.
	if st, m := w.createMCPToken(t, stacktest.Token(t, p.ID, auth.RoleAdmin, w.ws["B"].id),
		map[string]any{"workspaceId": w.ws["B"].id, "lifetimeSeconds": 3600}); st != http.StatusForbidden {
		t.Fatalf("no membership in B: %d %v", st, m)
	}
}
