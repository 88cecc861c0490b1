package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/clientsetup"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pgKit is what the issue-25 parts of TestConsoleInBrowser share with it: its step
// helpers and the stack they drive.
type pgKit struct {
	do          func(string, ...chromedp.Action)
	eval        func(string, string, any)
	waitJS      func(string, string)
	setValue    func(string, string)
	open        func(string, string)
	shot        func(string)
	checkLabels func(string)
	env         *stacktest.Env
	fx          *testpeer.Fixture
	ws, admin   string
	srvURL      string
	problems    *browserProblems
}

// route is a console page: its hash, the ready mark it sets, and its screenshot name.
type route struct{ hash, ready, name string }

// layouts opens every route at 1280 and at 390 px, saves <name>-1280.png and
// <name>-390.png, and fails when a page scrolls sideways on the phone (issue 25 item 8).
func layouts(t *testing.T, k *pgKit, routes []route) {
	t.Helper()
	for _, w := range []struct {
		name string
		w, h int64
	}{{"1280", 1280, 900}, {"390", 390, 844}} {
		k.do("viewport "+w.name, chromedp.EmulateViewport(w.w, w.h))
		for _, r := range routes {
			// open waits for a route change: leave first when the page is already this one.
			k.do("leave", chromedp.Evaluate(`location.hash = '#/leave'`, nil))
			k.open(r.hash, r.ready)
			var overflow bool
			k.eval("sideways scroll "+r.name, `document.documentElement.scrollWidth > window.innerWidth`, &overflow)
			if overflow {
				var culprits []string
				k.eval("what is wide", `[...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
					.slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`, &culprits)
				t.Fatalf("%s scrolls sideways at %s px: %v", r.name, w.name, culprits)
			}
			k.do("top "+r.name, chromedp.Evaluate(`window.scrollTo(0, 0)`, nil))
			k.shot(r.name + "-" + w.name)
		}
	}
	k.do("laptop", chromedp.EmulateViewport(1280, 900))
}

// pixelPNG returns a 2×2 PNG (red, green / blue, white).
func pixelPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	img.Set(1, 0, color.RGBA{0, 160, 0, 255})
	img.Set(0, 1, color.RGBA{0, 0, 255, 255})
	img.Set(1, 1, color.White)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// formSchema exercises the generated form: a default string, a default integer, an enum
// with a default, an array of strings, and a nested object with a required member.
const formSchema = `{"type":"object","properties":{
	"title":{"type":"string","default":"Report","description":"A title."},
	"count":{"type":"integer","default":2},
	"mode":{"enum":["fast","safe"],"default":"safe"},
	"tags":{"type":"array","items":{"type":"string"}},
	"owner":{"type":"object","properties":{"name":{"type":"string"},"email":{"type":"string"}},"required":["name"]}},
	"required":["title","owner"]}`

// playground drives the Playground page (issue 25): the demo fixture's text (echo),
// structured (add) and isError (fail) tools, an image tool and a tool whose schema has
// nested objects, arrays, enums, defaults and required members, all through the gateway's
// own MCP endpoint; then a resource and a prompt on the connection's own endpoint.
func playground(t *testing.T, k *pgKit) {
	t.Helper()
	pixel := pixelPNG(t)
	k.fx.Server.AddTool(&mcp.Tool{Name: "pixel", Description: "Returns a 2×2 PNG.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: pixel, MIMEType: "image/png"}}}, nil
		})
	k.fx.Server.AddTool(&mcp.Tool{Name: "form", Description: "Echoes its arguments.", InputSchema: json.RawMessage(formSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: args}, nil
		})
	var conn string
	if err := k.env.Pool.QueryRow(context.Background(), `SELECT id FROM mcp_connections WHERE name = 'Browser Fixture'`).Scan(&conn); err != nil {
		t.Fatal(err)
	}
	if st, b := k.env.Do(t, "POST", "/api/mcp-connections/"+conn+"/refresh", k.admin, nil); st != http.StatusOK {
		t.Fatalf("refresh: %d %s", st, b)
	}
	k.open("#/playground", "playground")
	k.waitJS("tools listed", `[...document.querySelectorAll('#pg-tool option')].some(o => o.value.endsWith('_pixel'))`)
	// The tool search box (agentpack_tools_search, the gateway's ranking): a hit names its
	// server and matched fields and opens its form; a search that finds nothing says which
	// servers there are.
	search := func(q string) {
		t.Helper()
		k.setValue("#pg-search-q", q)
		k.do("search "+q, chromedp.Click(`#pg-search button[type="submit"]`, chromedp.ByQuery))
	}
	search("echo back the message")
	k.waitJS("search hits", `[...document.querySelectorAll('#pg-search-results li[data-hit]')].some(li => li.dataset.hit.startsWith('mcp_') && li.dataset.hit.endsWith('_echo') && li.textContent.includes('matched'))`)
	k.eval("choose the echo hit", `(() => { [...document.querySelectorAll('#pg-search-results li[data-hit]')].find(li => li.dataset.hit.startsWith('mcp_') && li.dataset.hit.endsWith('_echo')).querySelector('button').click(); return true })()`, nil)
	k.waitJS("form of the hit", `(document.querySelector('#pg-form')?.dataset.tool || '').endsWith('_echo')`)
	search("zzzqqq xyzzy")
	k.waitJS("no match", `(document.querySelector('#pg-search-results')?.textContent || '').includes('Servers here')`)
	pick := func(suffix string) {
		t.Helper()
		k.eval("pick "+suffix, fmt.Sprintf(`(() => { const s = document.querySelector('#pg-tool');
			s.value = [...s.options].find(o => o.value.startsWith('mcp_') && o.value.endsWith(%q)).value;
			s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, "_"+suffix), nil)
		k.waitJS("form of "+suffix, fmt.Sprintf(`(document.querySelector('#pg-form')?.dataset.tool || '').endsWith(%q)`, "_"+suffix))
	}
	callAndWait := func(what string) {
		t.Helper()
		k.do("call "+what, chromedp.Click(`#pg-form button[type="submit"]`, chromedp.ByQuery))
		k.waitJS("result of "+what, `!!document.querySelector('#pg-result') || !!document.querySelector('#pg-rpc-error')`)
	}
	// Text.
	pick("echo")
	k.checkLabels("playground form")
	k.setValue("#pg-message", "hello from the playground")
	callAndWait("echo")
	var text string
	k.eval("echo text", `document.querySelector('#pg-result pre[data-content="text"]').textContent`, &text)
	if text != "Echo: hello from the playground" {
		t.Fatalf("echo shows %q", text)
	}
	k.shot("playground-text")
	// Structured content.
	pick("add")
	k.setValue("#pg-a", "2")
	k.setValue("#pg-b", "3.5")
	callAndWait("add")
	var structured map[string]any
	k.eval("add structured", `JSON.parse(document.querySelector('#pg-result pre[data-content="structured"]').textContent)`, &structured)
	if structured["sum"] != 5.5 {
		t.Fatalf("add structured content %v", structured)
	}
	k.shot("playground-structured")
	// isError.
	pick("fail")
	callAndWait("fail")
	var flag struct {
		IsError, Text string
		Colour        string
	}
	k.eval("fail flag", `({IsError: document.querySelector('#pg-result').dataset.isError, Text: document.querySelector('#pg-result .result-flag').textContent,
		Colour: getComputedStyle(document.querySelector('#pg-result .result-flag')).color})`, &flag)
	if flag.IsError != "true" || !strings.Contains(flag.Text, "isError: true") || flag.Colour != "rgb(140, 29, 24)" {
		t.Fatalf("fail result %+v", flag)
	}
	k.shot("playground-iserror")
	// Image.
	pick("pixel")
	callAndWait("pixel")
	k.waitJS("image decoded", `(() => { const i = document.querySelector('#pg-result img[data-content="image"]'); return !!i && i.complete && i.naturalWidth === 2 })()`)
	k.shot("playground-image")
	// A generated form: defaults, enum, array, nested required member.
	pick("form")
	var defaults struct{ Title, Count, Mode string }
	k.eval("defaults", `({Title: document.querySelector('#pg-title').value, Count: document.querySelector('#pg-count').value, Mode: document.querySelector('#pg-mode').value})`, &defaults)
	if defaults.Title != "Report" || defaults.Count != "2" || defaults.Mode != `"safe"` {
		t.Fatalf("form defaults %+v", defaults)
	}
	k.do("submit without the required member", chromedp.Click(`#pg-form button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#pg-owner-name-error`, chromedp.ByQuery))
	k.shot("playground-form-required")
	k.do("add a tag", chromedp.Click(`fieldset[data-path=".tags"] > button`, chromedp.ByQuery), chromedp.WaitVisible(`#pg-tags-0`, chromedp.ByQuery))
	k.setValue("#pg-tags-0", "first")
	k.setValue("#pg-owner-name", "Ada")
	k.eval("mode fast", `(() => { const s = document.querySelector('#pg-mode'); s.value = '"fast"'; s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, nil)
	k.checkLabels("generated form")
	callAndWait("form")
	var got map[string]any
	k.eval("form structured", `JSON.parse(document.querySelector('#pg-result pre[data-content="structured"]').textContent)`, &got)
	want := `{"count":2,"mode":"fast","owner":{"name":"Ada"},"tags":["first"],"title":"Report"}`
	if j, _ := json.Marshal(got); string(j) != want {
		t.Fatalf("form arguments arrived as %s, want %s", j, want)
	}
	k.shot("playground-form")
	// Resources and prompts on the connection's own endpoint.
	k.eval("endpoint", `(() => { const s = document.querySelector('#pg-endpoint');
		s.value = [...s.options].find(o => o.textContent.startsWith('Browser Fixture')).value; s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, nil)
	k.do("resources tab", chromedp.Click(`.tabs button:nth-child(2)`, chromedp.ByQuery),
		chromedp.WaitVisible(`li[data-item="demo://readme"] button`, chromedp.ByQuery), chromedp.Click(`li[data-item="demo://readme"] button`, chromedp.ByQuery))
	k.waitJS("resource read", `(document.querySelector('#pg-read pre')?.textContent || '').length > 0`)
	k.shot("playground-resource")
	k.do("prompts tab", chromedp.Click(`.tabs button:nth-child(3)`, chromedp.ByQuery), chromedp.WaitVisible(`li[data-item="greet"] input`, chromedp.ByQuery))
	k.setValue(`li[data-item="greet"] input`, "Ada")
	k.do("get prompt", chromedp.Click(`li[data-item="greet"] button`, chromedp.ByQuery))
	k.waitJS("prompt", `(document.querySelector('#pg-read [data-role="user"] pre')?.textContent || '') === 'Say hello to Ada.'`)
	k.checkLabels("prompts")
	k.shot("playground-prompt")
}

// clientSetup checks the Client setup page on a stack without the gateway's own
// authorization server: the URL-only set-up first, each text equal to shared/clientsetup's
// (the make run banner's) for the workspace endpoint and for a connection's endpoint; the
// header set-up below it with a placeholder, never the console's own token; and a notice
// that MCP access tokens need the authorization server (no request that would fail).
// setup_browser_test.go has the page with the authorization server and a token.
func clientSetup(t *testing.T, k *pgKit) {
	t.Helper()
	k.open("#/setup", "setup")
	var token string
	k.eval("token", `sessionStorage.getItem('agentpack.console.token')`, &token)
	type snippet struct{ ID, Kind, Text string }
	read := func() []snippet {
		var s []snippet
		k.eval("configs", `[...document.querySelectorAll('pre[data-client]')].map(p => ({ID: p.dataset.client, Kind: p.dataset.kind, Text: p.textContent}))`, &s)
		return s
	}
	compare := func(url string) {
		t.Helper()
		got := read()
		urlOnly, header := clientsetup.URLOnly(url, ""), clientsetup.For(url, "YOUR_MCP_ACCESS_TOKEN", "")
		if len(got) != len(urlOnly)+len(header) {
			t.Fatalf("%d client configurations for %s", len(got), url)
		}
		for i, c := range append(urlOnly, header...) {
			kind := "url"
			if i >= len(urlOnly) {
				kind = "header"
			}
			if got[i].ID != c.ID || got[i].Kind != kind || got[i].Text != c.Text {
				t.Fatalf("%s (%s) for %s:\n console %q\n banner  %q", c.ID, kind, url, got[i].Text, c.Text)
			}
			if strings.Contains(got[i].Text, token) {
				t.Fatalf("%s shows the console's own token", c.ID)
			}
		}
	}
	compare(k.srvURL + "/mcp/" + k.ws)
	var notice string
	k.eval("no authorization server", `document.querySelector('.setup-header .notice')?.textContent || ''`, &notice)
	if !strings.Contains(notice, "authorization server") {
		t.Fatalf("the header section without an authorization server says %q", notice)
	}
	var handle string
	k.eval("a connection endpoint", `(() => { const s = document.querySelector('#setup-endpoint');
		const o = [...s.options].find(o => o.textContent.startsWith('Browser Fixture')); s.value = o.value;
		s.dispatchEvent(new Event('change', {bubbles: true})); return o.value })()`, &handle)
	k.waitJS("connection configs", fmt.Sprintf(`(document.querySelector('.client-configs')?.dataset.endpoint || '').endsWith('/servers/' + %q)`, handle))
	compare(k.srvURL + "/mcp/" + k.ws + "/servers/" + handle)
	k.shot("setup")
}
