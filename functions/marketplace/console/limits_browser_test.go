package console_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/registry/registrytest"
	"github.com/chromedp/chromedp"
)

// TestRateLimitsInBrowser: the Rate limits page (docs/CONSOLE.md, docs/RATE-LIMITS.md) in a
// real Chromium. An admin's navigation has it, a member's does not (and the member who opens
// it by hand gets the API's FORBIDDEN). The admin creates a limit on one connection; a bad
// value (0 calls per minute) shows the API's VALIDATION_ERROR under its field and writes
// nothing; a good one is listed with usage 0; two proxied tools/call requests over the MCP
// endpoint with the admin's token move the usage (after Refresh usage); Delete removes it.
// The page is saved at 1280 and 390 px without sideways scroll.
func TestRateLimitsInBrowser(t *testing.T) {
	p := newTwoPeople(t, "Limits")
	env, ws, admin, k := p.env, p.ws, p.adminToken, p.k
	conn, up := p.installRaw(t)
	limits := func() int {
		t.Helper()
		return countRows(t, env, fmt.Sprintf(`SELECT count(*) FROM rate_limits WHERE workspace_id = '%s'`, ws))
	}

	nav := func() string {
		t.Helper()
		var n []string
		k.eval("navigation", `[...document.querySelectorAll('header nav a')].map(a => a.textContent)`, &n)
		return strings.Join(n, ",")
	}
	// A member: not in the navigation, and the page by hand shows the API's refusal.
	p.as("member")
	if n := nav(); strings.Contains(n, "Rate limits") {
		t.Fatalf("member navigation %s has Rate limits", n)
	}
	k.problems.allow403 = true
	k.open("#/limits", "limits")
	var refused string
	k.eval("member refused", `document.querySelector('main .error')?.textContent || ''`, &refused)
	if !strings.Contains(refused, "FORBIDDEN") {
		t.Fatalf("member on #/limits: %q", refused)
	}
	k.problems.allow403 = false

	p.as("admin")
	if n := nav(); !strings.Contains(n, "Connections,Rate limits") {
		t.Fatalf("admin navigation %s lacks Rate limits", n)
	}
	k.open("#/limits", "limits")
	k.eval("scope", `(() => { const s = document.querySelector('#rl-scope'); s.value = 'connection';
		s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, nil)
	k.do("connection field", chromedp.WaitVisible(`#rl-connection`, chromedp.ByQuery))
	k.eval("connection", `(() => { const s = document.querySelector('#rl-connection'); s.value = '`+conn.ID+`';
		s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, nil)

	// A bad value: the API's answer under the field, nothing written.
	k.problems.allow400 = true
	k.setValue("#rl-perMinute", "0")
	k.do("submit bad", chromedp.Click(`#limit-form button[type="submit"]`, chromedp.ByQuery))
	k.waitJS("perMinute error", `(document.querySelector('#rl-perMinute-error')?.textContent || '').includes('perMinute must be from 1')`)
	k.problems.allow400 = false
	k.shot("limits-refused-1280")
	if n := limits(); n != 0 {
		t.Fatalf("a refused limit wrote %d rows", n)
	}
	// A value that is not a number is refused in the page.
	k.setValue("#rl-perDay", "lots")
	k.do("submit not a number", chromedp.Click(`#limit-form button[type="submit"]`, chromedp.ByQuery))
	k.waitJS("perDay error", `(document.querySelector('#rl-perDay-error')?.textContent || '').includes('whole number')`)

	// A good limit: listed with usage 0 in both windows.
	k.setValue("#rl-perMinute", "3")
	k.setValue("#rl-perDay", "100")
	k.do("submit", chromedp.Click(`#limit-form button[type="submit"]`, chromedp.ByQuery))
	k.waitJS("listed", `document.querySelectorAll('tr[data-limit]').length === 1 &&
		(document.querySelector('main [role="status"]')?.textContent || '').includes('created')`)
	if n := limits(); n != 1 {
		t.Fatalf("rate_limits rows after create: %d", n)
	}
	type cell struct{ Used, Limit string }
	usage := func() (row string, minute, day cell) {
		t.Helper()
		var got struct {
			Row         string
			Minute, Day cell
		}
		k.eval("usage", `(() => { const u = (w) => { const e = document.querySelector('tr[data-limit] td[data-window="' + w + '"] .usage');
			return e ? {Used: e.dataset.used, Limit: e.dataset.limit} : {} };
			return {Row: document.querySelector('tr[data-limit]').textContent, Minute: u('minute'), Day: u('day')} })()`, &got)
		return got.Row, got.Minute, got.Day
	}
	row, minute, day := usage()
	if minute != (cell{"0", "3"}) || day != (cell{"0", "100"}) || !strings.Contains(row, "Connection Raw") || !strings.Contains(row, "Shared by all members") {
		t.Fatalf("new limit: %q minute %+v day %+v", row, minute, day)
	}
	k.shot("limits-created-1280")

	// Two proxied calls with the admin's token move the usage.
	for i := range 2 {
		resp, body := env.RPC(t, "/mcp/"+ws, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_`+conn.Handle+`_report","arguments":{}}}`, nil)
		if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "RATE_LIMITED") {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if n := len(up.Received("tools/call")); n != 2 {
		t.Fatalf("upstream got %d calls, want 2", n)
	}
	k.do("refresh", chromedp.Click(`#rl-refresh`, chromedp.ByQuery))
	// The day's count is 2 (the minute's too, unless a UTC minute ended between the calls
	// and the refresh, which only lowers it).
	k.waitJS("usage moved", `document.querySelector('tr[data-limit] td[data-window="day"] .usage')?.dataset.used === '2'`)
	_, minute, day = usage()
	if day != (cell{"2", "100"}) || minute.Limit != "3" || !slices.Contains([]string{"0", "1", "2"}, minute.Used) {
		t.Fatalf("after two calls: minute %+v day %+v", minute, day)
	}
	layouts(t, k, []route{{"#/limits", "limits", "limits"}})

	// Delete, after the confirmation.
	k.do("delete", chromedp.Click(`tr[data-limit] button.danger`, chromedp.ByQuery),
		chromedp.WaitVisible(`#limit-delete-dialog button.danger`, chromedp.ByQuery),
		chromedp.Click(`#limit-delete-dialog button.danger`, chromedp.ByQuery))
	k.waitJS("deleted", `document.querySelectorAll('tr[data-limit]').length === 0 &&
		(document.querySelector('main [role="status"]')?.textContent || '').includes('deleted')`)
	if n := limits(); n != 0 {
		t.Fatalf("rate_limits rows after delete: %d", n)
	}
}

// TestRegistryEntriesInBrowser: entries imported from MCP registry documents
// (docs/REGISTRY.md; the REST file import as the superuser, real documents of
// shared/registry/registrytest) show their source and version in the Marketplace, the
// Source filter narrows the list to registry or curated entries (the API's ?source=), a
// deprecated entry is flagged Deprecated, and a deleted one is not listed. Saved at 1280
// and 390 px, filtered to the registry, without sideways scroll. An admin's Install dialog
// has a field for the URL's template variable, required before anything is sent.
func TestRegistryEntriesInBrowser(t *testing.T) {
	p := newTwoPeople(t, "Registry")
	env, ws, k := p.env, p.ws, p.k
	su := stacktest.Token(t, "root", auth.RoleSuperuser)

	pick := map[string]bool{"com.aradia.sovereign-hardware.json": true, "io.github.user.remote-weather.json": true,
		"io.decisionrules.mcp-server.json": true, "com.example.acme-analytics.json": true, "seed.io.github.getcyphrex.cyphrex-mcp.json": true}
	var docs []json.RawMessage
	for i, d := range registrytest.Docs() {
		if pick[d.File] {
			docs = append(docs, registrytest.Item(d.Raw, d.Status, fmt.Sprintf("2025-12-11T10:00:%02dZ", i), true))
		}
	}
	st, b := env.Do(t, "POST", "/api/mcp-marketplace/registry-import", su, map[string]any{"documents": docs, "name": "console-fixture.json"})
	if st != http.StatusOK {
		t.Fatalf("import: %d %s", st, b)
	}
	type entry struct {
		Name, Version, Source string
		Deprecated            bool
	}
	list := func(source string) []entry {
		t.Helper()
		st, b := env.Do(t, "GET", "/api/mcp-marketplace?source="+source, su, nil)
		var out struct{ Entries []entry }
		if err := json.Unmarshal(b, &out); err != nil || st != http.StatusOK {
			t.Fatalf("list %s: %d %s", source, st, b)
		}
		return out.Entries
	}
	imported := list("registry")
	curated := list("curated")
	want := map[string]entry{}
	for _, e := range imported {
		want[e.Name] = e
	}
	if len(imported) != 4 || !want["com.aradia/sovereign-hardware"].Deprecated || want["io.github.user/remote-weather"].Version != "2.1.0" || len(curated) == 0 {
		t.Fatalf("imported %+v (report %s), %d curated", imported, b, len(curated))
	}

	p.as("member")
	type card struct {
		Name, Source, Deprecated, Text string
	}
	cards := func() []card {
		t.Helper()
		var out []card
		k.eval("cards", `[...document.querySelectorAll('.cards li.card')].map(c => ({Name: c.dataset.entry, Source: c.dataset.source,
			Deprecated: c.dataset.deprecated, Text: c.innerText}))`, &out)
		return out
	}
	chooseSource := func(v string, n int) {
		t.Helper()
		k.setValue("#mp-source", v)
		k.waitJS("source "+v, fmt.Sprintf(`document.querySelectorAll('.cards li.card').length === %d &&
			[...document.querySelectorAll('.cards li.card')].every(c => %q === '' || c.dataset.source === %q)`, n, v, v))
	}
	// All sources: the imported entries among the curated ones, the deleted one absent.
	chooseSource("", len(imported)+len(curated))
	seen := map[string]card{}
	for _, c := range cards() {
		seen[c.Name] = c
	}
	for name, e := range want {
		c, ok := seen[name]
		if !ok || c.Source != "registry" || !strings.Contains(c.Text, "Registry · file:console-fixture.json") ||
			!strings.Contains(c.Text, e.Version) {
			t.Fatalf("card of %s: %+v", name, c)
		}
		if (c.Deprecated == "true") != e.Deprecated || strings.Contains(c.Text, "Deprecated") != e.Deprecated {
			t.Fatalf("deprecated flag of %s: %+v", name, c)
		}
	}
	if _, ok := seen["io.github.getcyphrex/cyphrex-mcp"]; ok {
		t.Fatal("a deleted registry entry is listed")
	}
	var version string
	k.eval("version cell", `document.querySelector('li.card[data-entry="io.github.user/remote-weather"] dd.version')?.textContent || ''`, &version)
	if version != "2.1.0" {
		t.Fatalf("version shown %q", version)
	}
	// Filtered by source.
	chooseSource("curated", len(curated))
	chooseSource("registry", len(imported))
	for _, w := range []struct {
		name string
		w, h int64
	}{{"1280", 1280, 900}, {"390", 390, 844}} {
		k.do("viewport "+w.name, chromedp.EmulateViewport(w.w, w.h))
		var overflow bool
		k.eval("sideways scroll", `document.documentElement.scrollWidth > window.innerWidth`, &overflow)
		if overflow {
			t.Fatalf("the registry marketplace scrolls sideways at %s px", w.name)
		}
		k.do("top", chromedp.Evaluate(`window.scrollTo(0, 0)`, nil))
		k.shot("marketplace-registry-" + w.name)
	}
	k.do("laptop", chromedp.EmulateViewport(1280, 900))

	// An admin's Install dialog asks for the URL's template variable; left empty, the page
	// refuses it under the field and nothing is installed.
	p.as("admin")
	acme := `li.card[data-entry="com.example/acme-analytics"]`
	k.do("install", chromedp.WaitVisible(acme+` button.primary`, chromedp.ByQuery), chromedp.Click(acme+` button.primary`, chromedp.ByQuery),
		chromedp.WaitVisible(`#install-dialog #var-0`, chromedp.ByQuery))
	var label string
	k.eval("variable label", `document.querySelector('label[for="var-0"]').textContent`, &label)
	if label != "URL variable tenant_id" {
		t.Fatalf("variable field label %q", label)
	}
	k.do("submit empty", chromedp.Click(`#install-dialog button[type="submit"]`, chromedp.ByQuery))
	k.waitJS("variable required", `(document.querySelector('#var-0-error')?.textContent || '').includes('Required')`)
	if n := countRows(t, env, fmt.Sprintf(`SELECT count(*) FROM mcp_connections WHERE workspace_id = '%s'`, ws)); n != 0 {
		t.Fatalf("an install without its variable wrote %d connections", n)
	}
}
