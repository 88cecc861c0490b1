package console_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/chromedp/chromedp"
)

// TestSkillsInBrowser (issue 34, SEP-2640): the Marketplace card of an installed server
// whose upstream declares skills (testpeer.SkillsUpstream) shows "2 skills"; opened, each
// skill's name, description and SKILL.md URI. A card of a server without skills shows
// none. Saved at 1280 and 390 px without sideways scroll.
func TestSkillsInBrowser(t *testing.T) {
	env, dev := devStack(t, nil)
	ws, _, _ := env.Workspace(t, "Skills")
	dev.as("admin", "web-admin", auth.RoleAdmin, ws)
	admin := stacktest.Token(t, "web-admin", auth.RoleAdmin, ws)
	su := stacktest.Token(t, "root", auth.RoleSuperuser)
	up := testpeer.NewSkillsUpstream(t, "delta")
	for name, url := range map[string]string{"Skilled server": up.URL, "Plain server": testpeer.NewFixture(t, nil).URL} {
		st, b := env.Do(t, "POST", "/api/mcp-marketplace", su, map[string]any{"name": name, "url": url, "transportType": "streamable-http", "category": "testing"})
		if st != http.StatusCreated {
			t.Fatalf("entry %s: %d %s", name, st, b)
		}
		var e struct{ ID string }
		_ = json.Unmarshal(b, &e)
		id := e.ID
		if st, b := env.Do(t, "POST", "/api/mcp-marketplace/"+id+"/install", admin, map[string]any{"workspaceId": ws}); st != http.StatusCreated {
			t.Fatalf("install %s: %d %s", name, st, b)
		}
	}

	k, stop := kit(t, env.URL)
	defer stop()
	k.signIn(dev, "admin")
	skilled := `li.card[data-entry="Skilled server"]`
	k.waitJS("skills shown", `!!document.querySelector('`+skilled+` details.skills')`)
	k.do("open skills", chromedp.Click(skilled+` details.skills summary`, chromedp.ByQuery))
	var text, plain string
	k.eval("skills text", `document.querySelector('`+skilled+` details.skills').innerText`, &text)
	for _, want := range []string{"2 skills", "code-review", "Review changes for delta (quality, tests, naming)",
		"skill://code-review/SKILL.md", "2 files", "refunds", "Refund a delta order", "skill://acme/billing/refunds/SKILL.md"} {
		if !strings.Contains(text, want) {
			t.Errorf("skills on the card lack %q: %q", want, text)
		}
	}
	k.eval("plain card", `document.querySelector('li.card[data-entry="Plain server"]').innerText`, &plain)
	if strings.Contains(plain, "skill") {
		t.Errorf("a server without skills shows some: %q", plain)
	}
	for _, w := range []struct {
		name string
		w, h int64
	}{{"1280", 1280, 900}, {"390", 390, 844}} {
		k.do("viewport "+w.name, chromedp.EmulateViewport(w.w, w.h))
		var overflow bool
		k.eval("sideways scroll", `document.documentElement.scrollWidth > window.innerWidth`, &overflow)
		if overflow {
			t.Fatalf("the marketplace with skills scrolls sideways at %s px", w.name)
		}
		k.do("card in view", chromedp.ScrollIntoView(skilled, chromedp.ByQuery))
		k.shot("marketplace-skills-" + w.name)
	}
}
