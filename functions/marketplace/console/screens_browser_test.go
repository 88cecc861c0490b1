package console_test

import (
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/chromedp/chromedp"
)

// TestScreensAndPeopleInBrowser (issue 44 items 7–9): an admin signed in through the
// gateway's authorization server (token subject = their person id) sees every page — all
// twelve of the navigation — at 1280 and at 390 px without sideways
// scrolling and under a header at most a fifth of the screen high (layouts); the header
// names them by email, not by id; Usage per principal names them by email too (the API's
// label); the Usage page says what its errors are; Members says invitations send no email;
// the Policies "what if" Tool field stays inside its form; a policy that leaves members no
// tool warns before it is saved, and Save anyway saves it; the install dialog of a template
// entry says a URL without http(s):// has the wrong scheme and that the gateway's own REST
// URL is not an MCP server's, and writes nothing.
func TestScreensAndPeopleInBrowser(t *testing.T) {
	chromium(t)
	base, env, ws := startIdPStack(t, "Screens", auth.RoleAdmin)
	k, stop := kit(t, base)
	defer stop()
	k.do("sign in", chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(`#sign-in`, chromedp.ByQuery),
		chromedp.Click(`#sign-in`, chromedp.ByQuery), chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
	var person string
	if err := env.Pool.QueryRow(t.Context(), `SELECT id::text FROM people WHERE email = $1`, mockEmail).Scan(&person); err != nil {
		t.Fatal(err)
	}
	up := testpeer.NewRawUpstream(t, false)
	up.ToolsList = `{"tools":[{"name":"lookup_customer_by_a_rather_long_name","inputSchema":{"type":"object"}}]}`
	c := env.Connection(t, stacktest.Admin("setup", ws), connections.CreateInput{Name: "Customers", URL: up.URL, WorkspaceID: &ws}).Connection
	tool := "mcp_" + c.Handle + "_lookup_customer_by_a_rather_long_name"
	tok := stacktest.Token(t, person, auth.RoleAdmin, ws)
	for range 2 {
		if resp, raw := env.RPC(t, "/mcp/"+ws, tok, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`, nil); resp.StatusCode != 200 {
			t.Fatalf("call: %d %s", resp.StatusCode, raw)
		}
	}
	env.FlushAudit(t)

	// The header names the person by email (the subject stays in a data attribute).
	k.waitJS("header email", `(document.querySelector('#signed-in-as')?.textContent || '').includes(`+"`"+mockEmail+"`"+`)`)
	var header struct{ Text, Title string }
	k.eval("header", `({Text: document.querySelector('header.top').textContent, Title: document.querySelector('header .role').title})`, &header)
	if strings.Contains(header.Text, person) || !strings.Contains(header.Title, mockEmail) {
		t.Errorf("header %+v names the person by id", header)
	}
	var nav []string
	k.eval("navigation", `[...document.querySelectorAll('header nav a')].map(a => a.getAttribute('href'))`, &nav)
	if len(nav) != 12 {
		t.Fatalf("admin navigation %v, want 12 pages", nav)
	}
	routes := make([]route, 0, len(nav))
	for _, h := range nav {
		name := strings.TrimPrefix(h, "#/")
		routes = append(routes, route{h, name, "page-" + name})
	}
	layouts(t, k, routes)

	// Usage per principal: by email, one row with both calls; errors defined.
	k.open("#/usage", "usage")
	k.setValue("#usage-by", "principal")
	k.waitJS("principal rows", `!!document.querySelector('#usage-table tr[data-key="`+person+`"]')`)
	var usage struct{ Row, Defined string }
	k.eval("usage row", `({Row: document.querySelector('#usage-table tr[data-key="`+person+`"] th').textContent,
		Defined: document.querySelector('#usage-errors-defined').textContent})`, &usage)
	if !strings.Contains(usage.Row, mockEmail) {
		t.Errorf("usage row %q does not name the person by email", usage.Row)
	}
	for _, s := range []string{"refused by an access policy", "tool error", "timed out", "failed to reach the server", "exposed name"} {
		if !strings.Contains(usage.Defined, s) {
			t.Errorf("the Usage page's errors definition %q lacks %q", usage.Defined, s)
		}
	}
	for _, w := range []struct {
		name string
		w, h int64
	}{{"390", 390, 844}, {"1280", 1280, 900}} {
		k.do("viewport "+w.name, chromedp.EmulateViewport(w.w, w.h))
		var wide bool
		k.eval("usage width", `document.documentElement.scrollWidth > window.innerWidth`, &wide)
		if wide {
			t.Errorf("Usage per principal scrolls sideways at %s px", w.name)
		}
		k.shot("usage-principal-" + w.name)
	}

	// Members: invitations send no email.
	k.open("#/members", "members")
	var members string
	k.eval("members text", `document.querySelector('#invite-no-email')?.textContent || ''`, &members)
	if !strings.Contains(members, "sends no email") {
		t.Errorf("Members page: %q, want it to say invitations send no email", members)
	}

	// Policies: the what-if Tool field stays inside its form at 1280 px; a document that
	// leaves members no tool warns before saving; Save anyway saves it.
	k.open("#/policies", "policies")
	var inside bool
	k.eval("tool field", `(() => { const f = document.querySelector('form.whatif').getBoundingClientRect();
		const i = document.querySelector('#wi-tool').getBoundingClientRect(); return i.left >= f.left && i.right <= f.right + 0.5 })()`, &inside)
	if !inside {
		t.Error("the what-if Tool field overflows its form at 1280 px")
	}
	noMembers := "@id(\"base\") permit(principal, action, resource);\n@id(\"no-members\") forbid(principal in Role::\"member\", action, resource is Tool);\n"
	k.setValue("#policy-text", noMembers)
	k.do("save", chromedp.Click(`#policy-save`, chromedp.ByQuery))
	k.waitJS("warned", `(document.querySelector('#policy-warnings')?.textContent || '').includes('member role can list no tool')`)
	if n := countRows(t, env, `SELECT count(*) FROM access_policies`); n != 0 {
		t.Fatalf("a warned document was saved before Save anyway (%d rows)", n)
	}
	k.shot("policies-warning-1280")
	var label string
	k.eval("save anyway", `document.querySelector('#policy-save').textContent`, &label)
	if !strings.Contains(label, "Save anyway") {
		t.Fatalf("save button %q", label)
	}
	k.do("save anyway", chromedp.Click(`#policy-save`, chromedp.ByQuery))
	k.waitJS("saved", `!!document.querySelector('#policy-saved')`)
	if n := countRows(t, env, `SELECT count(*) FROM access_policies`); n != 1 {
		t.Fatalf("Save anyway stored %d documents", n)
	}

	// The template entry's install dialog: the scheme, and the gateway's own REST URL.
	k.open("#/marketplace", "marketplace")
	before := countRows(t, env, `SELECT count(*) FROM mcp_connections`)
	k.do("template dialog", chromedp.Click(`li[data-entry="Custom MCP Server"] button.primary`, chromedp.ByQuery),
		chromedp.WaitVisible(`#install-dialog #placeholder-help`, chromedp.ByQuery))
	for _, c := range []struct{ url, want string }{
		{"mcp.example.com/mcp", "must start with https://"},
		{base + "/api/mcp-marketplace", "the gateway's own REST API URL"},
	} {
		k.setValue("#tpl-url", c.url)
		k.do("submit "+c.url, chromedp.Click(`#install-dialog button[type="submit"]`, chromedp.ByQuery))
		k.waitJS("url error "+c.url, `(document.querySelector('#tpl-url-error')?.textContent || '').includes(`+"`"+c.want+"`"+`)`)
	}
	k.shot("install-template-scheme")
	if n := countRows(t, env, `SELECT count(*) FROM mcp_connections`); n != before {
		t.Fatalf("a refused URL wrote a connection")
	}
}
