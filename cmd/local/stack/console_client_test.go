package stack_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
)

// The console's sign-in through the gateway's authorization server (docs/AUTH.md "The
// console"): the first-party client agentpack-console, its REST resource, and the REST
// APIs that take its tokens.

// consoleSignIn runs the console's flow for person (extra edits the authorization
// request) and returns the token response.
func (w *asWorld) consoleSignIn(t *testing.T, person string, extra url.Values) map[string]any {
	t.Helper()
	redirect := w.env.URL + "/admin/"
	if extra == nil {
		extra = url.Values{}
	}
	if _, ok := extra["resource"]; !ok {
		extra["resource"] = []string{w.env.URL + "/api"}
	}
	authURL, verifier := w.authorizeURL(authserver.ConsoleClientID, redirect, extra)
	b := w.browser(t, person)
	resp, err := b.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !isRedirect(resp.StatusCode) {
		t.Fatalf("console authorize: %d, want a redirect with no consent page: %s", resp.StatusCode, body)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if !strings.HasPrefix(loc.String(), redirect+"?") || loc.Query().Get("code") == "" {
		t.Fatalf("console authorize redirected to %s", loc)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "client_id": {authserver.ConsoleClientID},
		"code": {loc.Query().Get("code")}, "redirect_uri": {redirect}, "code_verifier": {verifier}}
	form["resource"] = extra["resource"]
	st, tok := w.tokenReq(t, form)
	if st != http.StatusOK {
		t.Fatalf("console token: %d %v", st, tok)
	}
	return tok
}

// jwtClaims decodes a token's payload (no verification: the API decides).
func jwtClaims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestConsoleClient(t *testing.T) {
	w := newASWorld(t, nil)
	a := w.ws["A"]
	tok := w.consoleSignIn(t, "ada", nil)
	access, rt := tok["access_token"].(string), tok["refresh_token"].(string)
	c := jwtClaims(t, access)
	if aud := fmt.Sprint(c["aud"]); aud != "["+w.env.URL+"/api]" {
		t.Fatalf("console token aud = %s, want [%s/api]", aud, w.env.URL)
	}
	if c["role"] != auth.RoleMember || fmt.Sprint(c["workspaces"]) != "["+a.id+"]" || c["client_id"] != authserver.ConsoleClientID {
		t.Fatalf("console token claims: %v", c)
	}
	// The REST APIs take it: the marketplace function's and the pins function's.
	if st, m := w.do(t, "GET", "/api/mcp-marketplace?workspaceId="+a.id, access, nil); st != 200 {
		t.Fatalf("console token on the REST API: %d %v", st, m)
	}
	if st, m := w.do(t, "GET", "/api/chats?workspaceId="+a.id, access, nil); st != 200 {
		t.Fatalf("console token on the pins API: %d %v", st, m)
	}
	// Access rules unchanged: a member cannot write, nor read workspace B.
	if st, _ := w.do(t, "GET", "/api/mcp-connections?workspaceId="+w.ws["B"].id, access, nil); st != http.StatusForbidden {
		t.Fatalf("console token on workspace B: %d, want 403", st)
	}
	// An /api token is refused at /mcp (challenged again).
	w.challenged(t, access, "/mcp/"+a.id)
	// The console's sign-ins are not connected clients.
	if st, m := w.do(t, "GET", "/api/connected-clients", access, nil); st != 200 || len(m["items"].([]any)) != 0 {
		t.Fatalf("connected clients with only the console signed in: %d %v", st, m)
	}
	if g, err := db.ASGrantListByPerson(t.Context(), w.env.Pool, "ada"); err != nil || len(g) != 1 || g[0].ClientID != authserver.ConsoleClientID {
		t.Fatalf("the console's grant: %v %v", g, err)
	}

	// Refresh keeps the audience and rotates.
	st, r1 := w.tokenReq(t, url.Values{"grant_type": {"refresh_token"}, "client_id": {authserver.ConsoleClientID},
		"refresh_token": {rt}, "resource": {w.env.URL + "/api"}})
	if st != 200 || fmt.Sprint(jwtClaims(t, r1["access_token"].(string))["aud"]) != "["+w.env.URL+"/api]" {
		t.Fatalf("console refresh: %d %v", st, r1)
	}
	// Sign-out revokes the grant (RFC 7009): the access token is refused by the REST API.
	resp, err := http.PostForm(w.env.URL+authserver.RevokePath, url.Values{"token": {r1["refresh_token"].(string)},
		"client_id": {authserver.ConsoleClientID}, "token_type_hint": {"refresh_token"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if st, m := w.do(t, "GET", "/api/mcp-marketplace?workspaceId="+a.id, r1["access_token"].(string), nil); st != http.StatusUnauthorized ||
		!strings.Contains(fmt.Sprint(m), "revoked") {
		t.Fatalf("console token after revocation: %d %v, want 401 revoked", st, m)
	}
}

// The console may ask for /mcp beside /api (its Playground): the token names both.
func TestConsoleClientBothResources(t *testing.T) {
	w := newASWorld(t, nil)
	a := w.ws["A"]
	tok := w.consoleSignIn(t, "ada", url.Values{"resource": {w.env.URL + "/api", w.env.URL + "/mcp"}})
	access := tok["access_token"].(string)
	aud, _ := jwtClaims(t, access)["aud"].([]any)
	if len(aud) != 2 || !slices.Contains(aud, any(w.env.URL+"/mcp")) || !slices.Contains(aud, any(w.env.URL+"/api")) {
		t.Fatalf("aud = %v, want /api and /mcp", aud)
	}
	if st, m := w.rpc(t, "/mcp/"+a.id, access, "tools/list", nil, nil); st != 200 {
		t.Fatalf("console token with /mcp at /mcp: %d %v", st, m)
	}
	if st, _ := w.do(t, "GET", "/api/mcp-marketplace?workspaceId="+a.id, access, nil); st != 200 {
		t.Fatalf("console token with /mcp at /api: %d", st)
	}
}

// Resources and redirect URIs the console client, or an MCP client, may not have.
func TestConsoleClientRefusals(t *testing.T) {
	w := newASWorld(t, nil)
	b := w.browser(t, "ada")
	console := w.env.URL + "/admin/"
	authorize := func(client, redirect string, extra url.Values) *http.Response {
		t.Helper()
		u, _ := w.authorizeURL(client, redirect, extra)
		resp, err := b.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	redirectError := func(resp *http.Response, prefix, want string) {
		t.Helper()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if !isRedirect(resp.StatusCode) || !strings.HasPrefix(loc.String(), prefix) || loc.Query().Get("error") != want {
			t.Fatalf("want a redirect to %s with error=%s, got %d %s", prefix, want, resp.StatusCode, loc)
		}
	}
	// An MCP client asking for the REST resource: invalid_target, at both endpoints.
	redirect := "http://127.0.0.1:9/callback"
	client := w.register(t, redirect)
	redirectError(authorize(client, redirect, url.Values{"resource": {w.env.URL + "/api"}}), redirect, "invalid_target")
	if st, m := w.tokenReq(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "code": {"apc_x"},
		"redirect_uri": {redirect}, "code_verifier": {"v"}, "resource": {w.env.URL + "/api"}}); st != 400 || m["error"] != "invalid_target" {
		t.Fatalf("MCP client's token request for /api: %d %v", st, m)
	}
	// The console asking for another resource (another origin's /api, a path under /mcp).
	for _, res := range []string{"https://other.example/api", w.env.URL + "/mcp/" + w.ws["A"].id, w.env.URL + "/api/x"} {
		redirectError(authorize(authserver.ConsoleClientID, console, url.Values{"resource": {res}}), console, "invalid_target")
	}
	// Redirect URIs other than exactly <base>/admin/: refused without a redirect.
	for _, r := range []string{w.env.URL + "/admin", w.env.URL + "/admin/x", "http://127.0.0.1:9/admin/", w.env.URL + "/admin/?x=1"} {
		if resp := authorize(authserver.ConsoleClientID, r, url.Values{"resource": {w.env.URL + "/api"}}); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("console with redirect %s: %d %s, want 400", r, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	// Nothing was stored by any of these.
	if g, err := db.ASGrantListByPerson(t.Context(), w.env.Pool, "ada"); err != nil || len(g) != 0 {
		t.Fatalf("grants after refusals: %v %v", g, err)
	}
}

// A person removed from the workspace: the console's refresh fails and the grant goes,
// and the console's next authorization shows the no-membership page.
func TestConsoleClientRemovedMember(t *testing.T) {
	w := newASWorld(t, nil)
	a := w.ws["A"]
	tok := w.consoleSignIn(t, "ada", nil)
	w.id.set("ada")
	st, r := w.tokenReq(t, url.Values{"grant_type": {"refresh_token"}, "client_id": {authserver.ConsoleClientID},
		"refresh_token": {tok["refresh_token"].(string)}, "resource": {w.env.URL + "/api"}})
	if st != 400 || r["error"] != "invalid_grant" {
		t.Fatalf("console refresh after removal: %d %v, want invalid_grant", st, r)
	}
	if st, _ := w.do(t, "GET", "/api/mcp-marketplace?workspaceId="+a.id, tok["access_token"].(string), nil); st != http.StatusUnauthorized {
		t.Fatalf("console token after removal and refresh: %d, want 401", st)
	}
	u, _ := w.authorizeURL(authserver.ConsoleClientID, w.env.URL+"/admin/", url.Values{"resource": {w.env.URL + "/api"}})
	resp, err := w.browser(t, "ada").Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("console authorize with no membership: %d, want 403", resp.StatusCode)
	}
}

// A superuser's console token carries the superuser role (identity.Service.Principal's
// rule), read again at refresh: the flag taken away, the next token is the member's.
func TestConsoleClientSuperuser(t *testing.T) {
	w := newASWorld(t, nil)
	w.id.mu.Lock()
	w.id.super["ada"] = true
	w.id.mu.Unlock()
	tok := w.consoleSignIn(t, "ada", nil)
	if role := jwtClaims(t, tok["access_token"].(string))["role"]; role != auth.RoleSuperuser {
		t.Fatalf("superuser's console token role = %v", role)
	}
	if st, m := w.do(t, "GET", "/api/mcp-connections?workspaceId="+w.ws["B"].id, tok["access_token"].(string), nil); st != 200 {
		t.Fatalf("superuser's console token on another workspace: %d %v", st, m)
	}
	w.id.mu.Lock()
	w.id.super["ada"] = false
	w.id.mu.Unlock()
	st, r := w.tokenReq(t, url.Values{"grant_type": {"refresh_token"}, "client_id": {authserver.ConsoleClientID},
		"refresh_token": {tok["refresh_token"].(string)}, "resource": {w.env.URL + "/api"}})
	if st != 200 || jwtClaims(t, r["access_token"].(string))["role"] != auth.RoleMember {
		t.Fatalf("refresh without the flag: %d %v", st, r)
	}
	// A failed read of the flag is a server_error, no token with a guessed role.
	w.id.mu.Lock()
	w.id.superErr = errors.New("people table unreachable")
	w.id.mu.Unlock()
	st, r = w.tokenReq(t, url.Values{"grant_type": {"refresh_token"}, "client_id": {authserver.ConsoleClientID},
		"refresh_token": {r["refresh_token"].(string)}, "resource": {w.env.URL + "/api"}})
	if st != http.StatusInternalServerError || r["error"] != "server_error" || r["access_token"] != nil {
		t.Fatalf("refresh with the flag unreadable: %d %v, want 500 server_error", st, r)
	}
	w.id.mu.Lock()
	w.id.superErr = nil
	w.id.mu.Unlock()
	// An MCP client's token of the same superuser keeps the membership's role.
	_, access, _ := w.signIn(t, "ada")
	if role := jwtClaims(t, access)["role"]; role != auth.RoleMember {
		t.Fatalf("MCP client token role = %v, want member", role)
	}
}

// A person in several workspaces is asked only which one (no consent, nothing
// remembered); workspace_hint preselects one they belong to.
func TestConsoleClientWorkspaceChooser(t *testing.T) {
	w := newASWorld(t, nil)
	a, bws := w.ws["A"], w.ws["B"]
	w.id.set("ada", authserver.Membership{WorkspaceID: a.id, Role: auth.RoleMember},
		authserver.Membership{WorkspaceID: bws.id, Role: auth.RoleAdmin})
	redirect := w.env.URL + "/admin/"
	u, verifier := w.authorizeURL(authserver.ConsoleClientID, redirect, url.Values{"resource": {w.env.URL + "/api"}})
	b := w.browser(t, "ada")
	resp, err := b.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Open the console in which workspace?") ||
		strings.Contains(string(page), `value="deny"`) {
		t.Fatalf("chooser: %d %s", resp.StatusCode, page)
	}
	form := url.Values{"decision": {"allow"}, "workspace": {bws.id}}
	for _, m := range hiddenInput.FindAllStringSubmatch(string(page), -1) {
		form.Add(m[1], htmlUnescape(m[2]))
	}
	// A workspace ada is not in: refused.
	bad := url.Values{}
	for k, v := range form {
		bad[k] = v
	}
	bad.Set("workspace", "00000000-0000-0000-0000-000000000000")
	if resp, err = b.PostForm(w.env.URL+authserver.AuthorizePath, bad); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("chooser with another workspace: %d, want 400", resp.StatusCode)
	}
	if resp, err = b.PostForm(w.env.URL+authserver.AuthorizePath, form); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if !isRedirect(resp.StatusCode) || loc.Query().Get("code") == "" {
		t.Fatalf("chooser post: %d %s", resp.StatusCode, loc)
	}
	st, tok := w.tokenReq(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {authserver.ConsoleClientID},
		"code": {loc.Query().Get("code")}, "redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {w.env.URL + "/api"}})
	if st != 200 {
		t.Fatalf("token: %d %v", st, tok)
	}
	if c := jwtClaims(t, tok["access_token"].(string)); c["role"] != auth.RoleAdmin || fmt.Sprint(c["workspaces"]) != "["+bws.id+"]" {
		t.Fatalf("chosen workspace's token: %v", c)
	}
	if ok, err := db.ASConsentGet(t.Context(), w.env.Pool, "ada", authserver.ConsoleClientID, bws.id, []string{"mcp"}); err != nil || ok {
		t.Fatalf("the console's choice was remembered as a consent: %v %v", ok, err)
	}
	// workspace_hint: no page.
	tok = w.consoleSignIn(t, "ada", url.Values{"workspace_hint": {a.id}})
	if c := jwtClaims(t, tok["access_token"].(string)); fmt.Sprint(c["workspaces"]) != "["+a.id+"]" || c["role"] != auth.RoleMember {
		t.Fatalf("hinted workspace's token: %v", c)
	}
}
