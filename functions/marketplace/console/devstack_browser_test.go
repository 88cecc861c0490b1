package console_test

import (
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/chromedp/chromedp"
)

// devSignIn is the development sign-in of a browser test's stack: the principals a browser
// signs in as, by name (k.signIn).
type devSignIn struct {
	url, code  string
	principals map[string]auth.Principal
}

// devStack starts the local stack (real Postgres, stacktest) with the development sign-in
// the browser tests share, and returns it with its sign-in; session, when not nil, also
// starts the browser session at sign-in (console.DevSignInSession). Add the principals
// with as before signing in.
func devStack(t *testing.T, session console.DevSession) (*stacktest.Env, *devSignIn) {
	t.Helper()
	chromium(t) // skip before starting anything when there is no browser
	d := &devSignIn{code: "browser-sign-in-code-" + t.Name(), principals: map[string]auth.Principal{}}
	h, err := console.DevSignInSession("local", stacktest.Secret, d.code, time.Hour, d.principals, session)
	if err != nil {
		t.Fatal(err)
	}
	env := stacktest.New(t, &stacktest.Options{Stack: &stack.Options{DevSignIn: h}})
	d.url = env.URL
	return env, d
}

// as makes name sign in as subject with role in workspaces.
func (d *devSignIn) as(name, subject, role string, workspaces ...string) {
	d.principals[name] = auth.Principal{Subject: subject, Role: role, Workspaces: workspaces}
}

// signIn opens the development sign-in link as name in k's browser and waits for the
// Marketplace, where the console lands.
func (k *pgKit) signIn(d *devSignIn, name string) {
	k.do("sign in as "+name, chromedp.Navigate(d.url+console.DevSignInPath+"?code="+d.code+"&as="+name),
		chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
}
