package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/identity"
	"github.com/chromedp/chromedp"
)

// TestMembersInBrowser: the Members page (docs/AUTH.md) in a real Chromium. The admin signs
// in with the development sign-in (which also records the admin as a person with a
// membership and starts the browser session), invites grace@example.com (listed as
// invited), Grace's first sign-in through the identity provider turns the invitation into
// a membership (listed as active), the admin makes her an admin, then removes her; her
// memberships, the source of truth of every token refresh, follow each step. A bad email
// is refused in the page and writes nothing.
func TestMembersInBrowser(t *testing.T) {
	var people *identity.Service
	sessions, err := identity.NewSessions([]byte(strings.Repeat("s", 32)), nil)
	if err != nil {
		t.Fatal(err)
	}
	env, dev := devStack(t, func(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
		person, err := people.DevSignIn(r.Context(), p)
		if err != nil {
			return err
		}
		return sessions.Set(w, person)
	})
	people = &identity.Service{Pool: env.Pool}
	ws, _, _ := env.Workspace(t, "Members")
	dev.as("admin", "web-admin", auth.RoleAdmin, ws)

	k, stop := kit(t, env.URL)
	defer stop()
	k.signIn(dev, "admin")
	var nav string
	k.eval("navigation", `[...document.querySelectorAll('header nav a')].map(a => a.textContent).join(',')`, &nav)
	if !strings.Contains(nav, "Members") {
		t.Fatalf("admin navigation %s lacks Members", nav)
	}
	k.open("#/members", "members")
	k.waitJS("the admin listed", `document.querySelector('tr[data-member="web-admin@dev.invalid"]') !== null`)

	// A bad email: refused in the page, nothing written.
	k.setValue("#member-email", "not an email")
	k.do("submit bad", chromedp.Click(`#member-add button[type="submit"]`, chromedp.ByQuery))
	k.waitJS("email error", `(document.querySelector('#member-email-error')?.textContent || '').includes('one email address')`)
	if n := countRows(t, env, `SELECT count(*) FROM invitations`); n != 0 {
		t.Fatalf("a refused email wrote %d invitations", n)
	}

	k.setValue("#member-email", "grace@example.com")
	k.do("invite", chromedp.Click(`#member-add button[type="submit"]`, chromedp.ByQuery))
	k.waitJS("invited", `document.querySelector('tr[data-member="grace@example.com"]')?.dataset.status === 'invited'`)
	k.shot("members-invited-1280")

	// Grace signs in through the identity provider for the first time.
	grace, err := people.SignIn(t.Context(), identity.Claims{Issuer: "https://idp.example", Subject: "grace",
		Email: "grace@example.com", EmailVerified: true, Name: "Grace Hopper"})
	if err != nil {
		t.Fatal(err)
	}
	k.open("#/marketplace", "marketplace")
	k.open("#/members", "members")
	k.waitJS("active", `document.querySelector('tr[data-member="grace@example.com"]')?.dataset.status === 'active'`)
	roles := func() string {
		ms, err := people.Memberships(t.Context(), grace.ID)
		if err != nil || len(ms) != 1 {
			return ""
		}
		return ms[0].Role
	}
	if r := roles(); r != auth.RoleMember {
		t.Fatalf("Grace's role after her sign-in: %q", r)
	}

	k.eval("make admin", `(() => { const s = document.querySelector('tr[data-member="grace@example.com"] select');
		s.value = 'admin'; s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, nil)
	k.waitJS("role changed", `(document.querySelector('main [role="status"]')?.textContent || '').includes('is now admin')`)
	if r := roles(); r != auth.RoleAdmin {
		t.Fatalf("Grace's role after the change: %q", r)
	}

	k.do("remove", chromedp.Click(`tr[data-member="grace@example.com"] button.danger`, chromedp.ByQuery))
	k.waitJS("removed", `document.querySelector('tr[data-member="grace@example.com"]') === null &&
		(document.querySelector('main [role="status"]')?.textContent || '').includes('was removed')`)
	if r := roles(); r != "" {
		t.Fatalf("a removed member keeps role %q", r)
	}
}
