package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/chromedp/chromedp"
)

// TestConsoleSignInThroughAuthServer is issue 30's "one sign-in path" in Chromium: a
// signed-out browser opens the console, which offers "Sign in" (the gateway's own
// authorization server, no token pasted, no development link); the click goes to
// /oauth/authorize as the console client, which sends the browser to sign in at the
// identity provider (mockoidc, as on make run) and back, with no consent page (the
// console is first-party, Jane has one workspace); the console exchanges the code and
// shows Jane as the admin she is; a REST page (the marketplace) and the pins API's chats
// load with that token; Sign out revokes the sign-in at the server (its grant is gone) and
// shows the sign-in screen again.
func TestConsoleSignInThroughAuthServer(t *testing.T) {
	chromium(t)
	base, env, ws := startIdPStack(t, "Console", auth.RoleAdmin)
	k, stop := kit(t, base)
	defer stop()

	k.do("console signed out", chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(`#sign-in`, chromedp.ByQuery))
	var signedOut struct {
		Buttons  []string
		External bool
	}
	k.eval("sign-in screen", `({Buttons: [...document.querySelectorAll('main button')].map(b => b.textContent.trim()),
		External: !!document.querySelector('#sign-in-external')})`, &signedOut)
	if len(signedOut.Buttons) != 1 || signedOut.Buttons[0] != "Sign in" || signedOut.External {
		t.Fatalf("sign-in screen: %+v, want one Sign in button", signedOut)
	}
	// Issue 44: with its own Sign in working, the page does not send people to make run's
	// development links (this stack has one, as make run does).
	var signedOutText string
	k.eval("signed-out text", `document.querySelector('main').textContent`, &signedOutText)
	if strings.Contains(signedOutText, "make run") {
		t.Errorf("the signed-out page sends people to make run's links: %q", signedOutText)
	}
	k.do("sign in", chromedp.Click(`#sign-in`, chromedp.ByQuery),
		chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
	var in struct {
		Role, Href, Token string
		Refresh           bool
	}
	k.eval("signed in", `({Role: document.querySelector('header .role')?.dataset.role || '', Href: location.href,
		Token: sessionStorage.getItem('agentpack.console.token') || '',
		Refresh: !!sessionStorage.getItem('agentpack.console.refresh')})`, &in)
	if in.Role != auth.RoleAdmin || in.Href != base+"/admin/#/marketplace" || !in.Refresh {
		t.Fatalf("after sign-in: %+v, want Jane as admin on the marketplace, code gone from the address", in)
	}
	// The token is the authorization server's, for the REST API and the MCP endpoint.
	p, err := env.Deps.Verifier.VerifyResource(t.Context(), in.Token, base+"/api")
	if err != nil || p.Grant == "" || p.Role != auth.RoleAdmin || len(p.Workspaces) != 1 || p.Workspaces[0] != ws {
		t.Fatalf("the console's token: %+v %v", p, err)
	}
	// A REST page of the pins API too (Chats), and the Playground, which calls /mcp with
	// the same token (its aud names both resources).
	for _, r := range [][2]string{{"#/chats", "chats"}, {"#/playground", "playground"}} {
		k.open(r[0], r[1])
		var alert string
		k.eval("errors on "+r[0], `document.querySelector('main [role="alert"]')?.textContent || ''`, &alert)
		if alert != "" {
			t.Fatalf("%s with the console's token: %s", r[0], alert)
		}
	}
	var jane string
	if err := env.Pool.QueryRow(t.Context(), `SELECT id::text FROM people WHERE email = $1`, mockEmail).Scan(&jane); err != nil {
		t.Fatal(err)
	}
	// Issue 44: the header names Jane by email, not by her person id (the token's sub).
	k.waitJS("header email", `(document.querySelector('#signed-in-as')?.textContent || '').includes(`+"`"+mockEmail+"`"+`)`)
	var headerText string
	k.eval("header", `document.querySelector('header.top').textContent + ' ' + document.querySelector('header .role').title`, &headerText)
	if strings.Contains(headerText, jane) {
		t.Errorf("the header names Jane by id: %q", headerText)
	}
	if g, err := db.ASGrantListByPerson(t.Context(), env.Pool, jane); err != nil || len(g) != 1 || g[0].ClientID != authserver.ConsoleClientID {
		t.Fatalf("the console's grant: %v %v", g, err)
	}

	k.do("sign out", chromedp.Click(`header .who button`, chromedp.ByQuery), chromedp.WaitVisible(`#sign-in`, chromedp.ByQuery))
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, err := db.ASGrantListByPerson(t.Context(), env.Pool, jane)
		if err == nil && len(g) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console's grant after sign-out: %v %v, want revoked", g, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st, _ := env.Do(t, "GET", "/api/mcp-marketplace?workspaceId="+ws, in.Token, nil); st != http.StatusUnauthorized {
		t.Fatalf("the console's token after sign-out: %d, want 401", st)
	}

	// make run's "Sign in with the identity provider" link (console.SignInLink) starts the
	// sign-in at once; the browser session (8 h) makes it instant. (From another page: a
	// link that differs only in its fragment would not load the page again.)
	k.do("sign-in link", chromedp.Navigate("about:blank"), chromedp.Navigate(base+console.SignInLink),
		chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
	var role string
	k.eval("signed in again", `document.querySelector('header .role')?.dataset.role || ''`, &role)
	if role != auth.RoleAdmin {
		t.Fatalf("after the sign-in link: role %q", role)
	}

	// An access token about to expire is renewed with the refresh token (rotated) before
	// the next REST call: here one whose exp has passed.
	var before, after struct{ Token, Refresh string }
	const keys = `({Token: sessionStorage.getItem('agentpack.console.token'), Refresh: sessionStorage.getItem('agentpack.console.refresh')})`
	k.eval("tokens", keys, &before)
	k.eval("expire the token", `(() => { sessionStorage.setItem('agentpack.console.token', 'x.' + btoa(JSON.stringify({sub: 'x', exp: 1})) + '.x'); return true })()`, nil)
	k.open("#/chats", "chats")
	k.eval("tokens after renewal", keys, &after)
	if after.Refresh == before.Refresh || after.Token == before.Token || !strings.HasPrefix(after.Token, "ey") {
		t.Fatalf("renewal: before %+v after %+v", before, after)
	}
	if _, err := env.Deps.Verifier.VerifyResource(t.Context(), after.Token, base+"/api"); err != nil {
		t.Fatalf("the renewed token: %v", err)
	}
	// A sign-in revoked elsewhere (an operator, or reuse detection): the next call is
	// refused, the renewal too, and the page signs out with a message.
	gs, err := db.ASGrantListByPerson(t.Context(), env.Pool, jane)
	if err != nil || len(gs) != 1 {
		t.Fatalf("grants: %v %v", gs, err)
	}
	if err := db.ASGrantRevoke(t.Context(), env.Pool, gs[0].ID); err != nil {
		t.Fatal(err)
	}
	k.eval("go to marketplace", `(() => { location.hash = '#/marketplace'; return true })()`, nil)
	k.waitJS("signed out by the refusal", `!!document.querySelector('#sign-in') &&
		(document.querySelector('main [role="alert"]')?.textContent || '').includes('Sign in again')`)
	var left string
	k.eval("tokens after refusal", `(sessionStorage.getItem('agentpack.console.token') || '') + (sessionStorage.getItem('agentpack.console.refresh') || '')`, &left)
	if left != "" {
		t.Fatalf("tokens kept after the refusal: %q", left)
	}
}
