package console_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/identity"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"
)

// TestConnectedClientsInBrowser is issue 30's "what must be shown" in Chromium: a person
// signs in through mockoidc (the identity provider `make run` starts) when an MCP client
// asks the gateway's authorization server for access; Chromium shows the consent page,
// which names the client and its redirect host, and allows it; the client exchanges the
// code (PKCE) and lists the tools on /mcp. The person sees the client on the console's
// Connected clients page and revokes it there (a click and the confirmation); the client's
// next /mcp call is answered 401 with the WWW-Authenticate challenge and its refresh token
// is refused. Connecting again shows the consent page again (revoking forgot it), and an
// admin of the workspace sees the client under the person's name and revokes it too.
//
// The console is handed each person's token as the development sign-in does
// (/admin/#token=…, a token the REST API accepts, for the same person id the grants
// name), because the test needs two people's consoles at once; the console's own sign-in
// through the authorization server is TestConsoleSignInThroughAuthServer.
func TestConnectedClientsInBrowser(t *testing.T) {
	chromium(t)
	base, env, ws := startIdPStack(t, "Clients", auth.RoleMember)

	cl := newTestClient(t, base, "Test MCP Client")
	k, stop := kit(t, base)
	defer stop()

	// 1. The client asks; Chromium signs in at mockoidc, sees the consent page, allows.
	authURL, verifier := cl.authorizeURL(ws)
	k.do("authorize", chromedp.Navigate(authURL), chromedp.WaitVisible(`#allow`, chromedp.ByQuery))
	var consent struct{ Client, Redirect, Workspace string }
	k.eval("consent page", `({Client: document.querySelector('#client-name').textContent,
		Redirect: document.querySelector('#redirect-host').textContent,
		Workspace: document.querySelector('#workspace option[selected]')?.textContent || document.querySelector('#workspace').selectedOptions[0].textContent})`, &consent)
	if consent.Client != "Test MCP Client" || consent.Redirect != cl.origin || !strings.HasPrefix(consent.Workspace, "Clients") {
		t.Fatalf("consent page: %+v, want the client, %s and workspace Clients", consent, cl.origin)
	}
	k.shot("clients-consent-1280")
	k.do("allow", chromedp.Click(`#allow`, chromedp.ByQuery), chromedp.WaitVisible(`#client-done`, chromedp.ByQuery))
	access, refresh := cl.exchange(verifier)

	// 2. The client lists the tools as Jane.
	if st, _, body := cl.rpc(access, ws); st != http.StatusOK || !strings.Contains(body, `"tools"`) {
		t.Fatalf("tools/list with the issued token: %d %s", st, body)
	}
	var jane string
	if err := env.Pool.QueryRow(t.Context(), `SELECT id::text FROM people WHERE email = $1`, mockEmail).Scan(&jane); err != nil {
		t.Fatalf("the person signed in through mockoidc: %v", err)
	}

	// 3. Jane's console lists the client with what the API gives, and she revokes it.
	console := func(token string) {
		t.Helper()
		k.do("console", chromedp.Navigate(base+"/admin/#token="+url.QueryEscape(token)),
			chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
		k.open("#/clients", "clients")
	}
	console(stacktest.Token(t, jane, auth.RoleMember, ws))
	row := `#clients-mine tr[data-client="Test MCP Client"]`
	// The header names the workspace a moment after the page is ready; so does the row.
	k.waitJS("workspace named", `document.querySelector('`+row+` td[data-label="Workspace"]')?.textContent === 'Clients'`)
	// Allowed on the consent page: the API's authorizedBy "consent", shown in words.
	k.waitJS("authorized by consent", `(() => { const c = document.querySelector('`+row+` td[data-label="Authorized by"]');
		return c?.dataset.authorizedBy === 'consent' && c.textContent === 'Consent' })()`)
	var shown struct {
		Text  string
		Nav   []string
		Admin bool
	}
	k.eval("row", `({Text: document.querySelector('`+row+`')?.innerText || '',
		Nav: [...document.querySelectorAll('header nav a')].map(a => a.textContent),
		Admin: !!document.querySelector('#clients-all')})`, &shown)
	for _, want := range []string{"Test MCP Client", cl.id, strings.TrimPrefix(cl.origin, "http://"), "Clients", "mcp"} {
		if !strings.Contains(shown.Text, want) {
			t.Errorf("Jane's row lacks %q: %q", want, shown.Text)
		}
	}
	if !contains(shown.Nav, "Clients") || shown.Admin {
		t.Errorf("member's page: navigation %v, admin table %v (want Clients, no admin table)", shown.Nav, shown.Admin)
	}
	layouts(t, k, []route{{"#/clients", "clients", "clients-member"}})
	k.do("viewport", chromedp.EmulateViewport(1280, 900))
	k.do("revoke", chromedp.Click(row+` button.danger`, chromedp.ByQuery), chromedp.WaitVisible(`#revoke-dialog`, chromedp.ByQuery))
	k.shot("clients-revoke-dialog")
	k.do("confirm", chromedp.Click(`#revoke-dialog button.danger`, chromedp.ByQuery))
	k.waitJS("revoked", `!document.querySelector('`+row+`') &&
		(document.querySelector('main [role="status"]')?.textContent || '').includes('Test MCP Client was revoked')`)

	// 4. The client's next call is challenged; its refresh token is refused.
	if st, hdr, body := cl.rpc(access, ws); st != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("after revocation: %d %q %s, want 401 with the challenge", st, hdr.Get("WWW-Authenticate"), body)
	}
	if st, tok := cl.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}); st != http.StatusBadRequest || tok["error"] != "invalid_grant" {
		t.Fatalf("refresh after revocation: %d %v, want 400 invalid_grant", st, tok)
	}

	// 5. Connecting again asks again (the consent was forgotten); an admin of the
	// workspace sees the client under Jane's name and revokes it.
	authURL, verifier = cl.authorizeURL(ws)
	k.do("authorize again", chromedp.Navigate(authURL), chromedp.WaitVisible(`#allow`, chromedp.ByQuery))
	k.do("allow again", chromedp.Click(`#allow`, chromedp.ByQuery), chromedp.WaitVisible(`#client-done`, chromedp.ByQuery))
	access, _ = cl.exchange(verifier)
	if st, _, body := cl.rpc(access, ws); st != http.StatusOK {
		t.Fatalf("tools/list after connecting again: %d %s", st, body)
	}
	console(stacktest.Token(t, "web-admin", auth.RoleAdmin, ws))
	adminRow := `#clients-all tr[data-client="Test MCP Client"]`
	var person string
	k.eval("admin row", `document.querySelector('`+adminRow+` td[data-label="Person"]')?.textContent || ''`, &person)
	if person != "jane.doe" {
		t.Fatalf("the admin sees the client of %q, want jane.doe", person)
	}
	layouts(t, k, []route{{"#/clients", "clients", "clients-admin"}})
	k.do("viewport", chromedp.EmulateViewport(1280, 900))
	// Issue 44: the redirect host ("127.0.0.1:PORT") never wraps inside its last label and
	// port; it may break only after a dot.
	var hostWhole bool
	k.eval("redirect host unbroken", `(() => { const cells = [...document.querySelectorAll('table.clients td.host')];
		return cells.length > 0 && cells.every(td => { const parts = td.querySelectorAll(':scope > span');
			const r = document.createRange(); r.selectNodeContents(parts[parts.length - 1]); return r.getClientRects().length === 1 }) })()`, &hostWhole)
	if !hostWhole {
		t.Error("a redirect host wraps inside its port at 1280 px")
	}
	k.do("admin revokes", chromedp.Click(adminRow+` button.danger`, chromedp.ByQuery), chromedp.WaitVisible(`#revoke-dialog`, chromedp.ByQuery))
	k.do("admin confirms", chromedp.Click(`#revoke-dialog button.danger`, chromedp.ByQuery))
	k.waitJS("admin revoked", `!document.querySelector('`+adminRow+`')`)
	if st, _, _ := cl.rpc(access, ws); st != http.StatusUnauthorized {
		t.Fatalf("after the admin's revocation: %d, want 401", st)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// startMockOIDC starts mockoidc as `make run` does (cmd/local/idp.go): its default user is
// signed in at once, its session store is guarded by a lock.
func startMockOIDC(t *testing.T) *mockoidc.MockOIDC {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	if err := m.AddMiddleware(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return m
}

// testClient is an MCP client of the gateway's authorization server, registered by RFC
// 7591 dynamic registration, a public client (PKCE) whose redirect URI is its own
// loopback page, as a desktop client's is.
type testClient struct {
	t        *testing.T
	base, id string
	redirect string
	origin   string // the redirect URI's scheme and host, as the consent page names it
	mu       sync.Mutex
	code     string
}

func newTestClient(t *testing.T, base, name string) *testClient {
	t.Helper()
	c := &testClient{t: t, base: base}
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" { // the browser asks for a favicon too
			http.NotFound(w, r)
			return
		}
		c.mu.Lock()
		c.code = r.URL.Query().Get("code")
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Connected</title><p id="client-done">You can close this window.</p>`)
	}))
	t.Cleanup(cb.Close)
	c.redirect, c.origin = cb.URL+"/callback", cb.URL
	body := fmt.Sprintf(`{"redirect_uris":[%q],"client_name":%q,"token_endpoint_auth_method":"none"}`, c.redirect, name)
	resp, err := http.Post(base+authserver.RegisterPath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("register: %d %v", resp.StatusCode, err)
	}
	c.id = reg.ClientID
	return c
}

// authorizeURL is an authorization request for the workspace's MCP endpoint with a fresh
// PKCE pair (S256); it returns the URL and the verifier.
func (c *testClient) authorizeURL(ws string) (string, string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {c.id}, "redirect_uri": {c.redirect}, "scope": {"mcp"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"state": {"state-" + verifier[:12]}, "resource": {c.base + "/mcp/" + ws}}
	return c.base + authserver.AuthorizePath + "?" + q.Encode(), verifier
}

// exchange trades the code its redirect page received for tokens.
func (c *testClient) exchange(verifier string) (access, refresh string) {
	c.t.Helper()
	c.mu.Lock()
	code := c.code
	c.mu.Unlock()
	st, tok := c.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.redirect},
		"code_verifier": {verifier}})
	a, _ := tok["access_token"].(string)
	r, _ := tok["refresh_token"].(string)
	if st != http.StatusOK || a == "" || r == "" {
		c.t.Fatalf("token: %d %v", st, tok)
	}
	return a, r
}

// token posts a token request of this client (its id and the resource added).
func (c *testClient) token(form url.Values) (int, map[string]any) {
	c.t.Helper()
	form.Set("client_id", c.id)
	form.Set("resource", c.base+"/mcp")
	resp, err := http.PostForm(c.base+authserver.TokenPath, form)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// rpc sends tools/list to the workspace's MCP endpoint with token.
func (c *testClient) rpc(token, ws string) (int, http.Header, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testpeer.Scaled(15*time.Second))
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/mcp/"+ws,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// mockEmail is the email of mockoidc's default user, the person every sign-in of these
// tests signs in as.
const mockEmail = "jane.doe@example.com"

// startIdPStack starts the stack of the sign-in tests: the gateway on base, with the
// identity provider's sign-in (/auth/…, a mockoidc of its own) and the browser session as
// make run mounts them, every answer checked against the OpenAPI document; and workspace
// ws, called name, to which mockEmail is invited with role (a member of it at her first
// sign-in). The servers stop when the test ends.
func startIdPStack(t *testing.T, name, role string) (base string, env *stacktest.Env, ws string) {
	t.Helper()
	idp := startMockOIDC(t)
	// The gateway's origin is known before the stack: the sign-in's redirect URL names it.
	gwLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base = "http://" + gwLn.Addr().String()
	sessions, err := identity.NewSessions([]byte(strings.Repeat("k", 32)), nil)
	if err != nil {
		t.Fatal(err)
	}
	people := &identity.Service{} // its pool is set once the stack has one
	// DevSignIn as make run has one beside the authorization server (the signed-out page
	// must still lead with its own Sign in; the handler itself is not used here).
	env = stacktest.New(t, &stacktest.Options{Stack: &stack.Options{
		Identity:  &stack.Identity{Sessions: authserver.IdentitySessions{Sessions: sessions}, Members: people},
		DevSignIn: http.NotFoundHandler()}})
	people.Pool = env.Pool
	signIn, err := identity.NewSignIn(identity.OIDCConfig{Issuer: idp.Issuer(), ClientID: idp.ClientID,
		ClientSecret: idp.ClientSecret, RedirectURL: base + identity.CallbackPath}, sessions, people, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/", signIn.Handler())
	mux.Handle("/", env.Stack.Handler)
	gw := &httptest.Server{Listener: gwLn, Config: &http.Server{Handler: stacktest.CheckOpenAPI(t, mux)}}
	gw.Start()
	t.Cleanup(gw.Close)
	ws, _, _ = env.Workspace(t, name)
	if _, err := db.InvitationEnsure(t.Context(), env.Pool, ws, mockEmail, role); err != nil {
		t.Fatal(err)
	}
	return base, env, ws
}
