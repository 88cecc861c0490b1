package console_test

import (
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/chromedp/chromedp"
)

// TestCreateWorkspaceInBrowser: the Members page's "Create a workspace" form (POST
// /api/workspaces, docs/CONSOLE.md) in a real Chromium. A superuser's empty and too-long
// names are refused in words and write nothing; a good name creates the workspace (the
// row in Postgres is the one the page shows, with its MCP URL) and Switch makes it the
// console's workspace; the API's 403, shown in words, when the tab's token is not a
// superuser's. A workspace admin who is not a superuser sees no form.
func TestCreateWorkspaceInBrowser(t *testing.T) {
	env, dev := devStack(t, nil)
	ws, _, _ := env.Workspace(t, "Home")
	dev.as("super", "web-super", auth.RoleSuperuser, ws)
	dev.as("admin", "web-admin", auth.RoleAdmin, ws)
	workspaces := func() int { return countRows(t, env, `SELECT count(*) FROM workspaces`) }
	before := workspaces()

	k, stop := kit(t, env.URL)
	defer stop()

	// A workspace admin who is not a superuser: the page without the form.
	k.signIn(dev, "admin")
	k.open("#/members", "members")
	var hasForm bool
	k.eval("admin form", `!!document.querySelector('#workspace-create')`, &hasForm)
	if hasForm {
		t.Fatal("a workspace admin who is no superuser sees the Create a workspace form")
	}

	k.signIn(dev, "super")
	k.open("#/members", "members")
	k.waitJS("form", `document.querySelector('#workspace-create') !== null`)

	submit := chromedp.Click(`#workspace-create button[type="submit"]`, chromedp.ByQuery)
	fieldError := `(document.querySelector('#workspace-name-input-error')?.textContent || '')`

	// Empty (blanks only): refused in the page, nothing written.
	k.setValue("#workspace-name-input", "   ")
	k.do("submit empty", submit)
	k.waitJS("empty error", fieldError+`.includes('Give the workspace a name')`)
	if n := workspaces(); n != before {
		t.Fatalf("an empty name wrote %d workspaces", n-before)
	}

	// Too long: 201 bytes (the API's limit is 200), refused in the page.
	k.setValue("#workspace-name-input", strings.Repeat("w", 201))
	k.do("submit long", submit)
	k.waitJS("long error", fieldError+`.includes('too long')`)
	if n := workspaces(); n != before {
		t.Fatalf("a too long name wrote %d workspaces", n-before)
	}

	// A good name: created, shown with its id and MCP URL.
	k.setValue("#workspace-name-input", "  Made in the console ")
	k.do("create", submit)
	k.waitJS("created", `document.querySelector('#workspace-created') !== null`)
	var shown struct{ ID, URL, Text string }
	k.eval("created", `({ID: document.querySelector('#workspace-created').dataset.workspace,
		URL: document.querySelector('#workspace-created-url').textContent,
		Text: document.querySelector('#workspace-created').innerText})`, &shown)
	var id string
	if err := env.Pool.QueryRow(t.Context(), `SELECT id::text FROM workspaces WHERE name = 'Made in the console'`).Scan(&id); err != nil {
		t.Fatalf("the workspace the page created (trimmed name): %v", err)
	}
	if shown.ID != id || shown.URL != env.URL+"/mcp/"+id || !strings.Contains(shown.Text, id) {
		t.Fatalf("the page shows %+v, want workspace %s at %s/mcp/%s", shown, id, env.URL, id)
	}
	if n := workspaces(); n != before+1 {
		t.Fatalf("one create wrote %d workspaces", n-before)
	}
	k.shot("members-workspace-created-1280")

	// Switch: the header's workspace is the new one, by name; the page follows it.
	k.do("switch", chromedp.Click(`#workspace-switch`, chromedp.ByQuery))
	k.waitJS("switched", `document.querySelector('#workspace')?.value === '`+id+`' &&
		document.querySelector('#workspace option[value="`+id+`"]')?.textContent === 'Made in the console' &&
		sessionStorage.getItem('agentpack.console.workspace') === '`+id+`'`)

	// The API's 403, in words, when the tab's token is no superuser's; nothing written.
	admin := stacktest.Token(t, "web-admin", auth.RoleAdmin, ws)
	k.eval("swap token", `sessionStorage.setItem('agentpack.console.token', '`+admin+`'), true`, nil)
	k.setValue("#workspace-name-input", "Not allowed")
	k.do("create as admin", submit)
	k.waitJS("403 error", `(document.querySelector('#workspace-create-error')?.textContent || '').includes('Only a superuser')`)
	if n := workspaces(); n != before+1 {
		t.Fatalf("a refused create wrote %d workspaces", n-before-1)
	}
}
