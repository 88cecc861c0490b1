package console_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// testIdP is a minimal OAuth 2.1 authorization server for the console's sign-in: no real
// identity provider runs here, so this stands in for one. It checks what a real one
// checks for a public client: the client id, the exact redirect URI, S256 PKCE (the
// verifier must hash to the challenge), one use per code; and it answers the token
// request with CORS for the console's origin, as providers do for SPAs.
type testIdP struct {
	clientID string
	redirect string // the console's URL, set once known
	origin   string
	token    string // the access token to hand out
	mu       sync.Mutex
	codes    map[string]string // code → challenge
	verified int
}

func (p *testIdP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/authorize":
		q := r.URL.Query()
		if q.Get("response_type") != "code" || q.Get("client_id") != p.clientID || q.Get("redirect_uri") != p.redirect ||
			q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || q.Get("state") == "" {
			http.Error(w, "bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		code := "code-" + q.Get("state")
		p.codes[code] = q.Get("code_challenge")
		p.mu.Unlock()
		http.Redirect(w, r, p.redirect+"?code="+url.QueryEscape(code)+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	case "/token":
		w.Header().Set("Access-Control-Allow-Origin", p.origin)
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Headers", "Accept, Content-Type")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		_ = r.ParseForm()
		p.mu.Lock()
		challenge, ok := p.codes[r.PostForm.Get("code")]
		delete(p.codes, r.PostForm.Get("code"))
		p.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		w.Header().Set("Content-Type", "application/json")
		if !ok || r.PostForm.Get("grant_type") != "authorization_code" || r.PostForm.Get("client_id") != p.clientID ||
			r.PostForm.Get("redirect_uri") != p.redirect || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge ||
			r.PostForm.Get("client_secret") != "" {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		p.mu.Lock()
		p.verified++
		p.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": p.token, "token_type": "Bearer", "expires_in": 3600})
	default:
		http.NotFound(w, r)
	}
}

// TestConsoleOAuthSignIn signs in through the deployed sign-in: authorization code with
// PKCE against an authorization server on another origin, the console being a public
// client. The access token lands in sessionStorage only, the code and state leave the
// address bar, and a replayed answer (state that this tab did not start) is refused with
// the error shown.
func TestConsoleOAuthSignIn(t *testing.T) {
	execPath := chromium(t)
	env := stacktest.New(t, nil)
	ws, _, _ := env.Workspace(t, "OAuth")
	idp := &testIdP{clientID: "agentpack-console", codes: map[string]string{},
		token: stacktest.Token(t, "oauth-admin", auth.RoleAdmin, ws)}
	idpSrv := httptest.NewServer(idp)
	defer idpSrv.Close()

	mux := http.NewServeMux()
	var srv *httptest.Server
	cons := console.Handler(console.Config{OAuth: console.OAuth{ClientID: idp.clientID,
		AuthorizeURL: idpSrv.URL + "/authorize", TokenURL: idpSrv.URL + "/token", Scope: "openid profile"}})
	mux.Handle(console.Prefix+"/", cons)
	mux.Handle("/", env.Stack.Handler)
	srv = httptest.NewServer(stacktest.CheckOpenAPI(t, mux))
	defer srv.Close()
	// The IdP must see the console on a different origin: 127.0.0.1 vs localhost.
	consoleURL := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + console.Prefix + "/"
	idp.redirect = consoleURL
	idp.origin = strings.TrimSuffix(consoleURL, console.Prefix+"/")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(execPath), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer cancelB()
	ctx, cancel := context.WithTimeout(bctx, time.Minute)
	defer cancel()
	run := func(what string, a ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, a...); err != nil {
			var text string
			_ = chromedp.Run(ctx, chromedp.Evaluate(`document.body.innerText`, &text))
			t.Fatalf("%s: %v\n%s", what, err, text)
		}
	}

	run("signed out", chromedp.Navigate(consoleURL), chromedp.WaitVisible(`main.signin button.primary`, chromedp.ByQuery))
	run("sign in", chromedp.Click(`main.signin button.primary`, chromedp.ByQuery),
		chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
	var st struct {
		Token, Local, Search, Role string
	}
	run("state", chromedp.Evaluate(`({Token: sessionStorage.getItem('agentpack.console.token') || '', Local: JSON.stringify(localStorage),
		Search: location.search, Role: document.querySelector('.role').textContent})`, &st))
	if st.Token != idp.token || st.Local != "{}" || st.Search != "" || !strings.Contains(st.Role, "oauth-admin") || idp.verified != 1 {
		t.Fatalf("after sign-in: %+v (verified %d)", st, idp.verified)
	}

	// An answer this tab did not ask for (wrong state) is refused and nothing is kept.
	run("sign out", chromedp.Click(`header .who button`, chromedp.ByQuery), chromedp.WaitVisible(`main.signin`, chromedp.ByQuery))
	run("forged answer", chromedp.Navigate(consoleURL+"?code=code-forged&state=forged"),
		chromedp.WaitVisible(`main.signin [role="alert"]`, chromedp.ByQuery))
	var alert, tok string
	run("refusal", chromedp.Text(`main.signin [role="alert"]`, &alert, chromedp.ByQuery),
		chromedp.Evaluate(`sessionStorage.getItem('agentpack.console.token') || ''`, &tok))
	if !strings.Contains(alert, "does not match") || tok != "" || idp.verified != 1 {
		t.Fatalf("forged answer: alert %q, token %q", alert, tok)
	}
}

// TestConsentLinkInBrowser is issue 22's consent binding in a real browser: member A's
// oauth_per_user authorization link opens the console's consent page. Opened by a browser
// that is not signed in, the page asks for the sign-in (and resumes after the development
// sign-in); signed in as member B it refuses — the page says so, nothing is stored and A's
// grant is unchanged; signed in as A it goes on to the authorization server and the callback
// connects A's account.
func TestConsentLinkInBrowser(t *testing.T) {
	execPath := chromium(t)
	principals := map[string]auth.Principal{}
	signIn, err := console.DevSignIn("local", stacktest.Secret, "consent-test-code-0123456789", time.Hour, principals)
	if err != nil {
		t.Fatal(err)
	}
	env := stacktest.New(t, &stacktest.Options{Stack: &stack.Options{DevSignIn: signIn}})
	ws, _, _ := env.Workspace(t, "Consent")
	principals["member-a"] = auth.Principal{Subject: "member-a", Role: auth.RoleMember, Workspaces: []string{ws}}
	principals["member-b"] = auth.Principal{Subject: "member-b", Role: auth.RoleMember, Workspaces: []string{ws}}
	up := testpeer.NewOAuthUpstream(t)
	su := stacktest.Token(t, "root", auth.RoleSuperuser)
	admin := stacktest.Token(t, "admin", auth.RoleAdmin, ws)
	memberA := stacktest.Token(t, "member-a", auth.RoleMember, ws)

	doJSON := func(method, path, tok string, body any) map[string]any {
		t.Helper()
		st, raw := env.Do(t, method, path, tok, body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		if st >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, st, raw)
		}
		return m
	}
	entry := doJSON("POST", "/api/mcp-marketplace", su, map[string]any{"name": "Per user", "url": up.MCPURL(),
		"transportType": "streamable-http", "category": "testing"})
	inst := doJSON("POST", "/api/mcp-marketplace/"+entry["id"].(string)+"/install", admin,
		map[string]any{"workspaceId": ws, "authMode": "oauth_per_user"})
	conn := inst["id"].(string)
	linkOf := func() string {
		t.Helper()
		r := doJSON("POST", "/api/mcp-connections/"+conn+"/authorize", memberA, nil)
		link, _ := r["authorizationUrl"].(string)
		if !strings.HasPrefix(link, env.URL+"/admin/#/consent/") {
			t.Fatalf("A's link is not the consent page: %v", r)
		}
		return link
	}
	grantOf := func(sub string) string {
		t.Helper()
		var g string
		err := env.Pool.QueryRow(t.Context(), `SELECT coalesce((SELECT encode(grant_sealed, 'hex') || authorized_at::text
			FROM mcp_oauth_grants WHERE connection_id = $1 AND subject = $2), '')`, conn, sub).Scan(&g)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(execPath), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	root, cancelRoot := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer cancelRoot()
	if err := chromedp.Run(root); err != nil { // starts the browser
		t.Fatal(err)
	}
	// browser is one signed-out browser: a new tab (its own sessionStorage, where the
	// console keeps its token) with every cookie cleared.
	browser := func() (context.Context, func()) {
		bctx, cancelB := chromedp.NewContext(root)
		ctx, cancel := context.WithTimeout(bctx, time.Minute)
		if err := chromedp.Run(ctx, network.ClearBrowserCookies()); err != nil {
			t.Fatal(err)
		}
		return ctx, func() { cancel(); cancelB() }
	}
	run := func(ctx context.Context, what string, a ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, a...); err != nil {
			var text string
			_ = chromedp.Run(ctx, chromedp.Evaluate(`document.body.innerText`, &text))
			t.Fatalf("%s: %v\n%s", what, err, text)
		}
	}
	devSignIn := env.URL + console.DevSignInPath + "?code=consent-test-code-0123456789&as="
	// open: a signed-out browser opens link, is asked to sign in, signs in as who (the
	// development sign-in, a full navigation that lands on #/marketplace) and is taken back
	// to the consent page.
	open := func(ctx context.Context, link, who string) {
		t.Helper()
		run(ctx, "open the link signed out", chromedp.Navigate(link), chromedp.WaitVisible(`main.signin [data-consent="signin"]`, chromedp.ByQuery))
		run(ctx, "sign in as "+who, chromedp.Navigate(devSignIn+who))
	}

	// shots saves the page of ctx at 1280 and 390 px as <name>-<width>.png, failing when it
	// scrolls sideways on the phone, and goes back to 1280.
	shots := func(ctx context.Context, name string) {
		t.Helper()
		for _, w := range []struct {
			name string
			w, h int64
		}{{"1280", 1280, 900}, {"390", 390, 844}} {
			var png []byte
			var wide bool
			run(ctx, name+" at "+w.name, chromedp.EmulateViewport(w.w, w.h),
				chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &wide), chromedp.CaptureScreenshot(&png))
			if wide {
				t.Errorf("%s scrolls sideways at %s px", name, w.name)
			}
			if err := os.WriteFile(filepath.Join(outDir(t), name+"-"+w.name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run(ctx, "laptop", chromedp.EmulateViewport(1280, 900))
	}

	link := linkOf()
	// The sign-in page a signed-out browser gets for a consent link.
	sctx, closeS := browser()
	run(sctx, "sign-in page", chromedp.Navigate(link), chromedp.WaitVisible(`main.signin [data-consent="signin"]`, chromedp.ByQuery))
	shots(sctx, "signin")
	closeS()
	// B opens A's link.
	bctx, closeB := browser()
	open(bctx, link, "member-b")
	var refusal, hash string
	run(bctx, "B refused", chromedp.WaitVisible(`[data-consent="refused"] [role="alert"]`, chromedp.ByQuery),
		chromedp.Text(`[data-consent="refused"]`, &refusal, chromedp.ByQuery), chromedp.Evaluate(`location.hash`, &hash))
	if !strings.Contains(refusal, "made for another user") || !strings.Contains(refusal, "Nothing was stored") || !strings.HasPrefix(hash, "#/consent/") {
		t.Errorf("B's page: %q at %s", refusal, hash)
	}
	// The consent page (refused) at both widths, as every other page is saved.
	shots(bctx, "consent-refused")
	closeB()
	if g := grantOf("member-a") + grantOf("member-b"); g != "" {
		t.Fatalf("a grant was stored after B opened A's link")
	}

	// A opens the same link: on to the authorization server and back, connected.
	actxA, closeA := browser()
	open(actxA, link, "member-a")
	var page string
	run(actxA, "A connected", chromedp.WaitVisible(`h1[data-status="authorized"]`, chromedp.ByQuery),
		chromedp.Text(`body`, &page, chromedp.ByQuery))
	closeA()
	first := grantOf("member-a")
	if first == "" || grantOf("member-b") != "" {
		t.Fatalf("after A's consent: A %q, B %q (%s)", first, grantOf("member-b"), page)
	}

	// A's next link (re-authorization), opened by B: refused, A's grant unchanged.
	link = linkOf()
	bctx, closeB = browser()
	open(bctx, link, "member-b")
	run(bctx, "B refused again", chromedp.WaitVisible(`[data-consent="refused"] [role="alert"]`, chromedp.ByQuery))
	closeB()
	if grantOf("member-a") != first || grantOf("member-b") != "" {
		t.Error("A's grant changed (or B got one) after B opened A's second link")
	}
	// and A completes it.
	actxA, closeA = browser()
	open(actxA, link, "member-a")
	run(actxA, "A connected again", chromedp.WaitVisible(`h1[data-status="authorized"]`, chromedp.ByQuery))
	closeA()
	if g := grantOf("member-a"); g == "" || g == first {
		t.Error("A's second consent did not replace A's grant")
	}
}
