package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestOwnRESTURLRefused (issue 44): the gateway's own REST URL given as an MCP server's URL
// — at install of a template entry, on a new connection and on an edit, under the host the
// request used and under another loopback name for it — is refused with VALIDATION_ERROR on
// field url saying it is the gateway's own REST API, and nothing is written. A URL without a
// scheme says the scheme is wrong.
func TestOwnRESTURLRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	fx := fixture(t)
	st, b := w.do(t, "GET", "/api/mcp-marketplace?search=Custom%20MCP%20Server", w.adminA, nil)
	want(t, "find template", st, http.StatusOK, b)
	tpl := b["entries"].([]any)[0].(map[string]any)["id"].(string)
	base, _ := url.Parse(w.env.URL)
	other := "http://localhost:" + base.Port()
	st, b = w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{"workspaceId": w.wsA, "name": "Fine", "url": fx.URL})
	want(t, "create", st, http.StatusCreated, b)
	id := b["id"].(string)
	before := w.count(t, `SELECT count(*) FROM mcp_connections`)
	const msg = "this gateway's own REST API URL"
	for _, c := range []struct{ name, method, path, url string }{
		{"install", "POST", "/api/mcp-marketplace/" + tpl + "/install", w.env.URL + "/api/mcp-marketplace"},
		{"install, /api alone", "POST", "/api/mcp-marketplace/" + tpl + "/install", w.env.URL + "/api"},
		{"install, localhost", "POST", "/api/mcp-marketplace/" + tpl + "/install", other + "/api/mcp-connections"},
		{"create", "POST", "/api/mcp-connections", w.env.URL + "/api/mcp-connections"},
		{"update", "PUT", "/api/mcp-connections/" + id, w.env.URL + "/api/mcp-marketplace"},
	} {
		body := map[string]any{"workspaceId": w.wsA, "name": "Mine", "url": c.url}
		if c.method == "PUT" {
			delete(body, "workspaceId")
		}
		st, b := w.do(t, c.method, c.path, w.adminA, body)
		if st != http.StatusBadRequest || errCode(b) != "VALIDATION_ERROR" || !strings.Contains(errMessage(b), msg) || errDetailsField(b) != "url" {
			t.Errorf("%s %s: %d %v, want 400 on url saying %q", c.name, c.url, st, b, msg)
		}
	}
	if w.count(t, `SELECT count(*) FROM mcp_connections`) != before {
		t.Fatal("a refused URL wrote a connection")
	}
	st, b = w.do(t, "GET", "/api/mcp-connections/"+id, w.adminA, nil)
	if st != http.StatusOK || b["url"] != fx.URL {
		t.Fatalf("the refused edit changed the URL: %d %v", st, b)
	}
	st, b = w.do(t, "POST", "/api/mcp-marketplace/"+tpl+"/install", w.adminA, map[string]any{"workspaceId": w.wsA, "url": "mcp.example.com/mcp"})
	if st != http.StatusBadRequest || !strings.Contains(errMessage(b), "http or https") {
		t.Errorf("no scheme: %d %v, want the scheme named", st, b)
	}
}

func errDetailsField(b map[string]any) string {
	e, _ := b["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	f, _ := d["field"].(string)
	return f
}
