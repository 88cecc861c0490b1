package console_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/clientsetup"
	"github.com/chromedp/chromedp"
)

// TestClientSetupURLFirstInBrowser: the Client setup page leads with the URL and each
// client's URL-only set-up (the same text as the make run banner's, shared/clientsetup),
// and no snippet ever holds the console's own token. The header snippets sit under their
// own heading with a placeholder until the person creates an MCP access token there (a
// name and a lifetime); the snippets then carry that token — masked until revealed — which
// lists tools at /mcp and is refused by the REST API; the page lists it, and Revoke (after
// a confirmation) ends it at the next call.
func TestClientSetupURLFirstInBrowser(t *testing.T) {
	chromium(t)
	base, _, ws := startIdPStack(t, "Setup", auth.RoleMember)
	consoleToken := stacktest.Token(t, "setup-member", auth.RoleMember, ws)
	k, stop := kit(t, base)
	defer stop()
	k.do("console", chromedp.Navigate(base+"/admin/#token="+url.QueryEscape(consoleToken)),
		chromedp.WaitVisible(`body[data-ready="marketplace"]`, chromedp.ByQuery))
	k.open("#/setup", "setup")
	mcpURL := base + "/mcp/" + ws

	type snippet struct{ ID, Kind, Text string }
	read := func() []snippet {
		var s []snippet
		k.eval("snippets", `[...document.querySelectorAll('pre[data-client]')].map(p => ({ID: p.dataset.client, Kind: p.dataset.kind, Text: p.textContent}))`, &s)
		return s
	}
	noConsoleToken := func(step string) {
		t.Helper()
		var page string
		k.eval("page text", `document.querySelector('main').innerText + [...document.querySelectorAll('pre')].map(p => p.textContent).join('\n')`, &page)
		if strings.Contains(page, consoleToken) {
			t.Fatalf("%s: the page shows the console's own token", step)
		}
	}

	// 1. URL first: the URL, then the URL-only set-up (the banner's text), then the header
	// section; no snippet holds a token or a header before the header heading.
	var order struct {
		First, URL      string
		URLBeforeHeader bool
		Headings        []string
	}
	k.eval("order", `(() => { const u = document.querySelector('.setup-url'), h = document.querySelector('.setup-header');
		return {First: document.querySelector('pre[data-client]').dataset.kind, URL: document.querySelector('#setup-url').textContent,
			URLBeforeHeader: !!(u.compareDocumentPosition(h) & Node.DOCUMENT_POSITION_FOLLOWING),
			Headings: [...document.querySelectorAll('.client-configs h2')].map(h => h.textContent)} })()`, &order)
	if order.First != "url" || order.URL != mcpURL || !order.URLBeforeHeader ||
		strings.Join(order.Headings, "|") != "Connect with the URL|Clients without OAuth: a header token" {
		t.Fatalf("page order: %+v", order)
	}
	got := read()
	want := clientsetup.URLOnly(mcpURL, "")
	if len(got) != len(want)+6 {
		t.Fatalf("%d snippets: %+v", len(got), got)
	}
	for i, c := range want {
		if got[i].Kind != "url" || got[i].ID != c.ID || got[i].Text != c.Text {
			t.Fatalf("URL-only snippet %d: console %+v\n banner %q %q", i, got[i], c.ID, c.Text)
		}
	}
	for _, s := range got[len(want):] {
		if s.Kind != "header" || !strings.Contains(s.Text, "Bearer YOUR_MCP_ACCESS_TOKEN") {
			t.Fatalf("header snippet before a token is made: %+v", s)
		}
	}
	noConsoleToken("before a token")
	k.shot("setup-url-first")

	// 2. Create an MCP access token for one day.
	k.setValue("#setup-token-name", "Chromium laptop")
	k.setValue("#setup-token-life", "86400")
	k.do("create", chromedp.Click(`#setup-token button[type="submit"]`, chromedp.ByQuery))
	k.waitJS("created", `(document.querySelector('#setup-token [role="status"]')?.textContent || '').includes('shown this once')`)
	k.waitJS("listed", `!!document.querySelector('.mcp-tokens li[data-token]')`)
	for _, s := range read() {
		if s.Kind == "header" && (!strings.Contains(s.Text, "Bearer ••••") || strings.Contains(s.Text, "YOUR_MCP_ACCESS_TOKEN")) {
			t.Fatalf("header snippet after creation, before Reveal: %+v", s)
		}
	}
	noConsoleToken("created, masked")
	k.shot("setup-token-created")
	k.do("reveal", chromedp.Click(`.setup-header button.reveal`, chromedp.ByQuery))
	var header []snippet
	for _, s := range read() {
		if s.Kind == "header" {
			header = append(header, s)
		}
	}
	const pre = `--header "Authorization: Bearer `
	i := strings.Index(header[0].Text, pre)
	if header[0].ID != "claude-code" || i < 0 {
		t.Fatalf("claude code header snippet: %+v", header[0])
	}
	tok := strings.TrimSuffix(header[0].Text[i+len(pre):], `"`)
	if tok == consoleToken {
		t.Fatal("the header snippets carry the console's own token")
	}
	for j, c := range clientsetup.For(mcpURL, tok, "") {
		if header[j].ID != c.ID || header[j].Text != c.Text {
			t.Fatalf("header snippet %s: console %q\n banner %q", c.ID, header[j].Text, c.Text)
		}
	}
	noConsoleToken("revealed")
	// The token: /mcp only, a day, a grant of its own.
	parts := strings.Split(tok, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	_ = json.Unmarshal(raw, &claims)
	if aud, _ := claims["aud"].([]any); len(aud) != 1 || aud[0] != base+"/mcp" || claims["exp"].(float64)-claims["iat"].(float64) != 86400 {
		t.Fatalf("token claims: %v", claims)
	}
	if st, _, body := rpcStatus(t, mcpURL, tok); st != http.StatusOK || !strings.Contains(body, `"tools"`) {
		t.Fatalf("tools/list with the page's token: %d %s", st, body)
	}
	if st, b := stacktest.DoAt(t, base, "GET", "/api/mcp-marketplace?workspaceId="+ws, tok, nil); st != http.StatusUnauthorized || !strings.Contains(string(b), "another resource") {
		t.Fatalf("the page's token at the REST API: %d %s", st, b)
	}
	var listed string
	k.eval("list", `document.querySelector('.mcp-tokens li[data-token]').textContent`, &listed)
	if !strings.Contains(listed, "Chromium laptop") || !strings.Contains(listed, "member") {
		t.Fatalf("listed: %q", listed)
	}
	k.do("hide", chromedp.Click(`.setup-header button.reveal`, chromedp.ByQuery))
	layouts(t, k, []route{{"#/setup", "setup", "setup-url-first"}})

	// 3. Revoke from the list: asked first, then the token is refused at /mcp.
	k.do("revoke", chromedp.Click(`.mcp-tokens li[data-token] button.danger`, chromedp.ByQuery),
		chromedp.WaitVisible(`#revoke-token-dialog`, chromedp.ByQuery))
	k.do("confirm", chromedp.Click(`#revoke-token-dialog button.danger`, chromedp.ByQuery))
	k.waitJS("revoked", `!document.querySelector('.mcp-tokens li[data-token]') &&
		(document.querySelector('.mcp-tokens [role="status"]')?.textContent || '').includes('Revoked')`)
	if st, hdr, _ := rpcStatus(t, mcpURL, tok); st != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("after Revoke: %d %q", st, hdr.Get("WWW-Authenticate"))
	}
}

// rpcStatus posts a tools/list with token to u and returns the status, headers and body.
func rpcStatus(t *testing.T, u, token string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+token)
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, resp.Header, sb.String()
}
