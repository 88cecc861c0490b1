package console_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/auth"
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
	chromium(t)
	const code = "authz-browser-code-0123456789abcdef"
	principals := map[string]auth.Principal{}
	signIn, err := console.DevSignIn("local", stacktest.Secret, code, time.Hour, principals)
	if err != nil {
		t.Fatal(err)
	}
	env := stacktest.New(t, &stacktest.Options{Stack: &stack.Options{DevSignIn: signIn}})
	ws, _, _ := env.Workspace(t, "Authorizations")
	principals["member"] = auth.Principal{Subject: "web-member", Role: auth.RoleMember, Workspaces: []string{ws}}
	p, err := demoupstream.StartProtected("127.0.0.1:0")
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
	k.do("sign in as member", chromedp.Navigate(env.URL+console.DevSignInPath+"?code="+code+"&as=member"),
		chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
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
	var back string
	k.eval("link back", `[...document.querySelectorAll('a')].map(a => a.href).find(h => h.includes('#/authorizations')) || ''`, &back)
	if back == "" {
		t.Fatal("the callback page does not link back to Authorizations")
	}
	k.do("back", chromedp.Navigate(back), chromedp.WaitVisible(`body[data-ready="authorizations"]`, chromedp.ByQuery))
	var after struct{ State, Text string }
	k.eval("after", `({State: document.querySelector('`+item+`').dataset.authorization, Text: document.querySelector('`+item+`').textContent})`, &after)
	if after.State != "authorized" || !strings.Contains(after.Text, "by web-member") || !strings.Contains(after.Text, "Authorize again") {
		t.Fatalf("after consent: %+v", after)
	}
	k.shot("authorizations-authorized-1280")
	if n := countRows(t, env, `SELECT count(*) FROM mcp_oauth_grants WHERE subject = 'web-member'`); n != 1 {
		t.Fatalf("grants of the member: %d", n)
	}
}
