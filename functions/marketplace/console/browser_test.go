package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// interactiveBudget is the console's target for "page interactive" on loopback (300 ms,
// docs/CONSOLE.md). The test reports every timing against it but fails only past
// interactiveHang (scaled by TEST_TIMEOUT_SCALE): a suite on a loaded machine measures the
// machine, not the page, and a hung page is what a test can reliably catch.
const (
	interactiveBudget = 300 * time.Millisecond
	interactiveHang   = 5 * time.Second
)

// chromium finds the browser (testpeer.Chromium: CHROMIUM_PATH, else Debian's chromium;
// it skips without one unless REQUIRE_BROWSER=1).
func chromium(t *testing.T) string {
	t.Helper()
	return testpeer.Chromium(t)
}

// outDir is where screenshots and timings go: CONSOLE_TEST_OUT, else .state/console-test
// at the repository root.
func outDir(t *testing.T) string {
	d := os.Getenv("CONSOLE_TEST_OUT")
	if d == "" {
		d = filepath.Join("..", "..", "..", ".state", "console-test")
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// recorder keeps every response body the stack sends to the browser, to prove a secret
// never travels back.
type recorder struct {
	mu   sync.Mutex
	body bytes.Buffer
}

type teeWriter struct {
	http.ResponseWriter
	r *recorder
}

func (w teeWriter) Write(b []byte) (int, error) {
	w.r.mu.Lock()
	w.r.body.Write(b)
	w.r.mu.Unlock()
	return w.ResponseWriter.Write(b)
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.ServeHTTP(teeWriter{w, r}, req)
	})
}

func (r *recorder) contains(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Contains(r.body.Bytes(), []byte(s))
}

// browserProblems collects console errors, uncaught exceptions, error log entries (CSP
// violations among them) while the test runs; allow403 and allow400 let the network log
// line of a refusal the test provokes on purpose through.
type browserProblems struct {
	mu       sync.Mutex
	list     []string
	allow403 bool
	allow400 bool
}

func (p *browserProblems) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if (p.allow403 && strings.Contains(s, "403")) || (p.allow400 && strings.Contains(s, "400")) {
		return
	}
	p.list = append(p.list, s)
}

func (p *browserProblems) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.list
	p.list = nil
	return out
}

// TestConsoleInBrowser drives the console in headless Chromium against the local stack
// (real Postgres, real MCP fixture upstreams): dev sign-in, search and filter, install with
// a header whose value never comes back, test, toggle, add a connection with field
// errors, drift and approve, chats and pins with the resolved set changing, activity,
// uninstall, the member's read-only view and a refused forged admin request, and the
// superuser's catalog edit. Any console error, exception or CSP violation fails it. It
// writes a screenshot of every page and the page-interactive timings to outDir.
func TestConsoleInBrowser(t *testing.T) {
	execPath := chromium(t)
	out := outDir(t)
	_ = os.Remove(filepath.Join(out, "failure.png")) // from an earlier failed run

	code := "browser-test-sign-in-code-0123456789"
	principals := map[string]auth.Principal{}
	signIn, err := console.DevSignIn("local", stacktest.Secret, code, time.Hour, principals)
	if err != nil {
		t.Fatal(err)
	}
	env := stacktest.New(t, &stacktest.Options{Stack: &stack.Options{DevSignIn: signIn}})
	ws, _, _ := env.Workspace(t, "Browser")
	principals["admin"] = auth.Principal{Subject: "web-admin", Role: auth.RoleAdmin, Workspaces: []string{ws}}
	principals["member"] = auth.Principal{Subject: "web-member", Role: auth.RoleMember, Workspaces: []string{ws}}
	principals["superuser"] = auth.Principal{Subject: "web-root", Role: auth.RoleSuperuser, Workspaces: []string{ws}}
	ws2, _, _ := env.Workspace(t, "Other")
	principals["multi"] = auth.Principal{Subject: "web-multi", Role: auth.RoleAdmin, Workspaces: []string{ws, ws2}}
	su := stacktest.Token(t, "setup-root", auth.RoleSuperuser)

	fx := testpeer.NewFixture(t, nil)
	fx2 := testpeer.NewFixture(t, nil)
	st, b := env.Do(t, "POST", "/api/mcp-marketplace", su, map[string]any{
		"name": "Browser Fixture", "url": fx.URL, "category": "Testing", "description": "The test's MCP fixture.",
		"headers": map[string]string{"X-Api-Key": "{{API_KEY}}"},
	})
	if st != http.StatusCreated {
		t.Fatalf("create entry: %d %s", st, b)
	}
	// A global connection: in a chat's default set, dropped once the chat has pins (pins
	// add to the workspace's own connections; docs/DESIGN.md §7).
	fx3 := testpeer.NewFixture(t, nil)
	if st, b := env.Do(t, "POST", "/api/mcp-connections", su, map[string]any{"name": "Global", "url": fx3.URL}); st != http.StatusCreated {
		t.Fatalf("global connection: %d %s", st, b)
	}
	// An OAuth-protected upstream (its own authorization server, dynamic registration,
	// PKCE) behind a catalog entry whose default auth mode is oauth: the install answers a
	// consent to complete (docs/UPSTREAM-AUTH.md).
	oauthUp := testpeer.NewOAuthUpstream(t)
	st, b = env.Do(t, "POST", "/api/mcp-marketplace", su, map[string]any{
		"name": "OAuth Fixture", "url": oauthUp.MCPURL(), "transportType": "streamable-http", "category": "Identity",
		"description": "An OAuth-protected MCP server.",
	})
	if st != http.StatusCreated {
		t.Fatalf("create oauth entry: %d %s", st, b)
	}
	var oauthEntry struct{ ID string }
	if err := json.Unmarshal(b, &oauthEntry); err != nil || oauthEntry.ID == "" {
		t.Fatalf("oauth entry: %v %s", err, b)
	}
	if err := db.CatalogEntryAuthModeSet(t.Context(), env.Pool, oauthEntry.ID, "oauth"); err != nil {
		t.Fatal(err)
	}
	// An entry whose server is down: installing it must not look like a success.
	if st, b := env.Do(t, "POST", "/api/mcp-marketplace", su, map[string]any{
		"name": "Down Fixture", "url": "http://127.0.0.1:1/mcp", "category": "Diagnostics", "description": "Nothing listens here.",
	}); st != http.StatusCreated {
		t.Fatalf("create down entry: %d %s", st, b)
	}
	const secret = "sk-browser-secret-7f3a9c"

	rec := &recorder{}
	srv := httptest.NewServer(stacktest.CheckOpenAPI(t, rec.wrap(env.Stack.Handler)))
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	// The pinned chromedp logs CDP events it does not know (newer Chromium) as errors.
	bctx, cancelB := chromedp.NewContext(actx, chromedp.WithErrorf(func(f string, a ...any) {
		if !strings.HasPrefix(f, "unhandled") {
			t.Logf("chromedp: "+f, a...)
		}
	}))
	defer cancelB()
	ctx, cancel := context.WithTimeout(bctx, 9*time.Minute)
	defer cancel()

	problems := &browserProblems{}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems.add("exception: " + e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeAssert || e.Type == runtime.APITypeWarning {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value))
				}
				problems.add("console." + string(e.Type) + ": " + strings.Join(parts, " "))
			}
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.LevelError || e.Entry.Level == cdplog.LevelWarning {
				problems.add("log " + string(e.Entry.Source) + ": " + e.Entry.Text + " " + e.Entry.URL)
			}
		}
	})
	do := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			var png []byte
			var body string
			_ = chromedp.Run(ctx, chromedp.CaptureScreenshot(&png), chromedp.Evaluate(`document.querySelector('main')?.innerText || ''`, &body))
			_ = os.WriteFile(filepath.Join(out, "failure.png"), png, 0o644)
			t.Fatalf("%s: %v\npage text:\n%s", what, err, body)
		}
		if p := problems.take(); len(p) > 0 {
			t.Fatalf("%s: browser problems: %v", what, p)
		}
	}
	eval := func(what, js string, res any) {
		t.Helper()
		do(what, chromedp.Evaluate(js, res, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		}))
	}
	waitJS := func(what, cond string) {
		t.Helper()
		do(what, chromedp.Poll(cond, nil, chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(20*time.Millisecond)))
	}
	// shot saves a screenshot; page shots (not dialogs, not a detail the test scrolled
	// to) are taken from the top of the page.
	shot := func(name string) {
		t.Helper()
		if !strings.ContainsAny(name, "-") || strings.HasSuffix(name, "-phone") {
			do("scroll to top "+name, chromedp.Evaluate(`window.scrollTo(0, 0)`, nil))
		}
		var png []byte
		do("screenshot "+name, chromedp.CaptureScreenshot(&png))
		if err := os.WriteFile(filepath.Join(out, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkCSP := func(what string) {
		t.Helper()
		var v []string
		eval(what+": CSP violations", `window.__csp || []`, &v)
		if len(v) > 0 {
			t.Fatalf("%s: CSP violations: %v", what, v)
		}
	}
	// setValue replaces a control's value the way typing does (an input event follows).
	setValue := func(sel, v string) {
		t.Helper()
		eval("set "+sel, fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q;
			e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, sel, v), nil)
	}
	// checkLabels fails the test when a visible form control has no accessible name (a
	// <label>, aria-label or aria-labelledby) or a button has no text, or when two
	// elements share an id (labels and error messages point at ids).
	checkLabels := func(what string) {
		t.Helper()
		var bad []string
		eval(what+": labels", `(() => {
			const named = e => (e.labels && e.labels.length) || e.getAttribute('aria-label') || e.getAttribute('aria-labelledby');
			const out = [...document.querySelectorAll('input, select, textarea')]
				.filter(e => e.type !== 'hidden' && !named(e)).map(e => 'unlabelled ' + (e.id || e.outerHTML.slice(0, 60)));
			for (const b of document.querySelectorAll('button'))
				if (!b.textContent.trim() && !b.getAttribute('aria-label')) out.push('nameless button ' + b.outerHTML.slice(0, 60));
			const ids = {};
			for (const e of document.querySelectorAll('[id]')) if (ids[e.id]++) out.push('duplicate id ' + e.id); else ids[e.id] = 1;
			return out;
		})()`, &bad)
		if len(bad) > 0 {
			t.Fatalf("%s: accessibility: %v", what, bad)
		}
	}
	timings := map[string]float64{}
	// open switches the hash route and measures, in the page, the time until the page
	// marks itself ready (its data shown, its controls live).
	open := func(route, ready string) {
		t.Helper()
		var ms float64
		eval("open "+route, fmt.Sprintf(`new Promise((resolve, reject) => {
			delete document.body.dataset.ready;
			const t0 = performance.now();
			location.hash = %q;
			const give = setTimeout(() => reject(new Error('not ready')), 10000);
			const tick = () => document.body.dataset.ready === %q ? (clearTimeout(give), resolve(performance.now() - t0)) : requestAnimationFrame(tick);
			tick();
		})`, route, ready), &ms)
		timings[ready] = ms
		checkLabels(route)
	}
	signInAs := func(role string) {
		t.Helper()
		do("sign in as "+role,
			chromedp.Navigate(srv.URL+console.DevSignInPath+"?code="+code+"&as="+role),
			chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
	}

	do("enable log", chromedp.ActionFunc(func(ctx context.Context) error {
		if err := cdplog.Enable().Do(ctx); err != nil {
			return err
		}
		_, err := page.AddScriptToEvaluateOnNewDocument(`window.__csp = [];
			document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`).Do(ctx)
		return err
	}))

	// ---- admin: sign in through the dev link ----
	signInAs("admin")
	var first float64
	eval("first load timing", `performance.getEntriesByName('ready:marketplace')[0].startTime`, &first)
	// The browser's very first page pays for its own start (renderer process, JS engine):
	// reported, not held to the budget; the full page loads below are.
	coldFirst := first
	var storage struct {
		Session, Local, Cookie, Hash string
	}
	eval("token storage", `({Session: sessionStorage.getItem('agentpack.console.token') || '', Local: JSON.stringify(localStorage),
		Cookie: document.cookie, Hash: location.hash})`, &storage)
	if storage.Session == "" || storage.Local != "{}" || storage.Cookie != "" || strings.Contains(storage.Hash, "token") {
		t.Fatalf("token storage: %+v", storage)
	}

	// Health: an entry nobody installed says why it has no health.
	waitJS("honest health badge", `document.querySelector('li[data-entry="Asana"] .badge-never').textContent === 'Never checked · not installed anywhere'`)

	// Search and filter.
	do("search", chromedp.SendKeys(`#mp-search`, "browser fix", chromedp.ByQuery))
	waitJS("search result", `document.querySelectorAll('.cards > li').length === 1 && !!document.querySelector('li[data-entry="Browser Fixture"]')`)
	setValue("#mp-search", "")
	waitJS("all entries back", `document.querySelectorAll('.cards > li').length > 20`)
	eval("filter", `(() => { const s = document.querySelector('#mp-category'); s.value = 'Testing'; s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, nil)
	waitJS("filtered", `document.querySelectorAll('.cards > li').length === 1 && !!document.querySelector('li[data-entry="Browser Fixture"]')`)
	shot("marketplace-filtered")
	eval("unfilter", `(() => { const s = document.querySelector('#mp-category'); s.value = ''; s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, nil)
	waitJS("unfiltered", `document.querySelectorAll('.cards > li').length > 20`)

	// Install with a header: the Installed badge appears; the value never comes back.
	do("open install", chromedp.Click(`li[data-entry="Browser Fixture"] button.primary`, chromedp.ByQuery),
		chromedp.WaitVisible(`#install-dialog #hdr-0`, chromedp.ByQuery))
	do("submit empty header", chromedp.Click(`#install-dialog button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#hdr-0-error`, chromedp.ByQuery))
	do("type header", chromedp.SendKeys(`#hdr-0`, secret, chromedp.ByQuery))
	var inputType string
	eval("masked", `document.querySelector('#hdr-0').type`, &inputType)
	if inputType != "password" {
		t.Fatalf("header input type %q", inputType)
	}
	checkLabels("install dialog")
	shot("install-dialog")
	do("install", chromedp.Click(`#install-dialog button[type="submit"]`, chromedp.ByQuery))
	waitJS("installed badge", `!!document.querySelector('li[data-entry="Browser Fixture"] .badge-installed') && !document.querySelector('#install-dialog')`)
	var html string
	eval("page html", `document.documentElement.outerHTML + JSON.stringify(sessionStorage)`, &html)
	if strings.Contains(html, secret) {
		t.Fatal("the header value is visible in the page")
	}
	sawHeader := false
	for _, r := range fx.Requests() {
		sawHeader = sawHeader || r.Header.Get("X-Api-Key") == secret
	}
	if !sawHeader {
		t.Fatal("the upstream never received the header")
	}
	checkLabels("marketplace")
	shot("marketplace")
	// The workspace is named, not shown as an id prefix.
	waitJS("workspace name", `document.querySelector('#workspace-name')?.textContent === 'Browser'`)

	// A failed first connect is an error (red), not a success (issue 25 item 2).
	problems.allow400 = true
	do("install down", chromedp.Click(`li[data-entry="Down Fixture"] button.primary`, chromedp.ByQuery),
		chromedp.WaitVisible(`#install-dialog button[type="submit"]`, chromedp.ByQuery),
		chromedp.Click(`#install-dialog button[type="submit"]`, chromedp.ByQuery))
	waitJS("failure shown as a failure", `(() => { const n = document.querySelector('main .notice');
		return !!n && n.dataset.kind === 'error' && n.classList.contains('notice-error') && n.textContent.includes('Down Fixture was installed') && n.textContent.includes('first connect failed') })()`)
	var noticeColour string
	eval("error notice colour", `getComputedStyle(document.querySelector('main .notice')).backgroundColor`, &noticeColour)
	if noticeColour != "rgb(252, 232, 230)" {
		t.Fatalf("a failed install's notice has background %s, want the error red", noticeColour)
	}
	// Its card has no green "Installed" badge: it says it is not connected, in red (issue 34).
	waitJS("card badge after a failed install", `(() => { const c = document.querySelector('li[data-entry="Down Fixture"]');
		return !!c && !c.querySelector('.badge-installed') && c.querySelector('.badge-failed')?.textContent === 'Installed · not connected' })()`)
	shot("marketplace-install-failed")
	_ = problems.take()
	problems.allow400 = false

	// Connections: field errors, add a second connection, test, toggle, drift + approve.
	open("#/connections", "connections")
	do("add empty", chromedp.Click(`form.panel button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#add-name-error`, chromedp.ByQuery), chromedp.WaitVisible(`#add-url-error`, chromedp.ByQuery))
	do("add fill", chromedp.SendKeys(`#add-name`, "Second", chromedp.ByQuery), chromedp.SendKeys(`#add-url`, "not a url", chromedp.ByQuery),
		chromedp.Click(`form.panel button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(`#add-url-error`, chromedp.ByQuery))
	shot("connections-field-errors")
	setValue("#add-url", fx2.URL)
	// A header the API refuses (gateway-owned name): its error lands under that header's name.
	do("add header row", chromedp.Click(`form.panel fieldset > button`, chromedp.ByQuery), chromedp.WaitVisible(`#add-h-name-0`, chromedp.ByQuery))
	setValue("#add-h-name-0", "Host")
	setValue("#add-h-value-0", "evil.example")
	problems.allow400 = true
	do("add with refused header", chromedp.Click(`form.panel button[type="submit"]`, chromedp.ByQuery))
	waitJS("header error under its field", `(document.querySelector('#add-h-name-0-error')?.textContent || '').length > 0`)
	time.Sleep(50 * time.Millisecond)
	_ = problems.take()
	problems.allow400 = false
	shot("connections-server-field-error")
	do("remove header row", chromedp.Click(`form.panel .header-row button.icon`, chromedp.ByQuery))
	do("add submit", chromedp.Click(`form.panel button[type="submit"]`, chromedp.ByQuery))
	waitJS("second added", `!!document.querySelector('li[data-connection="Second"]')`)
	// The connection that never connected says so in red; it is not "Idle".
	waitJS("never connected", `(() => { const r = document.querySelector('li[data-connection="Down Fixture"]');
		const b = r && r.querySelector('.badge-failed'); return !!b && b.textContent === 'Never connected' && !r.querySelector('.badge-idle') })()`)
	// The page says what Live, Ready and Failing mean.
	waitJS("state legend", `/Live: .*Ready: .*Failing/.test(document.querySelector('#state-legend')?.textContent || '')`)
	// Client setup of one connection: the same six clients on its own endpoint.
	do("connection setup", chromedp.Click(`li[data-connection="Second"] .actions button:nth-child(4)`, chromedp.ByQuery),
		chromedp.WaitVisible(`#setup-dialog pre[data-client="vscode"]`, chromedp.ByQuery))
	var setupURL string
	eval("connection setup endpoint", `document.querySelector('#setup-dialog .client-configs').dataset.endpoint`, &setupURL)
	if !strings.HasPrefix(setupURL, srv.URL+"/mcp/"+ws+"/servers/") {
		t.Fatalf("connection setup endpoint %q", setupURL)
	}
	checkLabels("connection setup")
	shot("connection-setup-dialog")
	do("close setup", chromedp.Click(`#setup-dialog .dialog-head button`, chromedp.ByQuery))

	// The global connection (superuser-managed) shows no actions an admin cannot take.
	var global struct {
		Buttons  int
		Disabled bool
	}
	eval("global row", `({Buttons: document.querySelectorAll('li[data-connection="Global"] .actions button').length,
		Disabled: document.querySelector('li[data-connection="Global"] .switch input').disabled})`, &global)
	if global.Buttons != 0 || !global.Disabled {
		t.Fatalf("an admin gets write actions on a global connection: %+v", global)
	}
	row := `li[data-connection="Browser Fixture"]`
	do("test", chromedp.Click(row+` .actions button:nth-child(1)`, chromedp.ByQuery))
	waitJS("test result", `/\d+ tools · \d+ ms/.test(document.querySelector('`+row+` .test-result')?.textContent || '')`)
	var result string
	do("read test result", chromedp.Text(row+` .test-result`, &result, chromedp.ByQuery))
	if m := regexp.MustCompile(`^(\d+) tools · (\d+) ms$`).FindStringSubmatch(result); m == nil || m[1] != "5" {
		t.Fatalf("test result %q, want 5 tools", result)
	}
	// Edit: the saved header shows only as [REDACTED]; saving keeps the real value.
	do("edit", chromedp.Click(row+` .actions button:nth-child(2)`, chromedp.ByQuery), chromedp.WaitVisible(`#edit-h-value-0`, chromedp.ByQuery))
	var shown string
	eval("redacted value", `document.querySelector('#edit-h-value-0').value + '|' + document.querySelector('#edit-h-value-0').type`, &shown)
	if shown != "[REDACTED]|password" {
		t.Fatalf("edit dialog shows the header as %q", shown)
	}
	checkLabels("edit dialog")
	shot("connection-edit")
	do("save edit", chromedp.Click(`#edit-dialog button[type="submit"]`, chromedp.ByQuery))
	waitJS("saved", `!document.querySelector('#edit-dialog') && (document.querySelector('main [role="status"]')?.textContent || '') === 'Saved.'`)
	fx.ResetRequests()
	do("toggle off", chromedp.Click(row+` .switch input`, chromedp.ByQuery))
	waitJS("disabled", `document.querySelector('`+row+` .switch span').textContent === 'Disabled'`)
	if n := countRows(t, env, `SELECT count(*) FROM mcp_connections WHERE name = 'Browser Fixture' AND NOT enabled`); n != 1 {
		t.Fatal("toggle did not disable the connection")
	}
	do("toggle on", chromedp.Click(row+` .switch input`, chromedp.ByQuery))
	waitJS("enabled", `document.querySelector('`+row+` .switch span').textContent === 'Enabled'`)

	kept := false
	for _, r := range fx.Requests() {
		kept = kept || r.Header.Get("X-Api-Key") == secret
	}
	if !kept {
		t.Fatal("after an edit that left [REDACTED] in place, the upstream no longer gets the header")
	}
	fx.SetToolDescription("echo", "Echoes back the input message. Changed upstream.")
	do("retest", chromedp.Click(row+` .actions button:nth-child(1)`, chromedp.ByQuery))
	waitJS("drift badge", `!!document.querySelector('`+row+` .badge-drift')`)
	do("show tools", chromedp.Click(row+` .actions button:nth-child(3)`, chromedp.ByQuery))
	waitJS("drifted tool", `!!document.querySelector('`+row+` tr[data-tool="echo"] button.approve')`)
	shot("connections-drift")
	do("approve", chromedp.Click(row+` tr[data-tool="echo"] button.approve`, chromedp.ByQuery))
	waitJS("approved", `!document.querySelector('`+row+` tr[data-tool="echo"] button.approve') && document.querySelector('`+row+` tr[data-tool="echo"] .badge').textContent === 'active'`)
	if n := countRows(t, env, `SELECT count(*) FROM mcp_connection_tools WHERE upstream_name = 'echo' AND status = 'active'
		AND connection_id = (SELECT id FROM mcp_connections WHERE name = 'Browser Fixture')`); n != 1 {
		t.Fatal("approve did not reach the database")
	}
	shot("connections")

	// Chats: create, pin, the resolved set changes.
	open("#/chats", "chats")
	// An empty title is refused with a message; nothing is created.
	chatsBefore := countRows(t, env, `SELECT count(*) FROM chats`)
	do("create untitled", chromedp.Click(`.inline-form button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#chat-title-error`, chromedp.ByQuery))
	var titleErr string
	eval("title error", `document.querySelector('#chat-title-error').textContent`, &titleErr)
	if !strings.Contains(titleErr, "title") || countRows(t, env, `SELECT count(*) FROM chats`) != chatsBefore {
		t.Fatalf("empty title: %q, chats %d → %d", titleErr, chatsBefore, countRows(t, env, `SELECT count(*) FROM chats`))
	}
	do("chat title", chromedp.SendKeys(`#chat-title`, "Browser chat", chromedp.ByQuery))
	delete(timings, "chat")
	do("create chat", chromedp.Click(`.inline-form button[type="submit"]`, chromedp.ByQuery))
	waitJS("chat open", `document.body.dataset.ready === 'chat' && location.hash.startsWith('#/chats/')`)
	toolCount := func() int {
		var n int
		eval("tool count", `document.querySelectorAll('.toolset tbody tr').length`, &n)
		return n
	}
	if n := toolCount(); n != 15 {
		t.Fatalf("default tool set: %d tools, want 15 (three connections of 5)", n)
	}
	// Workspace connections are always included; only the global one is a "default".
	var whyBefore map[string]string
	eval("why before pins", `Object.fromEntries([...document.querySelectorAll('.toolset tbody tr')].map(tr => [tr.children[1].textContent, tr.children[2].textContent]))`, &whyBefore)
	if whyBefore["Browser Fixture"] != "Always included" || whyBefore["Second"] != "Always included" || whyBefore["Global"] != "Workspace default" {
		t.Fatalf("why without pins: %v", whyBefore)
	}
	// The pins explanation: pins add, never remove the workspace's own connections.
	var explained struct {
		Text   string
		Always []string
		Global []string
	}
	eval("pins explained", `({Text: document.querySelector('#pins-explained').textContent,
		Always: [...document.querySelectorAll('.pinner [data-scope="workspace"]')].filter(d => d.querySelector('.badge-why-always')?.textContent === 'Always included').map(d => d.querySelector('label').textContent),
		Global: [...document.querySelectorAll('.pinner [data-scope="global"]')].map(d => d.querySelector('label').textContent)})`, &explained)
	if !strings.Contains(explained.Text, "never remove") || !strings.Contains(explained.Text, "always in the chat") ||
		len(explained.Always) < 3 || len(explained.Global) != 1 || !strings.HasPrefix(explained.Global[0], "Global") {
		t.Fatalf("pins explanation: %+v", explained)
	}
	var fixtureID string
	eval("fixture conn id", `[...document.querySelectorAll('.pinner label')].find(l => l.textContent.startsWith('Browser Fixture')).getAttribute('for')`, &fixtureID)
	do("pin", chromedp.Click(`#`+fixtureID, chromedp.ByQuery))
	waitJS("pinned set", `document.querySelectorAll('.toolset tbody tr').length === 10`)
	var why map[string]string
	eval("sources", `Object.fromEntries([...document.querySelectorAll('.toolset tbody tr')].map(tr => [tr.children[1].textContent, tr.children[2].textContent]))`, &why)
	if len(why) != 2 || why["Browser Fixture"] != "Pinned" || why["Second"] != "Always included" {
		t.Fatalf("pinned set: source → why = %v (the global connection must have left)", why)
	}
	shot("chats")

	// ---- playground: one tool per content type, through the gateway's own endpoint ----
	playground(t, &pgKit{do: do, eval: eval, waitJS: waitJS, setValue: setValue, open: open, shot: shot, checkLabels: checkLabels,
		env: env, fx: fx, ws: ws, admin: stacktest.Token(t, "web-admin", auth.RoleAdmin, ws), problems: problems})
	// ---- client setup: masked until revealed, the same text as the make run banner ----
	clientSetup(t, &pgKit{do: do, eval: eval, waitJS: waitJS, setValue: setValue, open: open, shot: shot, checkLabels: checkLabels,
		env: env, fx: fx, ws: ws, srvURL: srv.URL})

	// Delete a connection (confirmed in a dialog); it leaves the chat's set.
	open("#/connections", "connections")
	do("delete second", chromedp.Click(`li[data-connection="Second"] button.danger`, chromedp.ByQuery),
		chromedp.WaitVisible(`#delete-dialog button.danger`, chromedp.ByQuery), chromedp.Click(`#delete-dialog button.danger`, chromedp.ByQuery))
	waitJS("deleted", `!document.querySelector('li[data-connection="Second"]')`)
	if n := countRows(t, env, `SELECT count(*) FROM mcp_connections WHERE name = 'Second'`); n != 0 {
		t.Fatal("delete left the connection")
	}

	// Activity.
	open("#/activity", "activity")
	waitJS("events", `document.querySelectorAll('.events tbody tr').length >= 5`)
	eval("filter chats", `(() => { const s = document.querySelector('#ev-entity'); s.value = 'chat'; s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, nil)
	waitJS("chat events", `(() => { const r = [...document.querySelectorAll('.events tbody tr')]; return r.length === 1 && r[0].textContent.includes('chat.created') })()`)
	shot("activity")

	// Uninstall from the Installed menu.
	open("#/marketplace", "marketplace")
	card := `li[data-entry="Browser Fixture"]`
	do("menu", chromedp.Click(card+` .menu button`, chromedp.ByQuery), chromedp.WaitVisible(card+` [role="menuitem"]`, chromedp.ByQuery))
	waitJS("menu moves focus to its item", `document.activeElement?.getAttribute('role') === 'menuitem'`)
	do("uninstall", chromedp.Click(card+` [role="menuitem"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#uninstall-dialog button.danger`, chromedp.ByQuery))
	// A confirmation first: Cancel keeps it installed.
	checkLabels("uninstall dialog")
	shot("uninstall-confirm")
	do("cancel uninstall", chromedp.Click(`#uninstall-dialog .actions button:not(.danger)`, chromedp.ByQuery))
	waitJS("still installed", `!document.querySelector('#uninstall-dialog') && !!document.querySelector('`+card+` .badge-installed')`)
	if n := countRows(t, env, `SELECT count(*) FROM mcp_connections WHERE name = 'Browser Fixture'`); n != 1 {
		t.Fatal("a cancelled uninstall removed the connection")
	}
	do("uninstall again", chromedp.Click(card+` .menu button`, chromedp.ByQuery), chromedp.WaitVisible(card+` [role="menuitem"]`, chromedp.ByQuery),
		chromedp.Click(card+` [role="menuitem"]`, chromedp.ByQuery), chromedp.WaitVisible(`#uninstall-dialog button.danger`, chromedp.ByQuery),
		chromedp.Click(`#uninstall-dialog button.danger`, chromedp.ByQuery))
	waitJS("uninstalled", `!document.querySelector('`+card+` .badge-installed') && !!document.querySelector('`+card+` button.primary')`)
	if n := countRows(t, env, `SELECT count(*) FROM mcp_connections WHERE name = 'Browser Fixture'`); n != 0 {
		t.Fatal("uninstall left the connection")
	}
	// Keyboard: the first Tab reaches the skip link; Enter on an Install button opens the
	// dialog with focus inside it; Escape closes it.
	do("reload", chromedp.Reload(), chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
	do("tab", chromedp.KeyEvent(kb.Tab))
	waitJS("skip link focused", `document.activeElement?.classList.contains('skip')`)
	do("focus install", chromedp.Focus(`li[data-entry="Asana"] button.primary`, chromedp.ByQuery), chromedp.KeyEvent(kb.Enter))
	waitJS("dialog has focus", `!!document.querySelector('#install-dialog') && document.querySelector('#install-dialog').contains(document.activeElement)`)
	do("escape", chromedp.KeyEvent(kb.Escape))
	waitJS("dialog closed", `!document.querySelector('#install-dialog')`)

	// A template entry: the dialog explains what it needs and takes the server's URL.
	tplCard := `li[data-entry="Custom MCP Server"]`
	do("template dialog", chromedp.Click(tplCard+` button.primary`, chromedp.ByQuery),
		chromedp.WaitVisible(`#install-dialog #placeholder-help`, chromedp.ByQuery))
	do("template without url", chromedp.Click(`#install-dialog button[type="submit"]`, chromedp.ByQuery))
	waitJS("url required", `(document.querySelector('#tpl-url-error')?.textContent || '').includes('URL')`)
	checkLabels("template dialog")
	shot("install-template")
	setValue("#tpl-url", fx2.URL)
	do("template: header warning", chromedp.Click(`#install-dialog button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#hdr-0-error`, chromedp.ByQuery))
	do("template install anyway", chromedp.Click(`#install-dialog button[type="submit"]`, chromedp.ByQuery))
	waitJS("template installed", `!!document.querySelector('`+tplCard+` .badge-installed')`)
	checkCSP("admin")

	// Upstream OAuth: install shows the Connect step; Connect leaves for the upstream's
	// consent page (the test authorization server consents at once and redirects), the
	// gateway's callback page links back to the console, and the connection shows as
	// authorized by this admin. Re-authorize runs the same round trip from Connections.
	oauthCard := `li[data-entry="OAuth Fixture"]`
	do("oauth: open install", chromedp.Click(oauthCard+` button.primary`, chromedp.ByQuery),
		chromedp.WaitVisible(`#install-dialog button[type="submit"]`, chromedp.ByQuery))
	do("oauth: install", chromedp.Click(`#install-dialog button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#install-dialog #connect-step #connect-button`, chromedp.ByQuery))
	waitJS("oauth: installed behind the dialog", `!!document.querySelector('`+oauthCard+` .badge-installed')`)
	checkLabels("connect step")
	shot("install-connect")
	callbackBack := func(what string) {
		t.Helper()
		do(what+": callback page", chromedp.WaitVisible(`h1[data-status="authorized"]`, chromedp.ByQuery))
		var back struct{ Href, Text, Origin string }
		eval(what+": back link", `(() => { const a = document.querySelector('a#back'); return {Href: a ? a.href : '', Text: a ? a.textContent : '', Origin: location.origin} })()`, &back)
		if back.Origin != env.URL || back.Text != "Back to the console" || back.Href != srv.URL+console.Prefix+"/#/connections" {
			t.Fatalf("%s: callback page link %+v (stack %s, console %s)", what, back, env.URL, srv.URL)
		}
		checkCSP(what + ": callback page")
		shot("oauth-callback")
		do(what+": back to the console", chromedp.Click(`a#back`, chromedp.ByQuery),
			chromedp.WaitVisible(`body[data-ready="connections"]`, chromedp.ByQuery))
		waitJS(what+": authorized", `(() => { const d = document.querySelector('li[data-connection="OAuth Fixture"] dd[data-authorization]');
			return !!d && d.dataset.authorization === 'authorized' && d.textContent.includes('by web-admin') })()`)
	}
	do("oauth: connect", chromedp.Click(`#connect-button`, chromedp.ByQuery))
	callbackBack("oauth connect")
	var reauth string
	eval("oauth: re-authorize button", `document.querySelector('li[data-connection="OAuth Fixture"] .actions button')?.textContent || ''`, &reauth)
	if !strings.HasPrefix(reauth, "Re-authorize") {
		t.Fatalf("first action of the authorized connection: %q", reauth)
	}
	checkLabels("connections with oauth")
	shot("connections-oauth")
	if n := countRows(t, env, `SELECT count(*) FROM mcp_oauth_grants g JOIN mcp_connections c ON c.id = g.connection_id
		WHERE c.name = 'OAuth Fixture'`); n != 1 {
		t.Fatalf("grants of the OAuth connection: %d", n)
	}
	do("oauth: re-authorize", chromedp.Click(`li[data-connection="OAuth Fixture"] .actions button`, chromedp.ByQuery))
	callbackBack("oauth re-authorize")
	// A manual connection with auth mode oauth: the same Connect step after Add; Later
	// leaves it unauthorized, with Authorize on its row.
	setValue("#add-name", "Manual OAuth")
	setValue("#add-url", oauthUp.MCPURL())
	eval("oauth: auth mode", `(() => { const s = document.querySelector('#add-auth'); s.value = 'oauth'; s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, nil)
	do("oauth: add", chromedp.Click(`form.panel button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#connect-dialog #connect-step #connect-button`, chromedp.ByQuery))
	checkLabels("connect dialog")
	do("oauth: later", chromedp.Click(`#connect-dialog #connect-step button:not(.primary)`, chromedp.ByQuery))
	waitJS("oauth: manual required", `(() => { const r = document.querySelector('li[data-connection="Manual OAuth"]');
		return !document.querySelector('#connect-dialog') && !!r && r.querySelector('dd[data-authorization]')?.dataset.authorization === 'required'
			&& r.querySelector('.actions button').textContent.startsWith('Authorize') })()`)
	checkCSP("oauth")
	open("#/marketplace", "marketplace")

	// Full page loads (a new document each: HTML, API calls, render; the versioned assets
	// come from the browser's cache after the first), warm browser, five times each. The
	// budget holds the best run: on this shared machine other jobs only ever add time, and
	// the median and worst are reported next to it.
	spread := map[string]string{}
	for _, pg := range []string{"marketplace", "connections", "chats", "activity"} {
		var runs []float64
		for range 5 {
			var ms float64
			do("load "+pg, chromedp.Navigate("about:blank"), chromedp.Navigate(srv.URL+console.Prefix+"/#/"+pg),
				chromedp.WaitVisible(`body[data-ready="`+pg+`"]`, chromedp.ByQuery))
			eval("load timing "+pg, `performance.getEntriesByName('ready:`+pg+`')[0].startTime`, &ms)
			runs = append(runs, ms)
		}
		slices.Sort(runs)
		timings["full load "+pg] = runs[0]
		spread["full load "+pg] = fmt.Sprintf("(median %.1f, worst %.1f)", runs[2], runs[4])
	}

	// Every page at 1280 and 390 px: screenshots, and no sideways scroll on a phone.
	var chatID string
	if err := env.Pool.QueryRow(context.Background(), `SELECT id FROM chats WHERE title = 'Browser chat'`).Scan(&chatID); err != nil {
		t.Fatal(err)
	}
	chatHash := "#/chats/" + chatID
	layouts(t, &pgKit{do: do, eval: eval, waitJS: waitJS, open: open, shot: shot}, []route{
		{"#/marketplace", "marketplace", "marketplace"}, {"#/connections", "connections", "connections"},
		{"#/chats", "chats", "chats"}, {chatHash, "chat", "chat"}, {"#/playground", "playground", "playground"},
		{"#/setup", "setup", "setup"}, {"#/authorizations", "authorizations", "authorizations"}, {"#/activity", "activity", "activity"},
	})
	// Activity on a phone: each event is a block, its Details shown and wrapped within the screen.
	do("phone", chromedp.EmulateViewport(390, 844))
	open("#/connections", "connections")
	open("#/activity", "activity")
	var details struct{ Shown, Wide int }
	eval("activity details on a phone", `(() => { const tds = [...document.querySelectorAll('.events td.details')];
		return {Shown: tds.filter(td => td.getClientRects().length > 0 && getComputedStyle(td).display !== 'none').length,
			Wide: [...document.querySelectorAll('.events td')].filter(td => td.getBoundingClientRect().right > window.innerWidth + 1).length} })()`, &details)
	if details.Shown == 0 || details.Wide != 0 {
		t.Fatalf("activity at 390 px: %+v (details must show, no cell past the screen)", details)
	}
	// On a phone the marketplace opens compact (issue 34), much shorter than the cards; the
	// button shows the cards and back. Category badges are words, not slugs.
	do("forget the view choice", chromedp.Evaluate(`sessionStorage.removeItem('agentpack.console.marketplace-view'); true`, nil))
	do("reload the marketplace", chromedp.Evaluate(`location.hash = '#/marketplace'`, nil), chromedp.Reload(),
		chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
	waitJS("compact by default on a phone", `document.querySelector('.cards').classList.contains('compact')`)
	var heights struct{ Cards, Compact float64 }
	eval("compact height", `document.documentElement.scrollHeight`, &heights.Compact)
	shot("marketplace-compact-390")
	do("cards", chromedp.Click(`#mp-compact`, chromedp.ByQuery))
	waitJS("cards on", `!document.querySelector('.cards').classList.contains('compact')`)
	eval("cards height", `document.documentElement.scrollHeight`, &heights.Cards)
	if heights.Compact > heights.Cards/2 {
		t.Fatalf("compact marketplace %.0f px vs cards %.0f px: want under half", heights.Compact, heights.Cards)
	}
	var cats []string
	eval("category labels", `[...document.querySelectorAll('.badge-category')].map(b => b.textContent)`, &cats)
	for _, c := range cats {
		if strings.Contains(c, "-") || c == strings.ToLower(c) {
			t.Fatalf("category badge %q is a slug (all: %v)", c, cats)
		}
	}
	do("compact again", chromedp.Click(`#mp-compact`, chromedp.ByQuery))
	do("laptop", chromedp.EmulateViewport(1280, 900))
	// At 1280 px the header (the admin's eight pages) is one line.
	var header struct{ Height, Nav float64 }
	eval("header height", `({Height: document.querySelector('header.top').getBoundingClientRect().height,
		Nav: document.querySelector('header nav ul').getBoundingClientRect().height})`, &header)
	if header.Nav > 48 || header.Height > 64 {
		t.Fatalf("the header wraps at 1280 px: %+v", header)
	}

	// ---- member: read-only, and a forged admin request is refused with the error shown ----
	signInAs("member")
	var adminUI struct {
		Nav            []string
		Install, Menus int
	}
	eval("member view", `({Nav: [...document.querySelectorAll('header nav a')].map(a => a.textContent),
		Install: document.querySelectorAll('.cards button.primary').length, Menus: document.querySelectorAll('.menu').length})`, &adminUI)
	if strings.Join(adminUI.Nav, ",") != "Marketplace,Chats,Playground,Client setup,Clients,Authorizations" || adminUI.Install != 0 || adminUI.Menus != 0 {
		t.Fatalf("member sees admin actions: %+v", adminUI)
	}
	open("#/chats", "chats")
	var memberChat struct{ Form, Pinner int }
	eval("member chats", `({Form: document.querySelectorAll('.inline-form').length, Pinner: document.querySelectorAll('.pinner').length})`, &memberChat)
	if memberChat.Form != 0 || memberChat.Pinner != 0 {
		t.Fatalf("member sees chat admin controls: %+v", memberChat)
	}
	// The member reads a chat: its pins as a list (none left: uninstalling Browser Fixture
	// removed its pin), the resolved set, no checkboxes.
	do("member opens chat", chromedp.Click(`.chat-list a`, chromedp.ByQuery))
	waitJS("member chat", `document.body.dataset.ready === 'chat' && document.querySelectorAll('.toolset tbody tr').length > 0`)
	var memberDetail struct {
		Checkboxes int
		Pins       []string
	}
	eval("member chat detail", `({Checkboxes: document.querySelectorAll('main input[type="checkbox"]').length,
		Pins: [...document.querySelectorAll('main ul.pin-list li')].map(li => li.textContent)})`, &memberDetail)
	if memberDetail.Checkboxes != 0 || len(memberDetail.Pins) != 1 || !strings.HasPrefix(memberDetail.Pins[0], "No pins") {
		t.Fatalf("member's chat view: %+v", memberDetail)
	}
	shot("member-chats")
	problems.allow403 = true
	chats := countRows(t, env, `SELECT count(*) FROM chats`)
	var forged struct {
		Status int
		Code   string
	}
	eval("forged write", `fetch('/api/chats', {method: 'POST', headers: {'Content-Type': 'application/json',
		Authorization: 'Bearer ' + sessionStorage.getItem('agentpack.console.token')}, body: JSON.stringify({title: 'forged'})})
		.then(async r => ({Status: r.status, Code: (await r.json()).error.code}))`, &forged)
	if forged.Status != 403 || forged.Code != "FORBIDDEN" || countRows(t, env, `SELECT count(*) FROM chats`) != chats {
		t.Fatalf("forged admin write: %+v", forged)
	}
	do("forged admin page", chromedp.Evaluate(`location.hash = '#/connections'`, nil))
	waitJS("refusal shown", `(document.querySelector('main [role="alert"]')?.textContent || '').includes('FORBIDDEN')`)
	shot("member-forged-refused")
	time.Sleep(100 * time.Millisecond) // let the 403's log entry arrive while it is allowed
	_ = problems.take()
	problems.allow403 = false
	checkCSP("member")

	// ---- superuser: edit a catalog entry ----
	signInAs("superuser")
	open("#/catalog", "catalog")
	// A superuser's nine pages and the who block still fit one header line at 1280 px.
	var suHeader struct{ Height float64 }
	eval("superuser header", `({Height: document.querySelector('header.top').getBoundingClientRect().height})`, &suHeader)
	if suHeader.Height > 64 {
		t.Fatalf("the superuser's header wraps at 1280 px: %+v", suHeader)
	}
	do("edit entry", chromedp.Click(`tr[data-entry="Browser Fixture"] td.actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#entry-dialog #e-description`, chromedp.ByQuery))
	setValue("#e-description", "Edited in the browser.")
	checkLabels("entry dialog")
	shot("catalog-edit")
	do("save", chromedp.Click(`#entry-dialog button[type="submit"]`, chromedp.ByQuery))
	waitJS("saved", `!document.querySelector('#entry-dialog') && (document.querySelector('main [role="status"]')?.textContent || '').includes('saved')`)
	if n := countRows(t, env, `SELECT count(*) FROM mcp_catalog_entries WHERE name = 'Browser Fixture' AND description = 'Edited in the browser.'`); n != 1 {
		t.Fatal("catalog edit did not reach the database")
	}
	shot("catalog")
	checkCSP("superuser")
	layouts(t, &pgKit{do: do, eval: eval, waitJS: waitJS, open: open, shot: shot}, []route{{"#/catalog", "catalog", "catalog"}})

	// Create and delete an entry.
	do("new entry", chromedp.Click(`section > button.primary`, chromedp.ByQuery), chromedp.WaitVisible(`#entry-dialog #e-name`, chromedp.ByQuery))
	setValue("#e-name", "Made in the browser")
	setValue("#e-url", "https://mcp.example.com/mcp")
	setValue("#e-category", "Testing")
	do("create entry", chromedp.Click(`#entry-dialog button[type="submit"]`, chromedp.ByQuery))
	waitJS("entry listed", `!!document.querySelector('tr[data-entry="Made in the browser"]')`)
	do("delete entry", chromedp.Click(`tr[data-entry="Made in the browser"] button.danger`, chromedp.ByQuery),
		chromedp.WaitVisible(`#delete-entry button.danger`, chromedp.ByQuery), chromedp.Click(`#delete-entry button.danger`, chromedp.ByQuery))
	waitJS("entry gone", `!document.querySelector('tr[data-entry="Made in the browser"]')`)
	if n := countRows(t, env, `SELECT count(*) FROM mcp_catalog_entries WHERE name = 'Made in the browser'`); n != 0 {
		t.Fatal("catalog delete left the entry")
	}
	if n := countRows(t, env, `SELECT count(*) FROM event_log WHERE action IN ('mcp.catalog_entry_created', 'mcp.catalog_entry_deleted') AND actor = 'web-root'`); n != 2 {
		t.Fatalf("catalog create/delete events: %d", n)
	}
	checkCSP("superuser")

	// ---- an admin of two workspaces switches between them ----
	signInAs("multi")
	var options int
	eval("switcher", `document.querySelectorAll('#workspace option').length`, &options)
	if options != 2 {
		t.Fatalf("workspace switcher has %d options, want 2", options)
	}
	waitJS("installed in the first", `!!document.querySelector('li[data-entry="Custom MCP Server"] .badge-installed')`)
	eval("switch", fmt.Sprintf(`(() => { const s = document.querySelector('#workspace'); s.value = %q; s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, ws2), nil)
	waitJS("not installed in the second", `document.body.dataset.ready === 'marketplace' && !document.querySelector('.badge-installed') && document.querySelectorAll('.cards > li').length > 20`)
	open("#/chats", "chats")
	var chatNames []string
	eval("second workspace chats", `[...document.querySelectorAll('.chat-list a')].map(a => a.textContent)`, &chatNames)
	if slices.Contains(chatNames, "Browser chat") {
		t.Fatalf("the second workspace lists the first's chats: %v", chatNames)
	}
	checkCSP("multi")

	// The header value never travelled back in any answer of the whole session.
	if rec.contains(secret) {
		t.Fatal("the header value appeared in a response body")
	}

	// Timings.
	var lines []string
	for k, v := range timings {
		if !strings.HasPrefix(k, "full load") {
			k = "in-app navigation " + k
		}
		lines = append(lines, strings.TrimSpace(fmt.Sprintf("%-45s %6.1f ms %s", k, v, spread[strings.TrimPrefix(k, "in-app navigation ")])))
		if hang := testpeer.Scaled(interactiveHang); v > float64(hang.Milliseconds()) {
			t.Errorf("%s: interactive after %.1f ms, a hang (target %v, failing past %v)", k, v, interactiveBudget, hang)
		} else if v > float64(interactiveBudget.Milliseconds()) {
			t.Logf("%s: interactive after %.1f ms, over the %v target (a loaded machine?)", k, v, interactiveBudget)
		}
	}
	slices.Sort(lines)
	lines = append(lines, fmt.Sprintf("%-45s %6.1f ms (cold browser; not held to the budget)", "first page of a fresh browser", coldFirst))
	report := strings.Join(lines, "\n")
	t.Logf("page interactive (loopback, seeded catalog):\n%s", report)
	timings["cold first page (reported only)"] = coldFirst
	j, _ := json.MarshalIndent(timings, "", "  ")
	_ = os.WriteFile(filepath.Join(out, "timings.json"), j, 0o644)
}

func countRows(t *testing.T, env *stacktest.Env, sql string) int {
	t.Helper()
	var n int
	if err := env.Pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
