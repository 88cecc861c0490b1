package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// kit is a small set of browser steps for a test of its own (TestConsoleInBrowser keeps
// its own, richer set): each step fails the test with the page's text and a failure
// screenshot; console errors and exceptions fail it too.
func kit(t *testing.T, base string) (*pgKit, func()) {
	t.Helper()
	out := outDir(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	ctx, cancel := context.WithTimeout(bctx, 3*time.Minute)
	problems := &browserProblems{}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems.add("exception: " + e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				problems.add("console.error")
			}
		}
	})
	k := &pgKit{problems: problems, srvURL: base}
	k.do = func(what string, a ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, a...); err != nil {
			var png []byte
			var body string
			_ = chromedp.Run(ctx, chromedp.CaptureScreenshot(&png), chromedp.Evaluate(`document.body.innerText`, &body))
			_ = os.WriteFile(filepath.Join(out, "failure-"+t.Name()+".png"), png, 0o644)
			t.Fatalf("%s: %v\npage text:\n%s", what, err, body)
		}
		if p := problems.take(); len(p) > 0 {
			t.Fatalf("%s: browser problems: %v", what, p)
		}
	}
	k.eval = func(what, js string, res any) {
		t.Helper()
		k.do(what, chromedp.Evaluate(js, res, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	}
	k.waitJS = func(what, cond string) {
		t.Helper()
		k.do(what, chromedp.Poll(cond, nil, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(20*time.Millisecond)))
	}
	k.setValue = func(sel, v string) {
		t.Helper()
		k.eval("set "+sel, fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q;
			e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, sel, v), nil)
	}
	k.open = func(route, ready string) {
		t.Helper()
		k.eval("open "+route, fmt.Sprintf(`new Promise((resolve, reject) => {
			delete document.body.dataset.ready;
			location.hash = %q;
			const give = setTimeout(() => reject(new Error('not ready')), 15000);
			const tick = () => document.body.dataset.ready === %q ? (clearTimeout(give), resolve(true)) : requestAnimationFrame(tick);
			tick();
		})`, route, ready), nil)
	}
	k.shot = func(name string) {
		t.Helper()
		var png []byte
		k.do("screenshot "+name, chromedp.CaptureScreenshot(&png))
		if err := os.WriteFile(filepath.Join(out, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return k, func() { cancel(); cancelB(); cancelA() }
}

// TestMemberConsentInBrowser: against the local OAuth upstream of `make run`
// (demoupstream.Protected, seeded by seed.LoadOAuthDemo as an oauth_per_user entry) a
// member opens Authorizations, sees the installed connection needing their authorization,
// starts it (their own consent link, bound to them), passes the consent page and the
// authorization server (which approves its demo user at once), lands on the callback page,
// and back on Authorizations the state reads authorized by them; the grant is theirs in
// Postgres. The page is saved at 1280 and 390 px without sideways scroll.
func TestMemberConsentInBrowser(t *testing.T) {
	env, dev := devStack(t, nil)
	ws, _, _ := env.Workspace(t, "Authorizations")
	// The member is a person of the gateway (the subject is their person id, as the
	// gateway's authorization server issues it): pages name them by email (issue 44).
	mia, err := db.PersonUpsert(t.Context(), env.Pool, &db.Person{Issuer: "https://idp.example", Subject: "mia", Email: "mia.member@example.com", Name: "Mia"})
	if err != nil {
		t.Fatal(err)
	}
	dev.as("member", mia.ID, auth.RoleMember, ws)
	p, err := demoupstream.StartProtected("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	entry, err := seed.LoadOAuthDemo(t.Context(), env.Pool, p.MCPURL(), &upstreamauth.Client{
		ClientID: demoupstream.ProtectedClientID, ClientSecret: p.ClientSecret(),
		TokenEndpointAuth: upstreamauth.AuthClientSecretPost, Issuer: p.Issuer()}, env.Deps.Connections.AuthClientPut)
	if err != nil {
		t.Fatal(err)
	}
	admin := stacktest.Token(t, "admin", auth.RoleAdmin, ws)
	if st, b := env.Do(t, "POST", "/api/mcp-marketplace/"+entry+"/install", admin, map[string]any{"workspaceId": ws}); st != http.StatusCreated {
		t.Fatalf("install: %d %s", st, b)
	}

	k, stop := kit(t, env.URL)
	defer stop()
	k.signIn(dev, "member")
	var nav []string
	k.eval("member navigation", `[...document.querySelectorAll('header nav a')].map(a => a.textContent)`, &nav)
	if !strings.Contains(strings.Join(nav, ","), "Authorizations") {
		t.Fatalf("member navigation %v lacks Authorizations", nav)
	}
	k.open("#/authorizations", "authorizations")
	item := `li[data-connection="` + seed.OAuthDemoName + `"]`
	var before struct {
		State, Notice string
	}
	k.eval("before", `({State: document.querySelector('`+item+`').dataset.authorization,
		Notice: document.querySelector('main .notice-warn')?.textContent || ''})`, &before)
	if before.State != "required" || !strings.Contains(before.Notice, "needs your authorization") {
		t.Fatalf("before consent: %+v", before)
	}
	layouts(t, k, []route{{"#/authorizations", "authorizations", "authorizations"}})
	k.do("authorize", chromedp.Click(item+` button.primary`, chromedp.ByQuery))
	// The consent page (this member's link), the authorization server, then the callback.
	k.do("callback page", chromedp.WaitVisible(`h1[data-status="authorized"]`, chromedp.ByQuery))
	k.shot("authorization-callback")
	var summary string
	k.eval("callback summary", `document.querySelector('#summary')?.textContent || ''`, &summary)
	if !strings.Contains(summary, "is authorized for mia.member@example.com") || strings.Contains(summary, mia.ID) {
		t.Errorf("callback page %q, want the account named by email", summary)
	}
	var back string
	k.eval("link back", `[...document.querySelectorAll('a')].map(a => a.href).find(h => h.includes('#/authorizations')) || ''`, &back)
	if back == "" {
		t.Fatal("the callback page does not link back to Authorizations")
	}
	k.do("back", chromedp.Navigate(back), chromedp.WaitVisible(`body[data-ready="authorizations"]`, chromedp.ByQuery))
	var after struct{ State, Text string }
	k.eval("after", `({State: document.querySelector('`+item+`').dataset.authorization, Text: document.querySelector('`+item+`').textContent})`, &after)
	if after.State != "authorized" || !strings.Contains(after.Text, "by mia.member@example.com") || strings.Contains(after.Text, mia.ID) || !strings.Contains(after.Text, "Authorize again") {
		t.Fatalf("after consent: %+v", after)
	}
	k.shot("authorizations-authorized-1280")
	if n := countRows(t, env, `SELECT count(*) FROM mcp_oauth_grants WHERE subject = '`+mia.ID+`'`); n != 1 {
		t.Fatalf("grants of the member: %d", n)
	}

	// Issue 34, item 3: without a grant (deleted here), the Playground's call answers -32042;
	// the page shows its message and an Authorize link to the member's consent page.
	if _, err := env.Pool.Exec(t.Context(), `DELETE FROM mcp_oauth_grants WHERE subject = $1`, mia.ID); err != nil {
		t.Fatal(err)
	}
	k.open("#/playground", "playground")
	k.waitJS("whoami listed", `[...document.querySelectorAll('#pg-tool option')].some(o => o.value.endsWith('_whoami'))`)
	k.eval("pick whoami", `(() => { const s = document.querySelector('#pg-tool');
		s.value = [...s.options].find(o => o.value.endsWith('_whoami')).value;
		s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, nil)
	k.waitJS("whoami form", `(document.querySelector('#pg-form')?.dataset.tool || '').endsWith('_whoami')`)
	k.do("call whoami", chromedp.Click(`#pg-form button[type="submit"]`, chromedp.ByQuery))
	k.waitJS("elicitation shown", `!!document.querySelector('#pg-elicitations a')`)
	var el struct{ Error, Text, Href, Target string }
	k.eval("elicitation", `({Error: document.querySelector('#pg-rpc-error').textContent,
		Text: document.querySelector('#pg-elicitations').textContent,
		Href: document.querySelector('#pg-elicitations a').href, Target: document.querySelector('#pg-elicitations a').target})`, &el)
	if !strings.Contains(el.Error, "-32042") || !strings.Contains(el.Text, seed.OAuthDemoName) || !strings.Contains(el.Text, "Authorize") ||
		!strings.Contains(el.Href, "/admin/#/consent/") || el.Target != "_blank" {
		t.Fatalf("playground -32042: %+v", el)
	}
	for _, w := range []struct {
		name string
		w, h int64
	}{{"1280", 1280, 900}, {"390", 390, 844}} {
		k.do("viewport "+w.name, chromedp.EmulateViewport(w.w, w.h))
		k.do("scroll to the answer", chromedp.Evaluate(`document.querySelector('#pg-rpc-error').scrollIntoView({block: 'center'})`, nil))
		k.shot("playground-authorize-" + w.name)
	}
	k.do("laptop", chromedp.EmulateViewport(1280, 900))
}

// TestCatalogAuthEditorInBrowser: the superuser's catalog editor sets an entry's header
// template, auth mode, OAuth settings (expected issuer, scopes, an extra authorization
// parameter) and a pre-registered client with a secret; the API then holds exactly that
// (GET …/{id}/auth: the secret only as hasSecret, never sent back to the page). A bad
// parameter line is refused in the form and nothing is written. Reopened, the editor shows
// the stored values with an empty secret field; saving again without a secret keeps the
// stored one.
func TestCatalogAuthEditorInBrowser(t *testing.T) {
	env, dev := devStack(t, nil)
	ws, _, _ := env.Workspace(t, "Catalog")
	dev.as("superuser", "web-root", auth.RoleSuperuser, ws)
	su := stacktest.Token(t, "root", auth.RoleSuperuser)
	st, b := env.Do(t, "POST", "/api/mcp-marketplace", su, map[string]any{"name": "Auth Editor", "url": "http://127.0.0.1:9/mcp", "category": "Testing"})
	if st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, b)
	}
	var entry struct{ ID string }
	_ = json.Unmarshal(b, &entry)
	authOf := func() map[string]any {
		t.Helper()
		st, b := env.Do(t, "GET", "/api/mcp-marketplace/"+entry.ID+"/auth", su, nil)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || st != http.StatusOK {
			t.Fatalf("GET auth: %d %s", st, b)
		}
		return m
	}
	const secret = "catalog-client-secret-5d1e"
	initial := authOf()["authMode"]

	k, stop := kit(t, env.URL)
	defer stop()
	k.signIn(dev, "superuser")
	k.open("#/catalog", "catalog")
	edit := func() {
		t.Helper()
		k.do("edit", chromedp.Click(`tr[data-entry="Auth Editor"] td.actions button`, chromedp.ByQuery),
			chromedp.WaitVisible(`#entry-dialog #e-authmode`, chromedp.ByQuery))
		k.waitJS("auth loaded", `!document.querySelector('#entry-dialog fieldset.auth[data-loading]')`)
	}
	edit()
	k.setValue("#e-hname0", "Authorization")
	k.setValue("#e-hvalue0", "Bearer {{TOKEN}}")
	k.eval("mode", `(() => { const s = document.querySelector('#e-authmode'); s.value = 'oauth_per_user';
		s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, nil)
	k.do("oauth fields", chromedp.WaitVisible(`#e-issuer`, chromedp.ByQuery))
	k.setValue("#e-issuer", "http://127.0.0.1:9/issuer")
	k.setValue("#e-scopes", "read write")
	k.setValue("#e-params", "not a parameter")
	k.setValue("#e-client-id", "catalog-client")
	k.setValue("#e-client-secret", secret)
	k.do("save refused", chromedp.Click(`#entry-dialog button[type="submit"]`, chromedp.ByQuery))
	k.waitJS("param error", `(document.querySelector('#e-params-error')?.textContent || '').includes('name=value')`)
	if a := authOf(); a["authMode"] != initial || a["client"] != nil || a["oauth"] != nil {
		t.Fatalf("a refused form wrote: %v", a)
	}
	k.setValue("#e-params", "audience=https://api.example.com")
	k.shot("catalog-auth-1280")
	k.do("save", chromedp.Click(`#entry-dialog button[type="submit"]`, chromedp.ByQuery))
	k.waitJS("saved", `!document.querySelector('#entry-dialog') && (document.querySelector('main [role="status"]')?.textContent || '').includes('saved')`)
	a := authOf()
	oauth, _ := a["oauth"].(map[string]any)
	client, _ := a["client"].(map[string]any)
	if a["authMode"] != "oauth_per_user" || oauth["issuer"] != "http://127.0.0.1:9/issuer" || fmt.Sprint(oauth["scopes"]) != "[read write]" ||
		fmt.Sprint(oauth["authorizationParams"]) != "map[audience:https://api.example.com]" ||
		client["clientId"] != "catalog-client" || client["hasSecret"] != true {
		t.Fatalf("stored: %v", a)
	}
	var hdr string
	if err := env.Pool.QueryRow(t.Context(), `SELECT headers->>'Authorization' FROM mcp_catalog_entries WHERE id = $1`, entry.ID).Scan(&hdr); err != nil || hdr != "Bearer {{TOKEN}}" {
		t.Fatalf("header template %q %v", hdr, err)
	}
	// Reopened: the stored values, the secret field empty; saving keeps the secret.
	edit()
	var shown struct{ Mode, Issuer, Scopes, Params, Client, Secret, Help string }
	k.eval("shown", `({Mode: document.querySelector('#e-authmode').value, Issuer: document.querySelector('#e-issuer').value,
		Scopes: document.querySelector('#e-scopes').value, Params: document.querySelector('#e-params').value,
		Client: document.querySelector('#e-client-id').value, Secret: document.querySelector('#e-client-secret').value,
		Help: document.querySelector('#e-client-secret-help').textContent})`, &shown)
	if shown.Mode != "oauth_per_user" || shown.Issuer != "http://127.0.0.1:9/issuer" || shown.Scopes != "read write" ||
		shown.Params != "audience=https://api.example.com" || shown.Client != "catalog-client" || shown.Secret != "" || !strings.Contains(shown.Help, "secret is stored") {
		t.Fatalf("editor reopened: %+v", shown)
	}
	k.do("phone", chromedp.EmulateViewport(390, 844))
	var wide bool
	k.eval("dialog width", `document.documentElement.scrollWidth > window.innerWidth`, &wide)
	if wide {
		t.Fatal("the entry editor scrolls sideways at 390 px")
	}
	k.shot("catalog-auth-390")
	k.do("laptop", chromedp.EmulateViewport(1280, 900))
	k.setValue("#e-scopes", "read")
	k.do("save again", chromedp.Click(`#entry-dialog button[type="submit"]`, chromedp.ByQuery))
	k.waitJS("saved again", `!document.querySelector('#entry-dialog')`)
	a = authOf()
	if c, _ := a["client"].(map[string]any); c["hasSecret"] != true || fmt.Sprint(a["oauth"].(map[string]any)["scopes"]) != "[read]" {
		t.Fatalf("after the second save: %v", a)
	}
	if got, err := env.Deps.Connections.AuthClients(t.Context(), entry.ID); err != nil || got == nil || got.ClientSecret != secret {
		t.Fatalf("stored client secret lost: %v", err)
	}
}
