package stack_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// browserGet GETs u like a browser returning from an authorization server: no bearer token
// unless token is set. It returns the status and the page.
// The binding cookie the consent page set travels with it (bindings), as a browser keeps it.
func browserGet(t *testing.T, u, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if pu, err := url.Parse(u); err == nil {
		if c, ok := bindings.Load(pu.Query().Get("state")); ok {
			req.AddCookie(c.(*http.Cookie))
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// bindings: state → the binding cookie the consent page set for the browser of that flow.
var bindings sync.Map

// consentPage plays the console's consent page for link (a …/admin/#/consent/{id} link)
// signed in with token: POST /api/oauth/consent. It returns the status, the authorization
// server's URL on success (and keeps the binding cookie for browserGet), and the body.
func consentPage(t *testing.T, link, token string) (int, string, map[string]any) {
	t.Helper()
	base, id, ok := strings.Cut(link, "/admin/#/consent/")
	if !ok {
		t.Fatalf("not a consent link: %s", link)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/oauth/consent", strings.NewReader(`{"link":"`+id+`"}`))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	asURL, _ := body["authorizationUrl"].(string)
	if resp.StatusCode == http.StatusOK {
		pu, err := url.Parse(asURL)
		if err != nil || len(resp.Cookies()) != 1 {
			t.Fatalf("consent answer: %s, cookies %v", asURL, resp.Cookies())
		}
		c := resp.Cookies()[0]
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Name != upstreamauth.BindingCookieName(pu.Query().Get("state")) {
			t.Errorf("binding cookie %+v", c)
		}
		bindings.Store(pu.Query().Get("state"), &http.Cookie{Name: c.Name, Value: c.Value})
	}
	return resp.StatusCode, asURL, body
}

// consentURL passes the consent page as token's user (the caller the link was made for),
// plays the upstream user's consent and returns the gateway callback URL.
func consentURL(t *testing.T, link, user, token string) string {
	t.Helper()
	st, asURL, body := consentPage(t, link, token)
	if st != http.StatusOK {
		t.Fatalf("consent page: %d %v", st, body)
	}
	loc, err := testpeer.Consent(t.Context(), asURL, user)
	if err != nil {
		t.Fatal(err)
	}
	return loc.String()
}

func authURLOf(t *testing.T, what string, b map[string]any) string {
	t.Helper()
	a, _ := b["authorization"].(map[string]any)
	u, _ := a["authorizationUrl"].(string)
	if a["status"] != upstreamauth.OutcomeRequired || u == "" {
		t.Fatalf("%s: authorization = %v", what, b["authorization"])
	}
	return u
}

// TestUpstreamOAuth is the consent round trip end to end through the REST function, the
// callback and the upstream client, against a loopback OAuth-protected MCP server
// (testpeer.OAuthUpstream: dynamic registration, PKCE, resource, refresh with rotation,
// revocation): install answers an authorizationUrl; the callback stores the token and lists
// the tools; the token is refreshed on a 401; a refused refresh shows "expired"; states are
// single use and bound to their caller and workspace; oauth_per_user reaches the upstream as
// each member's own account; uninstall revokes and deletes the tokens; no token ever shows
// in logs, event_log, catalog documents or answers.
func TestUpstreamOAuth(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	a, b := w.ws["A"], w.ws["B"]
	up := testpeer.NewOAuthUpstream(t)
	st, e := w.do(t, "POST", "/api/mcp-marketplace", w.su, map[string]any{
		"name": "Protected", "url": up.MCPURL(), "transportType": "streamable-http", "category": "testing"})
	mustStatus(t, "create entry", st, http.StatusCreated, e)
	entry := e["id"].(string)
	if err := db.CatalogEntryAuthModeSet(t.Context(), w.env.Pool, entry, "oauth"); err != nil {
		t.Fatal(err)
	}
	var tokens []string // every token the upstream issued, for the leak check
	collect := func() {
		for _, tok := range up.Issued() {
			if !slices.Contains(tokens, tok) {
				tokens = append(tokens, tok)
			}
		}
	}

	// Install: the entry's default mode is oauth, so the answer is a consent to complete.
	st, inst := w.do(t, "POST", "/api/mcp-marketplace/"+entry+"/install", a.admin, map[string]any{"workspaceId": a.id})
	mustStatus(t, "install", st, http.StatusCreated, inst)
	conn, handle := inst["id"].(string), inst["handle"].(string)
	if inst["authMode"] != "oauth" {
		t.Errorf("authMode = %v", inst["authMode"])
	}
	authURL := authURLOf(t, "install", inst)
	st, c := w.do(t, "GET", "/api/mcp-connections/"+conn, a.admin, nil)
	mustStatus(t, "get", st, http.StatusOK, c)
	if az := c["authorization"].(map[string]any); az["authorization"] != "required" {
		t.Errorf("before consent: %v", az)
	}

	// Consent, then the browser comes back to the callback without any gateway credential.
	callback := consentURL(t, authURL, "alice", a.admin)
	if !strings.HasPrefix(callback, w.env.URL+"/api/oauth/callback?") {
		t.Fatalf("callback URL %s", callback)
	}
	code, page := browserGet(t, callback, "")
	if code != http.StatusOK || !strings.Contains(page, `data-status="authorized"`) {
		t.Fatalf("callback: %d %s", code, page)
	}
	collect()
	st, c = w.do(t, "GET", "/api/mcp-connections/"+conn, a.admin, nil)
	mustStatus(t, "get", st, http.StatusOK, c)
	az := c["authorization"].(map[string]any)
	if az["authorization"] != "authorized" || az["authorizedBy"] != "admin-A" || az["authorizedAt"] == nil {
		t.Errorf("after consent: %v", az)
	}
	// The tools were listed with the new token and appear in the gateway.
	_, m := w.rpc(t, "/mcp/"+a.id, a.admin, "tools/list", nil, nil)
	if !strings.Contains(fmt.Sprint(m), "mcp_"+handle+"_whoami") {
		t.Errorf("tools/list lacks mcp_%s_whoami: %v", handle, m)
	}

	t.Run("step-up on 403 insufficient_scope", func(t *testing.T) {
		// The upstream now wants a scope the grant lacks: the gateway answers the way to
		// grant it (-32042 with a link asking for both scopes) instead of an error; a member
		// of a shared grant is told an admin must; after the admin's consent the call works.
		up.RequireScope("admin:write")
		defer up.RequireScope("")
		whoami := "mcp_" + handle + "_whoami"
		v25 := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
		_, m, _ := w.call(t, "/mcp/"+a.id, a.admin, whoami, map[string]any{}, v25)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32042) || !strings.Contains(fmt.Sprint(e["data"]), "/admin/#/consent/") {
			t.Fatalf("admin, scope missing: %v", m)
		}
		// The link opens the consent page; the authorization URL behind it asks for both scopes.
		els, _ := e["data"].(map[string]any)["elicitations"].([]any)
		if _, asURL, _ := consentPage(t, els[0].(map[string]any)["url"].(string), a.admin); !strings.Contains(asURL, "admin%3Awrite") || !strings.Contains(asURL, "tools%3Aread") {
			t.Fatalf("step-up authorization URL %s", asURL)
		}
		_, m, out := w.call(t, "/mcp/"+a.id, a.member, whoami, map[string]any{}, v25)
		if out != "upstream-error" || !strings.Contains(fmt.Sprint(m["result"]), "admin must authorize") {
			t.Errorf("member, scope missing: %s %v", out, m)
		}
		st, r := w.do(t, "POST", "/api/mcp-connections/"+conn+"/authorize", a.admin, nil)
		mustStatus(t, "authorize", st, http.StatusOK, r)
		// Consent to the step-up link the gateway answered (the URL inside the -32042 data).
		_, m, _ = w.call(t, "/mcp/"+a.id, a.admin, whoami, map[string]any{}, v25)
		data, _ := m["error"].(map[string]any)["data"].(map[string]any)
		stepURL := ""
		if els, ok := data["elicitations"].([]any); ok && len(els) > 0 {
			stepURL, _ = els[0].(map[string]any)["url"].(string)
		}
		if stepURL == "" {
			t.Fatalf("no URL in the -32042 data: %v", data)
		}
		if code, page := browserGet(t, consentURL(t, stepURL, "alice", a.admin), ""); code != http.StatusOK || !strings.Contains(page, `data-status="authorized"`) {
			t.Fatalf("step-up consent: %d %s", code, page)
		}
		collect()
		if _, m, out := w.call(t, "/mcp/"+a.id, a.admin, whoami, map[string]any{}, v25); out != "ok" || !strings.Contains(fmt.Sprint(m["result"]), "alice") {
			t.Errorf("after the step-up: %s %v", out, m)
		}
	})
	t.Run("replayed callback", func(t *testing.T) {
		code, page := browserGet(t, callback, "")
		if code != http.StatusBadRequest || !strings.Contains(page, "already used") {
			t.Errorf("replay: %d %s", code, page)
		}
	})
	t.Run("authorization server text is never shown", func(t *testing.T) {
		// RFC 9207; MCP authorization "Authorization Response Validation": a response whose
		// iss is not the upstream's issuer, with a hostile error_description, reaches the
		// callback through the browser: the page, the event the console's Events page shows
		// and the connection's detail carry a fixed message and none of its text, and no
		// token is requested.
		up.SetIssParameter(true)
		defer up.SetIssParameter(false)
		hostile := url.Values{"iss": {"https://evil.example"}, "error": {"access_denied"},
			"error_description": {"Your account is locked: call +1-800-555-0100 to unlock"}, "error_uri": {"https://evil.example/unlock"}}
		bad := []string{"800-555", "locked", "evil.example"}
		for _, tc := range []struct{ name, want string }{
			{"iss mismatch", "does not match this connection"},
			{"matching iss", "declined at the authorization server (access_denied)"},
		} {
			if tc.name == "matching iss" {
				hostile.Set("iss", up.URL())
			}
			up.SetAuthorizeAnswer(hostile)
			tokens := 0
			for _, r := range up.Requests() {
				if r == "POST /token" {
					tokens++
				}
			}
			st, r := w.do(t, "POST", "/api/mcp-connections/"+conn+"/authorize", a.admin, nil)
			mustStatus(t, "authorize", st, http.StatusOK, r)
			cb := consentURL(t, r["authorizationUrl"].(string), "alice", a.admin)
			up.SetAuthorizeAnswer(nil)
			code, page := browserGet(t, cb, "")
			if code != http.StatusBadRequest || !strings.Contains(page, tc.want) {
				t.Errorf("%s: callback %d, want %q: %s", tc.name, code, tc.want, page)
			}
			st, ev := w.do(t, "GET", "/api/events?workspaceId="+a.id+"&action=mcp.authorization_failed", a.admin, nil)
			mustStatus(t, "events", st, http.StatusOK, ev)
			evs, _ := ev["events"].([]any)
			if len(evs) == 0 || !strings.Contains(fmt.Sprint(evs[0]), strings.ReplaceAll(tc.want, "&#39;", "'")) {
				t.Errorf("%s: newest mcp.authorization_failed event %v", tc.name, evs)
			}
			_, c := w.do(t, "GET", "/api/mcp-connections/"+conn, a.admin, nil)
			for _, b := range bad {
				for what, text := range map[string]string{"page": page, "events": fmt.Sprint(ev), "connection": fmt.Sprint(c)} {
					if strings.Contains(text, b) {
						t.Errorf("%s: the %s shows the authorization server's %q: %s", tc.name, what, b, text)
					}
				}
			}
			after := 0
			for _, r := range up.Requests() {
				if r == "POST /token" {
					after++
				}
			}
			if after != tokens {
				t.Errorf("%s: %d token requests after a refused response", tc.name, after-tokens)
			}
		}
	})
	t.Run("callback of another workspace's connection", func(t *testing.T) {
		st, r := w.do(t, "POST", "/api/mcp-connections/"+conn+"/authorize", a.admin, nil)
		mustStatus(t, "authorize", st, http.StatusOK, r)
		cb := consentURL(t, r["authorizationUrl"].(string), "mallory", a.admin)
		code, page := browserGet(t, cb, b.admin)
		if code != http.StatusBadRequest || !strings.Contains(page, "another user or workspace") {
			t.Errorf("B's admin completed A's authorization: %d %s", code, page)
		}
		// and the state is spent
		if code, _ := browserGet(t, cb, a.admin); code != http.StatusBadRequest {
			t.Errorf("state reusable after a refused callback: %d", code)
		}
		if st, _ := w.do(t, "POST", "/api/mcp-connections/"+conn+"/authorize", b.admin, nil); st != http.StatusNotFound {
			t.Errorf("B's admin may authorize A's connection: %d", st)
		}
		if st, _ := w.do(t, "POST", "/api/mcp-connections/"+conn+"/authorize", a.member, nil); st != http.StatusForbidden {
			t.Errorf("a member may re-authorize a shared oauth connection: %d", st)
		}
	})
	t.Run("consent page refusals", func(t *testing.T) {
		// A's admin's link for the shared grant, opened by everyone else: no session (401),
		// another workspace's admin, a member of the same workspace (403); nothing stored,
		// the grant as it was; then the admin who began it goes through.
		_, before := w.do(t, "GET", "/api/mcp-connections/"+conn, a.admin, nil)
		st, r := w.do(t, "POST", "/api/mcp-connections/"+conn+"/authorize", a.admin, nil)
		mustStatus(t, "authorize", st, http.StatusOK, r)
		link := r["authorizationUrl"].(string)
		for _, tt := range []struct {
			name, token string
			want        int
		}{{"no session", "", http.StatusUnauthorized}, {"another workspace's admin", b.admin, http.StatusForbidden},
			{"a member", a.member, http.StatusForbidden}, {"a member named like the admin", stacktest.Token(t, "admin-A", auth.RoleMember, a.id), http.StatusForbidden}} {
			if st, asURL, body := consentPage(t, link, tt.token); st != tt.want || asURL != "" {
				t.Errorf("%s: %d %v", tt.name, st, body)
			}
		}
		// A newer link replaces this one: opening the old one is refused as replaced.
		st, r = w.do(t, "POST", "/api/mcp-connections/"+conn+"/authorize", a.admin, nil)
		mustStatus(t, "authorize again", st, http.StatusOK, r)
		if st, asURL, body := consentPage(t, link, a.admin); st != http.StatusNotFound || asURL != "" || !strings.Contains(fmt.Sprint(body), "replaced") {
			t.Errorf("the replaced link: %d %v", st, body)
		}
		link = r["authorizationUrl"].(string)
		_, after := w.do(t, "GET", "/api/mcp-connections/"+conn, a.admin, nil)
		if fmt.Sprint(before["authorization"]) != fmt.Sprint(after["authorization"]) {
			t.Errorf("the grant changed: %v → %v", before["authorization"], after["authorization"])
		}
		// Each refusal by a signed-in principal is in A's event log, on the connection, by
		// who opened the link and why (no session: refused before any principal exists).
		st, ev := w.do(t, "GET", "/api/events?workspaceId="+a.id+"&action=mcp.consent_refused", a.admin, nil)
		mustStatus(t, "events", st, http.StatusOK, ev)
		var got []string
		for _, e := range ev["events"].([]any) {
			e := e.(map[string]any)
			if e["entityType"] != "mcp_connection" || e["entityId"] != conn || strings.Contains(fmt.Sprint(e["payload"]), "consent/") {
				t.Errorf("refusal event %v", e)
			}
			got = append(got, fmt.Sprint(e["actor"], ": ", e["payload"].(map[string]any)["reason"]))
		}
		slices.Sort(got)
		want := []string{"admin-A: not an admin", "admin-A: replaced", "admin-B: another user or workspace", "member-A: another user or workspace"}
		if !slices.Equal(got, want) {
			t.Errorf("consent_refused events %q, want %q", got, want)
		}
		if st, asURL, body := consentPage(t, link, a.admin); st != http.StatusOK || !strings.HasPrefix(asURL, up.URL()+"/authorize?") {
			t.Errorf("the admin who began it: %d %v", st, body)
		}
	})
	t.Run("oauth settings", func(t *testing.T) {
		// The catalog entry's scopes (superuser) reach the authorization URL of its installs.
		st, r := w.do(t, "PUT", "/api/mcp-marketplace/"+entry+"/auth", w.su, map[string]any{"authMode": "oauth",
			"oauth": map[string]any{"scopes": []string{"entry:scope"}}})
		mustStatus(t, "entry settings", st, http.StatusOK, r)
		if st, r := w.do(t, "PUT", "/api/mcp-marketplace/"+entry+"/auth", w.su, map[string]any{"authMode": "oauth",
			"oauth": map[string]any{"metadataUrl": "ftp://x.example/meta"}}); st != http.StatusBadRequest {
			t.Errorf("entry metadataUrl ftp: %d %v", st, r)
		}
		st, r = w.do(t, "POST", "/api/mcp-connections/"+conn+"/authorize", a.admin, nil)
		mustStatus(t, "authorize", st, http.StatusOK, r)
		if _, asURL, _ := consentPage(t, r["authorizationUrl"].(string), a.admin); !strings.Contains(asURL, "entry%3Ascope") {
			t.Errorf("the entry's scope is missing from %s", asURL)
		}
		path := "/api/mcp-connections/" + conn + "/oauth-settings"
		if st, r := w.do(t, "PUT", path, a.admin, map[string]any{"authorizationParams": map[string]string{"state": "x"}}); st != http.StatusBadRequest {
			t.Errorf("reserved parameter: %d %v", st, r)
		}
		if st, _ := w.do(t, "PUT", path, a.member, map[string]any{}); st != http.StatusForbidden {
			t.Errorf("member: %d", st)
		}
		st, r = w.do(t, "PUT", path, a.admin, map[string]any{"scopes": []string{"read:org"},
			"authorizationParams": map[string]string{"audience": "https://api.example", "prompt": "consent"}})
		mustStatus(t, "set", st, http.StatusOK, r)
		st, r = w.do(t, "POST", "/api/mcp-connections/"+conn+"/authorize", a.admin, nil)
		mustStatus(t, "authorize", st, http.StatusOK, r)
		_, asURL, _ := consentPage(t, r["authorizationUrl"].(string), a.admin)
		for _, want := range []string{"read%3Aorg", "audience=https%3A%2F%2Fapi.example", "prompt=consent"} {
			if !strings.Contains(asURL, want) {
				t.Errorf("%s missing from %s", want, asURL)
			}
		}
		if strings.Contains(asURL, "entry%3Ascope") {
			t.Errorf("the connection's scopes do not replace the entry's: %s", asURL)
		}
		st, r = w.do(t, "GET", path, a.admin, nil)
		if st != http.StatusOK || fmt.Sprint(r["effective"].(map[string]any)["scopes"]) != "[read:org]" {
			t.Errorf("GET: %d %v", st, r)
		}
		// Back to discovery as the spec says, for the subtests below.
		mustStatus(t, "clear", func() int { st, _ := w.do(t, "PUT", path, a.admin, map[string]any{}); return st }(), http.StatusOK, nil)
		mustStatus(t, "clear entry", func() int {
			st, _ := w.do(t, "PUT", "/api/mcp-marketplace/"+entry+"/auth", w.su, map[string]any{"authMode": "oauth", "oauth": map[string]any{}})
			return st
		}(), http.StatusOK, nil)
	})
	t.Run("refresh on 401", func(t *testing.T) {
		up.ExpireAll()
		before, _, _ := up.Counts()
		st, r := w.do(t, "POST", "/api/mcp-connections/"+conn+"/test", a.admin, nil)
		if st != http.StatusOK || r["success"] != true {
			t.Fatalf("test after expiry: %d %v", st, r)
		}
		if after, _, _ := up.Counts(); after != before+1 {
			t.Errorf("refreshes %d → %d", before, after)
		}
		collect()
	})
	t.Run("revoked refresh token", func(t *testing.T) {
		up.SetRefuseRefresh(true)
		defer up.SetRefuseRefresh(false)
		up.ExpireAll()
		_, _, calls := up.Counts()
		st, r := w.do(t, "POST", "/api/mcp-connections/"+conn+"/test", a.admin, nil)
		if st != http.StatusOK || r["success"] != false {
			t.Fatalf("test with a revoked refresh token: %d %v", st, r)
		}
		_, c := w.do(t, "GET", "/api/mcp-connections/"+conn, a.admin, nil)
		if az := c["authorization"].(map[string]any); az["authorization"] != "expired" || !strings.Contains(fmt.Sprint(az["reason"]), "invalid_grant") {
			t.Errorf("status after a refused refresh: %v", az)
		}
		// With no usable token nothing is sent upstream.
		row, _ := db.ConnectionGet(t.Context(), w.env.Pool, conn)
		tgt := w.env.Deps.Connections.TargetFor(t.Context(), row, "admin-A")
		_, err := w.env.Deps.Upstreams.CallTool(t.Context(), tgt, &mcp.CallToolParams{Name: "whoami"})
		if err == nil {
			t.Error("a call went through without a usable token")
		}
		if _, _, after := up.Counts(); after["alice"] != calls["alice"] {
			t.Errorf("the upstream tool ran %d more times", after["alice"]-calls["alice"])
		}
		// The gateway's answer: a member is told to ask an admin, an admin gets the link.
		_, res, rpcErr, err := w.env.Deps.Connections.PrepareCall(t.Context(), row,
			&auth.Principal{Subject: "member-A", Role: auth.RoleMember, Workspaces: []string{a.id}}, "2025-11-25")
		if err != nil || rpcErr != nil || res == nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "admin") {
			t.Errorf("member's answer for an expired shared grant: %v %v %v", res, rpcErr, err)
		}
		_, _, rpcErr, _ = w.env.Deps.Connections.PrepareCall(t.Context(), row,
			&auth.Principal{Subject: "admin-A", Role: auth.RoleAdmin, Workspaces: []string{a.id}}, "2025-11-25")
		if je := (*jsonrpc.Error)(nil); !errors.As(rpcErr, &je) || je.Code != -32042 || !strings.Contains(string(je.Data), "expired") {
			t.Errorf("admin's answer for an expired shared grant: %v", rpcErr)
		}
		// Re-authorize.
		st, r = w.do(t, "POST", "/api/mcp-connections/"+conn+"/authorize", a.admin, nil)
		mustStatus(t, "re-authorize", st, http.StatusOK, r)
		if code, page := browserGet(t, consentURL(t, r["authorizationUrl"].(string), "alice", a.admin), a.admin); code != 200 {
			t.Fatalf("re-authorize callback: %d %s", code, page)
		}
		collect()
		_, c = w.do(t, "GET", "/api/mcp-connections/"+conn, a.admin, nil)
		if az := c["authorization"].(map[string]any); az["authorization"] != "authorized" {
			t.Errorf("after re-authorizing: %v", az)
		}
	})

	t.Run("oauth_per_user", func(t *testing.T) {
		st, e := w.do(t, "POST", "/api/mcp-marketplace", w.su, map[string]any{
			"name": "Protected per user", "url": up.MCPURL(), "transportType": "streamable-http", "category": "testing"})
		mustStatus(t, "create entry", st, http.StatusCreated, e)
		st, inst := w.do(t, "POST", "/api/mcp-marketplace/"+e["id"].(string)+"/install", a.admin,
			map[string]any{"workspaceId": a.id, "authMode": "oauth_per_user"})
		mustStatus(t, "install", st, http.StatusCreated, inst)
		pconn := inst["id"].(string)
		accounts := map[string]string{"admin-A": "carol", "member-A": "bob"}
		if code, _ := browserGet(t, consentURL(t, authURLOf(t, "install", inst), accounts["admin-A"], a.admin), ""); code != 200 {
			t.Fatal("admin consent failed")
		}
		st, r := w.do(t, "POST", "/api/mcp-connections/"+pconn+"/authorize", a.member, nil)
		mustStatus(t, "member authorize", st, http.StatusOK, r)
		if code, _ := browserGet(t, consentURL(t, r["authorizationUrl"].(string), accounts["member-A"], a.member), a.member); code != 200 {
			t.Fatal("member consent failed")
		}
		collect()
		row, err := db.ConnectionGet(t.Context(), w.env.Pool, pconn)
		if err != nil {
			t.Fatal(err)
		}
		for sub, account := range accounts {
			tgt := w.env.Deps.Connections.TargetFor(t.Context(), row, sub)
			res, err := w.env.Deps.Upstreams.CallTool(t.Context(), tgt, &mcp.CallToolParams{Name: "whoami"})
			if err != nil || res.Content[0].(*mcp.TextContent).Text != account {
				t.Errorf("%s reached the upstream as %v (%v), want %s", sub, res, err, account)
			}
		}
		_, _, before := up.Counts()
		tgt := w.env.Deps.Connections.TargetFor(t.Context(), row, "member-A2")
		if _, err := w.env.Deps.Upstreams.CallTool(t.Context(), tgt, &mcp.CallToolParams{Name: "whoami"}); err == nil {
			t.Error("a member without a grant reached the upstream")
		}
		if _, _, after := up.Counts(); !maps.Equal(after, before) {
			t.Errorf("the upstream received calls from a member without a grant: %v, before %v", after, before)
		}
		if _, err := tgt.Credentials.Token(t.Context()); !errors.Is(err, upstreamauth.ErrAuthorizationRequired) {
			t.Errorf("Token = %v", err)
		}
		// What the gateway answers that member instead (connections.Service.PrepareCall).
		member2 := &auth.Principal{Subject: "member-A2", Role: auth.RoleMember, Workspaces: []string{a.id}}
		for _, v := range []string{"2025-11-25", "2026-07-28", "2025-06-18"} {
			_, res, rpcErr, err := w.env.Deps.Connections.PrepareCall(t.Context(), row, member2, v)
			if err != nil {
				t.Fatal(err)
			}
			if v >= "2026-07-28" {
				// No -32042 at that revision: the URL elicitation inside an InputRequiredResult.
				ep, _ := res.InputRequests[upstreamauth.InputKey].(*mcp.ElicitParams)
				if rpcErr != nil || ep == nil || ep.Mode != "url" || !strings.Contains(ep.URL, "/admin/#/consent/") {
					t.Errorf("%s: answer %v / %v, want a URL elicitation with the link", v, res, rpcErr)
				}
				continue
			}
			if v >= "2025-11-25" {
				var je *jsonrpc.Error
				if !errors.As(rpcErr, &je) || je.Code != -32042 || !strings.Contains(string(je.Data), "/admin/#/consent/") || res != nil {
					t.Errorf("%s: answer %v / %v, want the -32042 error with the link", v, res, rpcErr)
				}
				continue
			}
			if rpcErr != nil || res == nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "/admin/#/consent/") {
				t.Errorf("%s: answer %v / %v, want isError with the link", v, res, rpcErr)
			}
		}
		// A member with a grant goes through.
		m1 := &auth.Principal{Subject: "member-A", Role: auth.RoleMember, Workspaces: []string{a.id}}
		if tgt, res, rpcErr, err := w.env.Deps.Connections.PrepareCall(t.Context(), row, m1, "2025-11-25"); err != nil || res != nil || rpcErr != nil || tgt.Credentials == nil {
			t.Errorf("member with a grant: %v %v %v", res, rpcErr, err)
		}
		// Through the gateway itself: each caller reaches the upstream as their own account;
		// a member without a grant gets the way to authorize (-32042 from 2025-11-25, an
		// isError result with the link before) and nothing is forwarded.
		whoami := "mcp_" + inst["handle"].(string) + "_whoami"
		for tok, account := range map[string]string{a.admin: "carol", a.member: "bob"} {
			_, m, out := w.call(t, "/mcp/"+a.id, tok, whoami, map[string]any{}, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
			if out != "ok" || !strings.Contains(fmt.Sprint(m["result"]), account) {
				t.Errorf("gateway call as %s: %s %v", account, out, m)
			}
		}
		_, _, before = up.Counts()
		noGrant := stacktest.Token(t, "member-A2", auth.RoleMember, a.id)
		_, m, _ := w.call(t, "/mcp/"+a.id, noGrant, whoami, map[string]any{}, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(-32042) || !strings.Contains(fmt.Sprint(e["data"]), "/admin/#/consent/") {
			t.Errorf("gateway at 2025-11-25 for a member without a grant: %v", m)
		}
		_, m, out := w.call(t, "/mcp/"+a.id, noGrant, whoami, map[string]any{}, map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
		if out != "upstream-error" || !strings.Contains(fmt.Sprint(m["result"]), "/admin/#/consent/") {
			t.Errorf("gateway at 2025-06-18 for a member without a grant: %s %v", out, m)
		}
		if _, _, after := up.Counts(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the upstream saw calls from a member without a grant: %v → %v", before, after)
		}
		// Each sees their own status.
		for tok, want := range map[string]string{a.member: "member-A", a.admin: "admin-A"} {
			st, s := w.do(t, "GET", "/api/mcp-connections/statuses?workspaceId="+a.id, tok, nil)
			if tok == a.member {
				if st != http.StatusForbidden {
					t.Errorf("statuses for a member: %d", st)
				}
				continue
			}
			for _, x := range s["statuses"].([]any) {
				x := x.(map[string]any)
				if x["connectionId"] == pconn && x["authorization"].(map[string]any)["authorizedBy"] != want {
					t.Errorf("statuses show %v for %s", x["authorization"], want)
				}
			}
		}
	})

	t.Run("manual oauth connection", func(t *testing.T) {
		st, r := w.do(t, "POST", "/api/mcp-connections", a.admin, map[string]any{
			"name": "Manual protected", "url": up.MCPURL(), "workspaceId": a.id, "authMode": "oauth"})
		mustStatus(t, "create", st, http.StatusCreated, r)
		if code, _ := browserGet(t, consentURL(t, authURLOf(t, "create", r), "dave", a.admin), ""); code != http.StatusOK {
			t.Fatal("consent failed")
		}
		st, tl := w.do(t, "GET", "/api/mcp-connections/"+r["id"].(string)+"/tools", a.admin, nil)
		if st != http.StatusOK || !strings.Contains(fmt.Sprint(tl), "whoami") {
			t.Errorf("tools after consent: %d %v", st, tl)
		}
		if st, _ := w.do(t, "POST", "/api/mcp-connections", a.admin, map[string]any{
			"name": "Bad mode", "url": up.MCPURL(), "workspaceId": a.id, "authMode": "kerberos"}); st != http.StatusBadRequest {
			t.Errorf("unknown authMode: %d", st)
		}
		collect()
	})

	t.Run("client_credentials with a pre-registered client", func(t *testing.T) {
		const clientSecret = "cc-secret-0b1f5e"
		up.RegisterClient("gateway-m2m", clientSecret)
		st, e := w.do(t, "POST", "/api/mcp-marketplace", w.su, map[string]any{
			"name": "Protected m2m", "url": up.MCPURL(), "transportType": "streamable-http", "category": "testing"})
		mustStatus(t, "create entry", st, http.StatusCreated, e)
		id := e["id"].(string)
		body := map[string]any{"authMode": "client_credentials", "client": map[string]any{
			"clientId": "gateway-m2m", "clientSecret": clientSecret, "tokenEndpointAuth": "client_secret_basic"}}
		if st, _ := w.do(t, "PUT", "/api/mcp-marketplace/"+id+"/auth", a.admin, body); st != http.StatusForbidden {
			t.Errorf("an admin set a shared entry's client: %d", st)
		}
		st, r := w.do(t, "PUT", "/api/mcp-marketplace/"+id+"/auth", w.su, body)
		mustStatus(t, "set entry auth", st, http.StatusOK, r)
		if cl := r["client"].(map[string]any); cl["hasSecret"] != true || strings.Contains(fmt.Sprint(r), clientSecret) {
			t.Errorf("answer: %v", r)
		}
		st, inst := w.do(t, "POST", "/api/mcp-marketplace/"+id+"/install", a.admin, map[string]any{"workspaceId": a.id})
		mustStatus(t, "install", st, http.StatusCreated, inst)
		if cn, _ := inst["connect"].(map[string]any); inst["authMode"] != "client_credentials" || cn["success"] != true {
			t.Fatalf("client_credentials install did not connect: %v", inst)
		}
		var sealed []byte
		if err := w.env.Pool.QueryRow(t.Context(), `SELECT client_secret_sealed FROM mcp_oauth_clients WHERE catalog_entry_id = $1`, id).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if len(sealed) == 0 || strings.Contains(string(sealed), clientSecret) {
			t.Error("the client secret is not stored sealed")
		}
		var events string
		_ = w.env.Pool.QueryRow(t.Context(), `SELECT coalesce(string_agg(payload::text, E'\n'), '') FROM event_log`).Scan(&events)
		if strings.Contains(events, clientSecret) || strings.Contains(w.env.Logs.String(), clientSecret) {
			t.Error("the client secret is in event_log or the logs")
		}
		tokens = append(tokens, clientSecret)
		collect()
	})

	t.Run("uninstall revokes and deletes the tokens", func(t *testing.T) {
		collect()
		st, _ := w.do(t, "DELETE", "/api/mcp-marketplace/"+entry+"/install?workspaceId="+a.id, a.admin, nil)
		if st != http.StatusNoContent {
			t.Fatalf("uninstall: %d", st)
		}
		if n := w.count(t, `SELECT count(*) FROM mcp_oauth_grants WHERE connection_id = $1`, conn); n != 0 {
			t.Errorf("%d grants left after uninstall", n)
		}
		_, revoked, _ := up.Counts()
		if len(revoked) < 2 {
			t.Errorf("revocation endpoint got %d tokens, want the refresh and access token", len(revoked))
		}
	})

	t.Run("no token anywhere", func(t *testing.T) {
		if len(tokens) < 6 {
			t.Fatalf("only %d tokens collected", len(tokens))
		}
		leak := func(where, text string) {
			t.Helper()
			for _, tok := range tokens {
				if strings.Contains(text, tok) {
					t.Errorf("%s contain an upstream token", where)
					return
				}
			}
		}
		leak("logs", w.env.Logs.String())
		var rows string
		if err := w.env.Pool.QueryRow(t.Context(), `SELECT coalesce(string_agg(row_to_json(e)::text, E'\n'), '') FROM event_log e`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rows, "mcp.authorized") {
			t.Error("event_log has no mcp.authorized row")
		}
		leak("event_log", rows)
		var grants string
		_ = w.env.Pool.QueryRow(t.Context(), `SELECT coalesce(string_agg(row_to_json(g)::text, E'\n'), '') FROM mcp_oauth_grants g`).Scan(&grants)
		leak("mcp_oauth_grants (stored sealed)", grants)
		dir := w.env.Deps.Store.(*catalog.DiskStore).Dir
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := os.ReadFile(p)
				leak("catalog document "+d.Name(), string(data))
			}
			return nil
		})
		for _, p := range []string{"/api/mcp-connections?workspaceId=" + a.id, "/api/mcp-connections/statuses?workspaceId=" + a.id} {
			_, raw := w.env.Do(t, "GET", p, a.admin, nil)
			leak("GET "+p, string(raw))
		}
	})
}

// TestUpstreamOAuthTypeScriptSDK installs the official TypeScript SDK's example server with
// its demo OAuth provider (@modelcontextprotocol/sdk, pinned in test/npm; `--oauth`: a
// separate authorization server with dynamic registration, PKCE and token introspection)
// from a catalog entry, follows the authorizationUrl headlessly, and checks that the tools
// appear in the gateway. (The demo provider issues no refresh tokens and has no revocation
// endpoint; refresh and revocation are covered by TestUpstreamOAuth.)
func TestUpstreamOAuthTypeScriptSDK(t *testing.T) {
	npm := testpeer.NPMDir(t)
	mcpPort, authPort := freePort(t), freePort(t)
	testpeer.StartNode(t, npm, []string{"MCP_PORT=" + mcpPort, "MCP_AUTH_PORT=" + authPort},
		filepath.Join(npm, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js"), "--oauth")
	waitPort(t, "127.0.0.1:"+mcpPort)
	waitPort(t, "127.0.0.1:"+authPort)
	serverURL := "http://localhost:" + mcpPort + "/mcp" // the resource the example's metadata names

	w := newWorld(t, nil)
	a := w.ws["A"]
	st, e := w.do(t, "POST", "/api/mcp-marketplace", w.su, map[string]any{
		"name": "TS SDK OAuth example", "url": serverURL, "transportType": "streamable-http", "category": "testing"})
	mustStatus(t, "create entry", st, http.StatusCreated, e)
	if err := db.CatalogEntryAuthModeSet(t.Context(), w.env.Pool, e["id"].(string), "oauth"); err != nil {
		t.Fatal(err)
	}
	st, inst := w.do(t, "POST", "/api/mcp-marketplace/"+e["id"].(string)+"/install", a.admin, map[string]any{"workspaceId": a.id})
	mustStatus(t, "install", st, http.StatusCreated, inst)
	_, authURL, _ := consentPage(t, authURLOf(t, "install", inst), a.admin)
	if !strings.HasPrefix(authURL, "http://localhost:"+authPort+"/authorize?") || !strings.Contains(authURL, "code_challenge_method=S256") ||
		!strings.Contains(authURL, "resource=http%3A%2F%2Flocalhost%3A"+mcpPort+"%2Fmcp") {
		t.Errorf("authorization URL %s", authURL)
	}
	loc, err := testpeer.Consent(t.Context(), authURL, "")
	if err != nil {
		t.Fatal(err)
	}
	code, page := browserGet(t, loc.String(), "")
	if code != http.StatusOK || !strings.Contains(page, `data-status="authorized"`) {
		t.Fatalf("callback: %d %s", code, page)
	}
	conn, handle := inst["id"].(string), inst["handle"].(string)
	_, c := w.do(t, "GET", "/api/mcp-connections/"+conn, a.admin, nil)
	if az := c["authorization"].(map[string]any); az["authorization"] != "authorized" || c["lastError"] != nil {
		t.Errorf("after consent: %v, lastError %v", az, c["lastError"])
	}
	_, m := w.rpc(t, "/mcp/"+a.id, a.admin, "tools/list", nil, nil)
	if !strings.Contains(fmt.Sprint(m), "mcp_"+handle+"_greet") {
		t.Errorf("tools/list lacks the example's greet tool: %v", m)
	}
	// The stored token works upstream (the gateway's call path uses the same target).
	row, _ := db.ConnectionGet(t.Context(), w.env.Pool, conn)
	res, err := w.env.Deps.Upstreams.CallTool(t.Context(), w.env.Deps.Connections.TargetFor(t.Context(), row, "admin-A"),
		&mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "gateway"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "gateway") {
		t.Errorf("greet through the stored token: %v %v", res, err)
	}
	// Uninstall deletes the grant (the example offers no revocation endpoint).
	if st, _ := w.do(t, "DELETE", "/api/mcp-marketplace/"+e["id"].(string)+"/install?workspaceId="+a.id, a.admin, nil); st != http.StatusNoContent {
		t.Fatalf("uninstall: %d", st)
	}
	if n := w.count(t, `SELECT count(*) FROM mcp_oauth_grants WHERE connection_id = $1`, conn); n != 0 {
		t.Errorf("%d grants left", n)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

func waitPort(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not listen", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestEntryClientScopes (issue 34): a catalog entry whose pre-registered client is
// configured with scopes ["gmail.readonly"] installs with an authorization URL asking for
// exactly those (and offline_access, which the authorization server offers) — not every
// scope of the upstream's scopes_supported or challenge; with the entry's oauth.scopes
// setting also set, the setting wins. The client is stored with its scopes.
func TestEntryClientScopes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	a := w.ws["A"]
	up := testpeer.NewOAuthUpstream(t)
	up.RegisterClient("gmail-client", "gmail-secret-77")
	for _, tc := range []struct {
		name  string
		oauth map[string]any
		want  string
	}{
		{"client scopes", nil, "gmail.readonly offline_access"},
		{"oauth.scopes wins", map[string]any{"scopes": []string{"gmail.send"}}, "gmail.send offline_access"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, e := w.do(t, "POST", "/api/mcp-marketplace", w.su, map[string]any{
				"name": "Gmail " + tc.name, "url": up.MCPURL(), "transportType": "streamable-http", "category": "testing"})
			mustStatus(t, "create entry", st, http.StatusCreated, e)
			id := e["id"].(string)
			body := map[string]any{"authMode": "oauth", "client": map[string]any{
				"clientId": "gmail-client", "clientSecret": "gmail-secret-77", "scopes": []string{"gmail.readonly"}}}
			if tc.oauth != nil {
				body["oauth"] = tc.oauth
			}
			st, r := w.do(t, "PUT", "/api/mcp-marketplace/"+id+"/auth", w.su, body)
			mustStatus(t, "set entry auth", st, http.StatusOK, r)
			var stored []string
			if err := w.env.Pool.QueryRow(t.Context(), `SELECT scopes FROM mcp_oauth_clients WHERE catalog_entry_id = $1`, id).Scan(&stored); err != nil ||
				!slices.Equal(stored, []string{"gmail.readonly"}) {
				t.Errorf("stored client scopes %v (%v)", stored, err)
			}
			st, inst := w.do(t, "POST", "/api/mcp-marketplace/"+id+"/install", a.admin, map[string]any{"workspaceId": a.id})
			mustStatus(t, "install", st, http.StatusCreated, inst)
			st, asURL, page := consentPage(t, authURLOf(t, "install", inst), a.admin)
			if st != http.StatusOK {
				t.Fatalf("consent page: %d %v", st, page)
			}
			q := mustParse(t, asURL).Query()
			if got := q.Get("scope"); got != tc.want || q.Get("client_id") != "gmail-client" {
				t.Errorf("authorization URL asks scope %q as %q, want %q as gmail-client", got, q.Get("client_id"), tc.want)
			}
		})
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
