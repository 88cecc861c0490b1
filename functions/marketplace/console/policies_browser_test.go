package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPoliciesInBrowser: the Policies and Usage pages (docs/POLICIES.md) in a real
// Chromium. The admin writes a policy with a typo in a tool name: the save answers the
// problem at its line (the gutter marks line 2) and stores nothing; fixed, it saves. Then a
// member's call of the tool over the MCP endpoint is denied (FORBIDDEN, the policy's id,
// nothing upstream) and the admin's allowed; the what-if pad says the same. After 50
// proxied calls the Usage page shows their count, per tool and per chat.
func TestPoliciesInBrowser(t *testing.T) {
	p := newTwoPeople(t, "Policies")
	env, ws, chat, admin, member, k := p.env, p.ws, p.chat, p.adminToken, p.memberToken, p.k
	conn, up := p.installRaw(t)
	plain, report := "mcp_"+conn.Handle+"_plain", "mcp_"+conn.Handle+"_report"
	stored := func() int {
		t.Helper()
		return countRows(t, env, fmt.Sprintf(`SELECT count(*) FROM access_policies WHERE workspace_id = '%s'`, ws))
	}

	p.as("admin")
	k.open("#/policies", "policies")

	// A typo in the tool's name: the problem at line 2, the gutter marks it, nothing stored.
	base := `@id("base") permit(principal, action, resource);` + "\n"
	bad := base + `@id("members-no-plain") forbid(principal in Role::"member", action == Action::"call", resource == Tool::"` + plain + `x");`
	k.setValue("#policy-text", bad)
	k.problems.allow400 = true
	k.do("save bad", chromedp.Click(`#policy-save`, chromedp.ByQuery))
	k.waitJS("problem at line 2", `(document.querySelector('#policy-problems li[data-line="2"]')?.textContent || '').includes('unknown tool')`)
	k.problems.allow400 = false
	var marked []string
	k.eval("gutter", `[...document.querySelectorAll('.gutter [data-bad]')].map(e => e.textContent)`, &marked)
	if strings.Join(marked, ",") != "2" {
		t.Fatalf("gutter marks lines %v, want 2", marked)
	}
	k.shot("policies-refused-1280")
	if n := stored(); n != 0 {
		t.Fatalf("a refused document was stored (%d rows)", n)
	}

	// Fixed: saved.
	k.setValue("#policy-text", strings.Replace(bad, plain+"x", plain, 1))
	k.do("save", chromedp.Click(`#policy-save`, chromedp.ByQuery))
	k.waitJS("saved", `(document.querySelector('#policy-saved')?.textContent || '').includes('Saved 2 policies')`)
	if n := stored(); n != 1 {
		t.Fatalf("access_policies rows after save: %d", n)
	}

	// A member's call is denied, an admin's allowed; only the admin's reaches the upstream.
	call := func(token string) string {
		t.Helper()
		resp, body := env.RPC(t, "/mcp/"+ws, token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+plain+`","arguments":{}}}`, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("call: %d %s", resp.StatusCode, body)
		}
		return string(body)
	}
	if out := call(member); !strings.Contains(out, `"FORBIDDEN"`) || !strings.Contains(out, `"members-no-plain"`) || strings.Contains(out, "forbid(") {
		t.Fatalf("member's call: %s", out)
	}
	if n := len(up.Received("tools/call")); n != 0 {
		t.Fatalf("the upstream got %d calls after a denial", n)
	}
	if out := call(admin); strings.Contains(out, `"isError":true`) {
		t.Fatalf("admin's call: %s", out)
	}
	if n := len(up.Received("tools/call")); n != 1 {
		t.Fatalf("the upstream got %d calls, want the admin's 1", n)
	}

	// The what-if pad.
	k.setValue("#wi-role", "member")
	k.setValue("#wi-tool", plain)
	k.do("decide", chromedp.Click(`#wi-run`, chromedp.ByQuery))
	k.waitJS("denied", `document.querySelector('#wi-decision')?.dataset.allowed === 'false' &&
		document.querySelector('#wi-decision').textContent.includes('members-no-plain')`)
	k.setValue("#wi-role", "admin")
	k.do("decide admin", chromedp.Click(`#wi-run`, chromedp.ByQuery))
	k.waitJS("allowed", `document.querySelector('#wi-decision')?.dataset.allowed === 'true'`)
	k.shot("policies-whatif-1280")

	// 50 proxied calls (the first 5 in a chat), then the Usage page counts them, per tool
	// and per chat.
	for i := range 50 {
		var hdr map[string]string
		if i < 5 {
			hdr = map[string]string{"X-Chat-Id": chat}
		}
		resp, body := env.RPC(t, "/mcp/"+ws, admin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+report+`","arguments":{"q":"x"}}}`, hdr)
		if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"isError":true`) {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, body)
		}
	}
	env.FlushAudit(t)
	k.open("#/usage", "usage")
	k.waitJS("report counted", fmt.Sprintf(`document.querySelector('tr[data-key=%q]')?.dataset.calls === '50'`, report))
	var errs string
	k.eval("plain errors", fmt.Sprintf(`document.querySelector('tr[data-key=%q] td[data-label="Errors"]')?.textContent || ''`, plain), &errs)
	if errs != "1" {
		t.Fatalf("plain's errors on the Usage page: %q, want the member's denial", errs)
	}
	k.shot("usage-1280")
	k.setValue("#usage-by", "chat")
	k.waitJS("chat counted", fmt.Sprintf(`document.querySelector('tr[data-key=%q]')?.dataset.calls === '5'`, chat))
	// The other 47 rows (45 calls, the denial and the admin's call of plain) have no chat.
	k.waitJS("no chat counted", `document.querySelector('tr[data-key="none"]')?.dataset.calls === '47' &&
		document.querySelector('tr[data-key="none"] th').textContent === '(no chat)'`)
}
