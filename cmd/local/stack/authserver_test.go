package stack_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
)

// testIdentity plays the identity half for the authorization server's tests: the browser
// session is a cookie naming the person (set by /test-signin), memberships a map the test
// edits (removing a member).
type testIdentity struct {
	mu      sync.Mutex
	members map[string][]authserver.Membership
	groups  map[string][]string // each person's identity-provider groups
	super   map[string]bool     // superusers (the platform flag)
	// superErr, when set, fails Superuser (a failed read of the people table).
	superErr error
}

const testPersonCookie = "test-person"

func (ti *testIdentity) Person(r *http.Request) (authserver.Person, bool) {
	c, err := r.Cookie(testPersonCookie)
	if err != nil || c.Value == "" {
		return authserver.Person{}, false
	}
	return authserver.Person{ID: c.Value, Email: c.Value + "@example.com", Name: c.Value}, true
}

func (ti *testIdentity) SignInURL(returnTo string) string {
	return "/test-signin?return=" + url.QueryEscape(returnTo)
}

func (ti *testIdentity) Memberships(_ context.Context, person string) ([]authserver.Membership, error) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return append([]authserver.Membership(nil), ti.members[person]...), nil
}

func (ti *testIdentity) Groups(_ context.Context, person string) ([]string, error) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return append([]string(nil), ti.groups[person]...), nil
}

func (ti *testIdentity) Superuser(_ context.Context, person string) (bool, error) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return ti.super[person], ti.superErr
}

func (ti *testIdentity) setGroups(person string, groups ...string) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.groups[person] = groups
}

func (ti *testIdentity) set(person string, ms ...authserver.Membership) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.members[person] = ms
}

// asWorld is the cross-cutting world with the authorization server on, person "ada" a
// member of workspace A.
type asWorld struct {
	*world
	id *testIdentity
}

func newASWorld(t *testing.T, edit func(*authserver.Options)) *asWorld {
	t.Helper()
	ti := &testIdentity{members: map[string][]authserver.Membership{}, groups: map[string][]string{}, super: map[string]bool{}}
	w := newWorld(t, &stacktest.Options{Stack: &stack.Options{
		Identity:   &stack.Identity{Sessions: ti, Members: ti},
		AuthServer: edit,
	}})
	ti.set("ada", authserver.Membership{WorkspaceID: w.ws["A"].id, Role: auth.RoleMember})
	return &asWorld{world: w, id: ti}
}

// browser is a person's browser: a cookie jar signed in as person, no redirects followed.
func (w *asWorld) browser(t *testing.T, person string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(w.env.URL)
	jar.SetCookies(u, []*http.Cookie{{Name: testPersonCookie, Value: person, Path: "/"}})
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// pkce returns a verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// register registers a client with redirect and returns its client_id.
func (w *asWorld) register(t *testing.T, redirect string) string {
	t.Helper()
	st, b := w.post(t, authserver.RegisterPath, "application/json",
		fmt.Sprintf(`{"redirect_uris":[%q],"client_name":"Test Client","token_endpoint_auth_method":"none"}`, redirect))
	if st != http.StatusCreated {
		t.Fatalf("register: %d %v", st, b)
	}
	return b["client_id"].(string)
}

func (w *asWorld) post(t *testing.T, path, ctype, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(w.env.URL+path, ctype, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m
}

// authorizeURL is an authorization request of client with a fresh PKCE pair.
func (w *asWorld) authorizeURL(client, redirect string, extra url.Values) (string, string) {
	verifier, challenge := pkce()
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"st-12345678"},
		"resource": {w.env.URL + "/mcp"}, "scope": {"mcp"}}
	for k, v := range extra {
		q[k] = v
	}
	for k, v := range q {
		if len(v) == 1 && v[0] == "" {
			delete(q, k)
		}
	}
	return w.env.URL + authserver.AuthorizePath + "?" + q.Encode(), verifier
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// consent opens the authorization URL in b, allows on the consent page when shown, and
// returns the code from the redirect.
func (w *asWorld) consent(t *testing.T, b *http.Client, authURL, redirect string) string {
	t.Helper()
	return w.consentRedirect(t, b, authURL, redirect).Query().Get("code")
}

// consentRedirect is consent returning the whole redirect (code, state, iss) to redirect.
func (w *asWorld) consentRedirect(t *testing.T, b *http.Client, authURL, redirect string) *url.URL {
	t.Helper()
	resp, err := b.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		form := url.Values{"decision": {"allow"}}
		for _, m := range hiddenInput.FindAllStringSubmatch(string(body), -1) {
			form.Add(m[1], htmlUnescape(m[2]))
		}
		if m := regexp.MustCompile(`<option value="([^"]+)" selected`).FindStringSubmatch(string(body)); m != nil {
			form.Set("workspace", m[1])
		}
		if resp, err = b.PostForm(w.env.URL+authserver.AuthorizePath, form); err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if !isRedirect(resp.StatusCode) {
		t.Fatalf("authorize: %d %s", resp.StatusCode, body)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if !strings.HasPrefix(loc.String(), redirect) || loc.Query().Get("code") == "" {
		t.Fatalf("authorize redirected to %s\n%s", loc, w.env.Logs.String()[max(0, len(w.env.Logs.String())-3000):])
	}
	return loc
}

// isRedirect: fosite answers the authorization endpoint with 303 See Other.
func isRedirect(st int) bool { return st == http.StatusFound || st == http.StatusSeeOther }

func htmlUnescape(s string) string {
	r := strings.NewReplacer("&amp;", "&", "&#43;", "+", "&#39;", "'", "&#34;", `"`, "&lt;", "<", "&gt;", ">")
	return r.Replace(s)
}

// tokenReq posts a token request and returns the status and body.
func (w *asWorld) tokenReq(t *testing.T, form url.Values) (int, map[string]any) {
	t.Helper()
	return w.post(t, authserver.TokenPath, "application/x-www-form-urlencoded", form.Encode())
}

func (w *asWorld) exchange(t *testing.T, client, redirect, code, verifier string) (int, map[string]any) {
	t.Helper()
	return w.tokenReq(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {w.env.URL + "/mcp"}})
}

func (w *asWorld) refresh(t *testing.T, client, rt string) (int, map[string]any) {
	t.Helper()
	return w.tokenReq(t, url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {rt},
		"resource": {w.env.URL + "/mcp"}})
}

// signIn runs the whole flow for person with a registered client and returns the tokens.
func (w *asWorld) signIn(t *testing.T, person string) (client, access, refresh string) {
	t.Helper()
	redirect := "http://127.0.0.1:9/callback"
	client = w.register(t, redirect)
	authURL, verifier := w.authorizeURL(client, redirect, nil)
	code := w.consent(t, w.browser(t, person), authURL, redirect)
	st, tok := w.exchange(t, client, redirect, code, verifier)
	if st != http.StatusOK {
		t.Fatalf("token: %d %v", st, tok)
	}
	return client, tok["access_token"].(string), tok["refresh_token"].(string)
}

// challenged asserts that a tools/list with token is answered 401 with the RFC 9728
// challenge naming the resource metadata.
func (w *asWorld) challenged(t *testing.T, token, path string) {
	t.Helper()
	resp, _ := w.env.RPC(t, path, token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("want a 401 challenge, got %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

func TestAuthServerDiscovery(t *testing.T) {
	w := newASWorld(t, nil)
	w.challenged(t, "", "/mcp/"+w.ws["A"].id)
	var prm map[string]any
	getJSON(t, w.env.URL+"/.well-known/oauth-protected-resource/mcp", &prm)
	if as, _ := prm["authorization_servers"].([]any); len(as) != 1 || as[0] != w.env.URL {
		t.Fatalf("protected resource metadata names %v, want this gateway %s", prm["authorization_servers"], w.env.URL)
	}
	var md map[string]any
	getJSON(t, w.env.URL+authserver.MetadataPath, &md)
	for k, want := range map[string]any{"issuer": w.env.URL, "token_endpoint": w.env.URL + authserver.TokenPath,
		"registration_endpoint": w.env.URL + authserver.RegisterPath, "client_id_metadata_document_supported": true} {
		if md[k] != want {
			t.Errorf("metadata %s = %v, want %v", k, md[k], want)
		}
	}
	if m, _ := md["code_challenge_methods_supported"].([]any); len(m) != 1 || m[0] != "S256" {
		t.Errorf("code_challenge_methods_supported = %v, want [S256]", md["code_challenge_methods_supported"])
	}
	var jwks map[string]any
	getJSON(t, w.env.URL+authserver.JWKSPath, &jwks)
	if keys, _ := jwks["keys"].([]any); len(keys) != 1 {
		t.Fatalf("jwks = %v", jwks)
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// The whole flow with a registered client, then what a member may do with the token, then
// refresh rotation and reuse.
func TestAuthServerFlowAndRefreshReuse(t *testing.T) {
	w := newASWorld(t, nil)
	a, b := w.ws["A"], w.ws["B"]
	client, access, rt := w.signIn(t, "ada")

	st, m := w.rpc(t, "/mcp/"+a.id, access, "tools/list", nil, nil)
	if st != 200 || !hasPrefix(toolNames(m), "mcp_"+a.handle+"_") {
		t.Fatalf("tools/list as ada: %d %v", st, m)
	}
	if st, _, out := w.call(t, "/mcp/"+a.id, access, "mcp_"+a.handle+"_echo", map[string]any{"message": "hi"}, nil); st != 200 || out != "ok" {
		t.Fatalf("tools/call as ada: %d %s", st, out)
	}
	// Member of A only: workspace B is forbidden.
	if st, m := w.rpc(t, "/mcp/"+b.id, access, "tools/list", nil, nil); st != http.StatusForbidden {
		t.Fatalf("ada's token on workspace B: %d %v, want 403", st, m)
	}
	// The token is for /mcp only: the REST API, which takes the console's tokens of this
	// server (aud <base>/api), refuses it (TestConsoleClient: and an /api token at /mcp).
	if st, m := w.do(t, "GET", "/api/mcp-connections?workspaceId="+a.id, access, nil); st != http.StatusUnauthorized ||
		!strings.Contains(fmt.Sprint(m), "another resource") {
		t.Fatalf("/mcp token on the REST API: %d %v, want 401 for another resource", st, m)
	}

	// Rotation: a new refresh token each time; the old one is then a reuse.
	st, r1 := w.refresh(t, client, rt)
	if st != 200 || r1["refresh_token"] == rt || r1["access_token"] == nil {
		t.Fatalf("refresh: %d %v", st, r1)
	}
	newAccess, newRT := r1["access_token"].(string), r1["refresh_token"].(string)
	if st, _ := w.rpc(t, "/mcp/"+a.id, newAccess, "tools/list", nil, nil); st != 200 {
		t.Fatalf("refreshed token: %d", st)
	}
	st, reuse := w.refresh(t, client, rt)
	if st != http.StatusBadRequest || reuse["error"] != "invalid_grant" {
		t.Fatalf("reused refresh token: %d %v, want 400 invalid_grant", st, reuse)
	}
	// The whole family is revoked: the newest refresh token is refused and the access
	// tokens are challenged again.
	if st, again := w.refresh(t, client, newRT); st != http.StatusBadRequest || again["error"] != "invalid_grant" {
		t.Fatalf("refresh after reuse: %d %v, want 400 invalid_grant", st, again)
	}
	w.challenged(t, newAccess, "/mcp/"+a.id)
	w.challenged(t, access, "/mcp/"+a.id)
}

// The identity provider's groups travel in the issued access token (a "groups" claim,
// copied at every code exchange and refresh), the gateway reads them back and the access
// policies see them: a policy that lets only group "eng" call tools allows ada (groups
// [eng]) and denies bob (no groups), both members of A.
func TestAuthServerGroupsReachPolicies(t *testing.T) {
	w := newASWorld(t, nil)
	a := w.ws["A"]
	w.id.setGroups("ada", "eng", "design")
	w.id.set("bob", authserver.Membership{WorkspaceID: a.id, Role: auth.RoleMember})
	st, b := w.do(t, "PUT", "/api/policies", a.admin, map[string]any{"workspaceId": a.id, "text": `permit(principal, action, resource);
forbid(principal, action == Action::"call", resource is Tool) unless { principal in Group::"eng" && principal.groups.contains("eng") };`})
	mustStatus(t, "policies", st, http.StatusOK, b)

	client, ada, rt := w.signIn(t, "ada")
	_, bob, _ := w.signIn(t, "bob")
	tool := "mcp_" + a.handle + "_echo"
	if st, _, out := w.call(t, "/mcp/"+a.id, ada, tool, map[string]any{"message": "hi"}, nil); st != 200 || out != "ok" {
		t.Fatalf("ada (group eng): %d %s, want ok", st, out)
	}
	if st, _, out := w.call(t, "/mcp/"+a.id, bob, tool, map[string]any{"message": "hi"}, nil); out == "ok" {
		t.Fatalf("bob (no group): %d %s, want denied", st, out)
	}
	// At the next refresh the token carries the groups of the person's last sign-in.
	w.id.setGroups("ada", "design")
	st, r := w.refresh(t, client, rt)
	if st != 200 {
		t.Fatalf("refresh: %d %v", st, r)
	}
	if st, _, out := w.call(t, "/mcp/"+a.id, r["access_token"].(string), tool, map[string]any{"message": "hi"}, nil); out == "ok" {
		t.Fatalf("ada out of eng after refresh: %d %s, want denied", st, out)
	}
	// More groups than a token carries: refused at the refresh, not silently cut (a
	// forbid by group could be escaped).
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("g%d", i)
	}
	w.id.setGroups("ada", many...)
	if st, r := w.refresh(t, client, r["refresh_token"].(string)); st != http.StatusBadRequest || r["error"] != "invalid_grant" {
		t.Fatalf("refresh with 101 groups: %d %v, want 400 invalid_grant", st, r)
	}
}

func TestAuthServerCodeReplay(t *testing.T) {
	w := newASWorld(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	client := w.register(t, redirect)
	authURL, verifier := w.authorizeURL(client, redirect, nil)
	code := w.consent(t, w.browser(t, "ada"), authURL, redirect)
	st, tok := w.exchange(t, client, redirect, code, verifier)
	if st != 200 {
		t.Fatalf("first exchange: %d %v", st, tok)
	}
	st, again := w.exchange(t, client, redirect, code, verifier)
	if st != http.StatusBadRequest || again["error"] != "invalid_grant" {
		t.Fatalf("code presented twice: %d %v, want 400 invalid_grant", st, again)
	}
	// What the first exchange issued is revoked (RFC 6749 §4.1.2).
	w.challenged(t, tok["access_token"].(string), "/mcp/"+w.ws["A"].id)
	if st, r := w.refresh(t, client, tok["refresh_token"].(string)); st != http.StatusBadRequest {
		t.Fatalf("refresh after code replay: %d %v", st, r)
	}
}

func TestAuthServerRemovedMemberLosesAccessAtRefresh(t *testing.T) {
	w := newASWorld(t, nil)
	client, _, rt := w.signIn(t, "ada")
	w.id.set("ada") // removed from every workspace
	st, r := w.refresh(t, client, rt)
	if st != http.StatusBadRequest || r["error"] != "invalid_grant" {
		t.Fatalf("refresh after removal: %d %v, want 400 invalid_grant", st, r)
	}
}

// Each bad authorization request gets its precise error and stores nothing.
func TestAuthServerBadAuthorizeRequests(t *testing.T) {
	w := newASWorld(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	client := w.register(t, redirect)
	b := w.browser(t, "ada")
	cases := []struct {
		name  string
		extra url.Values
		// redirected: the error goes to the client's redirect URI with this code; else an
		// HTML page naming the code and reason (the redirect URI itself is not trusted).
		redirected bool
		code       string
		reason     string // on the page, when not redirected
	}{
		{"unknown client", url.Values{"client_id": {"no-such-client"}}, false, "invalid_client", "not registered here"},
		{"redirect URI mismatch", url.Values{"redirect_uri": {"http://127.0.0.1:9/other"}}, false, "invalid_request", "redirect_uri"},
		{"redirect URI of another host", url.Values{"redirect_uri": {"https://evil.example/callback"}}, false, "invalid_request", "redirect_uri"},
		{"console redirect URI elsewhere", url.Values{"client_id": {authserver.ConsoleClientID}}, false, "invalid_request", "redirect_uri"},
		{"PKCE missing", url.Values{"code_challenge": {""}, "code_challenge_method": {""}}, true, "invalid_request", ""},
		{"PKCE plain", url.Values{"code_challenge_method": {"plain"}}, true, "invalid_request", ""},
		{"another resource", url.Values{"resource": {"https://other.example/mcp"}}, true, "invalid_target", ""},
		{"the REST resource", url.Values{"resource": {w.env.URL + "/api"}}, true, "invalid_target", ""},
		{"a path the gateway does not serve", url.Values{"resource": {w.env.URL + "/mcp/not-a-workspace"}}, true, "invalid_target", ""},
		{"two workspaces", url.Values{"resource": {w.env.URL + "/mcp/" + w.ws["A"].id, w.env.URL + "/mcp/" + w.ws["B"].id}}, true, "invalid_target", ""},
		{"a resource with a fragment", url.Values{"resource": {w.env.URL + "/mcp#x"}}, true, "invalid_target", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := w.authorizeURL(client, redirect, tc.extra)
			resp, err := b.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.redirected {
				loc, _ := url.Parse(resp.Header.Get("Location"))
				if !isRedirect(resp.StatusCode) || !strings.HasPrefix(loc.String(), redirect) || loc.Query().Get("error") != tc.code {
					t.Fatalf("%d Location %q body %s, want a redirect with error=%s", resp.StatusCode, loc, body, tc.code)
				}
				return
			}
			refusedPage(t, resp, body, tc.code, tc.reason)
		})
	}
	var n int
	if err := w.env.Pool.QueryRow(t.Context(), `SELECT count(*) FROM as_tokens`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("as_tokens rows after refused requests: %d (%v), want 0", n, err)
	}
}

func TestAuthServerBadTokenRequests(t *testing.T) {
	w := newASWorld(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	client := w.register(t, redirect)
	authURL, verifier := w.authorizeURL(client, redirect, nil)
	code := w.consent(t, w.browser(t, "ada"), authURL, redirect)
	base := url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}}
	for _, tc := range []struct {
		name string
		edit url.Values
		code string
	}{
		{"wrong verifier", url.Values{"code_verifier": {strings.Repeat("x", 43)}}, "invalid_grant"},
		{"another resource", url.Values{"resource": {"https://other.example/mcp"}}, "invalid_target"},
		{"unknown client", url.Values{"client_id": {"nobody"}}, "invalid_client"},
		{"unknown grant type", url.Values{"grant_type": {"urn:example:unknown"}}, "unsupported_grant_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := url.Values{}
			for k, v := range base {
				f[k] = v
			}
			for k, v := range tc.edit {
				f[k] = v
			}
			st, m := w.tokenReq(t, f)
			if st < 400 || st >= 500 || m["error"] != tc.code {
				t.Fatalf("%d %v, want 4xx %s", st, m, tc.code)
			}
		})
	}
}

func TestAuthServerNoMembershipPage(t *testing.T) {
	w := newASWorld(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	client := w.register(t, redirect)
	u, _ := w.authorizeURL(client, redirect, nil)
	resp, err := w.browser(t, "stranger").Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "not a member of any workspace") {
		t.Fatalf("no membership: %d %s", resp.StatusCode, body)
	}
	// Without a session, the browser is sent to sign in and back.
	resp, err = (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "/test-signin?return=") {
		t.Fatalf("no session: %d %q", resp.StatusCode, loc)
	}
}

func TestAuthServerRegistration(t *testing.T) {
	w := newASWorld(t, func(o *authserver.Options) { o.RegistrationsPerHour = 3 })
	for _, tc := range []struct {
		name, body, code string
	}{
		{"no redirect URIs", `{"client_name":"x"}`, "invalid_redirect_uri"},
		{"http redirect to a remote host", `{"redirect_uris":["http://evil.example/cb"]}`, "invalid_redirect_uri"},
		{"javascript redirect", `{"redirect_uris":["javascript:alert(1)"]}`, "invalid_redirect_uri"},
		{"implicit grant", `{"redirect_uris":["https://a.example/cb"],"grant_types":["implicit"]}`, "invalid_client_metadata"},
		{"not JSON", `redirect_uris=x`, "invalid_client_metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, m := w.post(t, authserver.RegisterPath, "application/json", tc.body)
			if st != http.StatusBadRequest || m["error"] != tc.code {
				t.Fatalf("%d %v, want 400 %s", st, m, tc.code)
			}
		})
	}
	// A flood from one source: the fourth registration within the hour is refused.
	for i := range 3 {
		w.register(t, fmt.Sprintf("https://a.example/cb%d", i))
	}
	st, m := w.post(t, authserver.RegisterPath, "application/json", `{"redirect_uris":["https://a.example/cb"]}`)
	if st != http.StatusTooManyRequests || m["error"] == nil {
		t.Fatalf("registration flood: %d %v, want 429", st, m)
	}
	var n int
	if err := w.env.Pool.QueryRow(t.Context(), `SELECT count(*) FROM as_clients`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("as_clients rows: %d (%v), want 3", n, err)
	}
}

// A token signed by the gateway's key for another resource is refused by the gateway.
func TestAuthServerTokenForAnotherResource(t *testing.T) {
	w := newASWorld(t, nil)
	now := time.Now()
	claims, _ := json.Marshal(map[string]any{"sub": "ada", "role": "member", "workspaces": []string{w.ws["A"].id},
		"sid": "x", "aud": []string{"https://other.example/mcp"}, "iat": now.Unix(), "exp": now.Add(time.Minute).Unix()})
	tok, err := w.env.Deps.SigningKey.SignJWT(t.Context(), "at+jwt", claims)
	if err != nil {
		t.Fatal(err)
	}
	w.challenged(t, tok, "/mcp/"+w.ws["A"].id)
}

// Revoking through RFC 7009 ends the grant: the next call is challenged.
func TestAuthServerRevocation(t *testing.T) {
	w := newASWorld(t, nil)
	client, access, rt := w.signIn(t, "ada")
	resp, err := http.PostForm(w.env.URL+authserver.RevokePath, url.Values{"token": {rt}, "client_id": {client},
		"token_type_hint": {"refresh_token"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	w.challenged(t, access, "/mcp/"+w.ws["A"].id)
	g, err := db.ASGrantListByPerson(t.Context(), w.env.Pool, "ada")
	if err != nil || len(g) != 0 {
		t.Fatalf("active grants after revocation: %v %v", g, err)
	}
}

// Client ID Metadata Documents: a client_id that is a URL is fetched; bad documents are
// refused with invalid_client before anything is stored.
func TestAuthServerMetadataDocuments(t *testing.T) {
	w := newASWorld(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	doc := func(path string, body func(id string) string) string {
		id := srv.URL + path
		mux.HandleFunc(path, func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(rw, body(id))
		})
		return id
	}
	good := doc("/good.json", func(id string) string {
		return fmt.Sprintf(`{"client_id":%q,"client_name":"Doc Client","redirect_uris":[%q],"token_endpoint_auth_method":"none"}`, id, redirect)
	})
	b := w.browser(t, "ada")
	authURL, verifier := w.authorizeURL(good, redirect, nil)
	resp, err := b.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "Doc Client") || !strings.Contains(string(page), "127.0.0.1:9") {
		t.Fatalf("consent page does not name the client and its redirect host: %s", page)
	}
	code := w.consent(t, b, authURL, redirect)
	if st, tok := w.exchange(t, good, redirect, code, verifier); st != 200 {
		t.Fatalf("token for a metadata-document client: %d %v", st, tok)
	}

	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	mux.HandleFunc("/slow.json", func(rw http.ResponseWriter, r *http.Request) {
		select { // answers only after the fetch gave up
		case <-stall:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/redirect.json", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, good, http.StatusFound)
	})
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL + "/gone.json"
	closed.Close()
	for _, tc := range []struct{ name, reason, id string }{
		{"oversized", "larger than", doc("/big.json", func(id string) string {
			return fmt.Sprintf(`{"client_id":%q,"redirect_uris":[%q],"client_name":%q}`, id, redirect, strings.Repeat("x", 20<<10))
		})},
		{"client_id of another URL", "client_id is not its own URL", doc("/other.json", func(string) string {
			return fmt.Sprintf(`{"client_id":"https://elsewhere.example/c.json","redirect_uris":[%q]}`, redirect)
		})},
		{"redirect URI not listed", "redirect_uri", doc("/nolist.json", func(id string) string {
			return fmt.Sprintf(`{"client_id":%q,"redirect_uris":["http://127.0.0.1:9/other"]}`, id)
		})},
		{"not JSON", "not a JSON object", doc("/html.json", func(string) string { return `<html>` })},
		{"a redirect", "HTTP 302", srv.URL + "/redirect.json"},
		{"unreachable", "could not be fetched", closedURL},
		{"slow", "timed out", srv.URL + "/slow.json"},
		{"cloud metadata address", "blocked address", "http://169.254.169.254/latest/client.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := w.authorizeURL(tc.id, redirect, nil)
			resp, err := b.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			refusedPage(t, resp, body, "", tc.reason)
			// The operator's log names the client and the same reason.
			if logs := w.env.Logs.String(); !strings.Contains(logs, "authorization request refused") ||
				!strings.Contains(logs, tc.id) || !strings.Contains(logs, tc.reason) {
				t.Fatalf("no log line naming %s and %q:\n%s", tc.id, tc.reason, logs[max(0, len(logs)-2000):])
			}
		})
	}
	// The token endpoint says why too (error_description), not fosite's "does not exist".
	st, m := w.exchange(t, closedURL, redirect, "apc_x", "v")
	if st != http.StatusUnauthorized || m["error"] != "invalid_client" || !strings.Contains(fmt.Sprint(m["error_description"]), "could not be fetched") {
		t.Fatalf("token with an unusable metadata document: %d %v, want 401 invalid_client naming the reason", st, m)
	}
}

// refusedPage asserts an authorization request answered in the browser, not redirected: a
// 4xx HTML page naming the error code and the reason.
func refusedPage(t *testing.T, resp *http.Response, body []byte, code, reason string) {
	t.Helper()
	page := htmlUnescape(string(body))
	if resp.StatusCode < 400 || resp.StatusCode >= 500 || resp.Header.Get("Location") != "" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(page, "cannot continue: "+code) || !strings.Contains(page, reason) {
		t.Fatalf("%d %q %s, want a 4xx page naming %s and %q without a redirect", resp.StatusCode,
			resp.Header.Get("Content-Type"), body, code, reason)
	}
}

// Connected clients: each person lists and revokes their own, an admin every one of their
// workspace; a revoked client's next call is challenged again.
func TestConnectedClientsREST(t *testing.T) {
	w := newASWorld(t, nil)
	a, b := w.ws["A"], w.ws["B"]
	client, access, _ := w.signIn(t, "ada")
	ada := stacktest.Token(t, "ada", auth.RoleMember, a.id)
	st, m := w.do(t, "GET", "/api/connected-clients", ada, nil)
	items, _ := m["items"].([]any)
	if st != 200 || len(items) != 1 {
		t.Fatalf("ada's connected clients: %d %v", st, m)
	}
	g := items[0].(map[string]any)
	if g["clientId"] != client || g["clientName"] != "Test Client" || g["workspaceId"] != a.id || g["redirectHost"] != "127.0.0.1:9" {
		t.Fatalf("connected client: %v", g)
	}
	id := g["id"].(string)
	if st, m := w.do(t, "GET", "/api/connected-clients?workspaceId="+a.id, a.admin, nil); st != 200 || len(m["items"].([]any)) != 1 {
		t.Fatalf("admin of A lists A: %d %v", st, m)
	}
	if st, _ := w.do(t, "GET", "/api/connected-clients?workspaceId="+a.id, b.admin, nil); st != http.StatusForbidden {
		t.Fatalf("admin of B lists A: %d, want 403", st)
	}
	if st, _ := w.do(t, "GET", "/api/connected-clients?workspaceId="+a.id, a.member, nil); st != http.StatusForbidden {
		t.Fatalf("a member lists the workspace: %d, want 403", st)
	}
	// Someone else's grant is not found, not forbidden; nothing changes.
	for _, tok := range []string{a.member, b.admin} {
		if st, _ := w.do(t, "DELETE", "/api/connected-clients/"+id, tok, nil); st != http.StatusNotFound {
			t.Fatalf("revoke by another: %d, want 404", st)
		}
	}
	if st, _ := w.rpc(t, "/mcp/"+a.id, access, "tools/list", nil, nil); st != 200 {
		t.Fatalf("token before revocation: %d", st)
	}
	if st, _ := w.do(t, "DELETE", "/api/connected-clients/"+id, ada, nil); st != http.StatusNoContent {
		t.Fatalf("ada revokes: %d", st)
	}
	w.challenged(t, access, "/mcp/"+a.id)
	if st, _ := w.do(t, "DELETE", "/api/connected-clients/"+id, ada, nil); st != http.StatusNotFound {
		t.Fatalf("revoke twice: %d, want 404", st)
	}
	// An admin revokes a member's client.
	_, access2, _ := w.signIn(t, "ada")
	st, m = w.do(t, "GET", "/api/connected-clients?workspaceId="+a.id, a.admin, nil)
	if items, _ := m["items"].([]any); st != 200 || len(items) != 1 {
		t.Fatalf("admin lists after a new sign-in: %d %v", st, m)
	}
	id2 := m["items"].([]any)[0].(map[string]any)["id"].(string)
	if st, _ := w.do(t, "DELETE", "/api/connected-clients/"+id2, a.admin, nil); st != http.StatusNoContent {
		t.Fatalf("admin revokes: %d", st)
	}
	w.challenged(t, access2, "/mcp/"+a.id)
}

// Every authorization response sent to the client's redirect URI names the issuer (RFC
// 9207): the code after "allow", access_denied after "deny", and the metadata says so. A
// redirect to the sign-in page carries no iss.
func TestAuthServerIssuerInAuthorizationResponses(t *testing.T) {
	w := newASWorld(t, nil)
	var meta map[string]any
	getJSON(t, w.env.URL+"/.well-known/oauth-authorization-server", &meta)
	if meta["authorization_response_iss_parameter_supported"] != true || meta["issuer"] != w.env.URL {
		t.Fatalf("metadata: iss supported %v, issuer %v", meta["authorization_response_iss_parameter_supported"], meta["issuer"])
	}
	const redirect = "http://127.0.0.1:9/callback"
	var client string
	for _, decision := range []string{"deny", "allow"} {
		// A fresh client each time: an allowed client's next request skips the consent page.
		client = w.register(t, redirect)
		authURL, _ := w.authorizeURL(client, redirect, nil)
		b := w.browser(t, "ada")
		resp, err := b.Get(authURL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		form := url.Values{"decision": {decision}}
		for _, m := range hiddenInput.FindAllStringSubmatch(string(body), -1) {
			form.Add(m[1], htmlUnescape(m[2]))
		}
		if resp, err = b.PostForm(w.env.URL+authserver.AuthorizePath, form); err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		q := loc.Query()
		if !isRedirect(resp.StatusCode) || !strings.HasPrefix(loc.String(), redirect) || q.Get("iss") != w.env.URL {
			t.Fatalf("%s: %d to %s, want the redirect URI with iss=%s\n%s", decision, resp.StatusCode, loc, w.env.URL, body)
		}
		if (decision == "allow") != (q.Get("code") != "") || (decision == "deny") != (q.Get("error") == "access_denied") {
			t.Fatalf("%s: redirect query %v", decision, q)
		}
	}
	// Not signed in: the redirect goes to the sign-in page, without iss.
	authURL, _ := w.authorizeURL(client, redirect, nil)
	nb := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := nb.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); !isRedirect(resp.StatusCode) || strings.HasPrefix(loc, redirect) || strings.Contains(loc, "iss=") {
		t.Fatalf("signed out: %d to %q, want the sign-in page without iss", resp.StatusCode, loc)
	}
}
