package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestToolOverrideInBrowser is a tool override in the console (docs/OVERRIDES.md), in a
// real Chromium: an admin opens a connection's tools, renames and redescribes one through
// the Override form, sees it marked Modified under its new name with the upstream's
// original one click away (Original), gets a refused name's error under the name field,
// and the gateway lists the tool under its new name.
func TestToolOverrideInBrowser(t *testing.T) {
	execPath := chromium(t)
	code := "override-browser-sign-in-code-0123456789"
	principals := map[string]auth.Principal{}
	signIn, err := console.DevSignIn("local", stacktest.Secret, code, time.Hour, principals)
	if err != nil {
		t.Fatal(err)
	}
	env := stacktest.New(t, &stacktest.Options{Stack: &stack.Options{DevSignIn: signIn}})
	ws, _, _ := env.Workspace(t, "Overrides")
	principals["admin"] = auth.Principal{Subject: "web-admin", Role: auth.RoleAdmin, Workspaces: []string{ws}}
	admin := stacktest.Token(t, "web-admin", auth.RoleAdmin, ws)
	up := testpeer.NewRawUpstream(t, false)
	st, b := env.Do(t, "POST", "/api/mcp-connections", admin, map[string]any{"name": "Raw", "url": up.URL, "workspaceId": ws})
	if st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, b)
	}
	var c struct{ ID, Handle string }
	_ = json.Unmarshal(b, &c)
	srv := httptest.NewServer(stacktest.CheckOpenAPI(t, env.Stack.Handler))
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(execPath), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer cancelB()
	ctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	problems := &browserProblems{}
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			problems.add("exception: " + e.ExceptionDetails.Error())
		}
	})
	run := func(what string, a ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, a...); err != nil {
			var text string
			_ = chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('main')?.innerText || ''`, &text))
			t.Fatalf("%s: %v\npage text:\n%s", what, err, text)
		}
		if p := problems.take(); len(p) > 0 {
			t.Fatalf("%s: browser problems: %v", what, p)
		}
	}
	waitJS := func(what, cond string) {
		t.Helper()
		run(what, chromedp.Poll(cond, nil, chromedp.WithPollingTimeout(15*time.Second), chromedp.WithPollingInterval(20*time.Millisecond)))
	}
	row := `tr[data-tool="report"]`
	run("sign in", chromedp.Navigate(srv.URL+console.DevSignInPath+"?code="+code+"&as=admin"),
		chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
	run("connections", chromedp.Evaluate(`location.hash = '#/connections'`, nil),
		chromedp.WaitVisible(`body[data-ready="connections"]`, chromedp.ByQuery))
	run("tools", chromedp.Click(`li[data-connection="Raw"] button[aria-expanded]`, chromedp.ByQuery),
		chromedp.WaitVisible(row, chromedp.ByQuery))
	var modified string
	run("not modified yet", chromedp.AttributeValue(row, "data-modified", &modified, nil, chromedp.ByQuery))
	if modified != "false" {
		t.Fatalf("data-modified %q before any override", modified)
	}

	// A refused name: the API's CONFLICT lands under the name field; nothing is saved.
	run("open form", chromedp.Click(row+` button:last-child`, chromedp.ByQuery), chromedp.WaitVisible(`#override-dialog #ovr-name`, chromedp.ByQuery))
	run("refused name", chromedp.SendKeys(`#ovr-name`, "agentpack_report", chromedp.ByQuery),
		chromedp.Click(`#override-dialog button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(`#ovr-name-error`, chromedp.ByQuery))
	var nameErr string
	run("name error", chromedp.Text(`#ovr-name-error`, &nameErr, chromedp.ByQuery))
	if !strings.Contains(nameErr, "built-in") {
		t.Fatalf("name error %q", nameErr)
	}
	// Rename and redescribe.
	run("fix name", chromedp.Evaluate(`(() => { const i = document.querySelector('#ovr-name'); i.value = ''; i.dispatchEvent(new Event('input', {bubbles: true})); })()`, nil),
		chromedp.SendKeys(`#ovr-name`, "quarterly_report", chromedp.ByQuery),
		chromedp.SendKeys(`#ovr-description`, "Our quarterly report.", chromedp.ByQuery),
		chromedp.SetValue(`#ovr-readOnlyHint`, "false", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#ovr-readOnlyHint').dispatchEvent(new Event('change', {bubbles: true}))`, nil),
		chromedp.Click(`#override-dialog button[type="submit"]`, chromedp.ByQuery))
	waitJS("modified", `document.querySelector('tr[data-tool="report"]')?.dataset.modified === 'true' && !document.querySelector('#override-dialog')`)
	var cell string
	run("badge", chromedp.Text(row+` td:first-child`, &cell, chromedp.ByQuery))
	if !strings.Contains(cell, "quarterly_report") || !strings.Contains(cell, "Modified") || !strings.Contains(cell, "readOnlyHint: false") {
		t.Fatalf("exposed-name cell %q", cell)
	}
	// The stored override holds the annotation the form set, and only it (the other hints
	// were left at the upstream's).
	st, b = env.Do(t, "GET", "/api/mcp-connections/"+c.ID+"/tools/report/override?workspaceId="+ws, admin, nil)
	var stored struct {
		Annotations map[string]any `json:"annotations"`
	}
	if err := json.Unmarshal(b, &stored); st != http.StatusOK || err != nil ||
		len(stored.Annotations) != 1 || stored.Annotations["readOnlyHint"] != false {
		t.Fatalf("stored override: %d %s", st, b)
	}
	// The upstream's original, one click away.
	run("original", chromedp.Click(row+` button[aria-expanded]`, chromedp.ByQuery), chromedp.WaitVisible(`dl[data-original="report"]`, chromedp.ByQuery))
	var orig string
	run("original text", chromedp.Text(`dl[data-original="report"]`, &orig, chromedp.ByQuery))
	if !strings.Contains(orig, "mcp_"+c.Handle+"_report") || !strings.Contains(orig, "Builds a <b>report</b> & more") {
		t.Fatalf("original %q", orig)
	}
	// The gateway serves the override.
	resp, body := env.RPC(t, "/mcp/"+ws, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"name":"quarterly_report"`) ||
		!strings.Contains(string(body), `"description":"Our quarterly report."`) {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, body)
	}
	// Remove override: the upstream's tool again.
	run("remove", chromedp.Click(row+` button:last-child`, chromedp.ByQuery), chromedp.WaitVisible(`#override-dialog button.danger`, chromedp.ByQuery),
		chromedp.Click(`#override-dialog button.danger`, chromedp.ByQuery))
	waitJS("back to the upstream's", `document.querySelector('tr[data-tool="report"]')?.dataset.modified === 'false'`)
}
