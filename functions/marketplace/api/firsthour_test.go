package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
)

// TestInstallDefaultsWorkspace: a token that names exactly one workspace may leave
// workspaceId out of install and uninstall.
func TestInstallDefaultsWorkspace(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	entry := w.entry(t, "Defaulted", fixture(t).URL, "streamable-http")
	st, b := w.do(t, "POST", "/api/mcp-marketplace/"+entry+"/install", w.adminA,
		map[string]any{"headers": map[string]string{"Authorization": "Bearer x"}})
	want(t, "install without workspaceId", st, http.StatusCreated, b)
	if b["workspaceId"] != w.wsA {
		t.Fatalf("installed into %v, want %s", b["workspaceId"], w.wsA)
	}
	st, b = w.do(t, "DELETE", "/api/mcp-marketplace/"+entry+"/install", w.adminA, nil)
	want(t, "uninstall without workspaceId", st, http.StatusNoContent, b)
	// A superuser names no workspace: it must say which.
	st, b = w.do(t, "POST", "/api/mcp-marketplace/"+entry+"/install", w.su, map[string]any{})
	if st != http.StatusBadRequest || !strings.Contains(errMessage(b), "workspaceId") {
		t.Fatalf("superuser without workspaceId: %d %v", st, b)
	}
}

// TestInstallTemplateEntry: a template entry (placeholder URL) is refused without a URL
// override, installs with one (which passes the URL guard), and other entries refuse an
// override. Nothing is written by a refusal.
func TestInstallTemplateEntry(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	fx := fixture(t)
	st, b := w.do(t, "GET", "/api/mcp-marketplace?search=Custom%20MCP%20Server", w.adminA, nil)
	want(t, "find template", st, http.StatusOK, b)
	tpl := b["entries"].([]any)[0].(map[string]any)
	if tpl["isPlaceholder"] != true || !strings.Contains(tpl["url"].(string), "YOUR-HOST") {
		t.Fatalf("seed template entry: %v", tpl)
	}
	path := "/api/mcp-marketplace/" + tpl["id"].(string) + "/install"
	before := w.count(t, `SELECT count(*) FROM mcp_connections`)
	for _, c := range []struct {
		name string
		body map[string]any
	}{
		{"no url", map[string]any{"workspaceId": w.wsA}},
		{"url still a placeholder", map[string]any{"workspaceId": w.wsA, "url": "https://YOUR-HOST/mcp"}},
		{"url refused by the guard", map[string]any{"workspaceId": w.wsA, "url": "ftp://example.com/mcp"}},
	} {
		st, b := w.do(t, "POST", path, w.adminA, c.body)
		if st != http.StatusBadRequest || errCode(b) != "VALIDATION_ERROR" {
			t.Errorf("%s: %d %v", c.name, st, b)
		}
	}
	if w.count(t, `SELECT count(*) FROM mcp_connections`) != before {
		t.Fatal("a refused template install wrote a connection")
	}
	st, b = w.do(t, "POST", path, w.adminA, map[string]any{"workspaceId": w.wsA, "url": fx.URL})
	want(t, "template with url", st, http.StatusCreated, b)
	if b["url"] != fx.URL || b["source"] != "marketplace" || b["connect"].(map[string]any)["success"] != true {
		t.Fatalf("template install: %v", b)
	}
	// Another entry refuses an override (a marketplace install must use the entry's URL).
	plain := w.entry(t, "Plain", fx.URL, "streamable-http")
	st, b = w.install(t, plain, w.wsA, w.adminA, map[string]any{"url": fx.URL})
	if st != http.StatusBadRequest || !strings.Contains(errMessage(b), "template") {
		t.Fatalf("override of a plain entry: %d %v", st, b)
	}
}

// TestInstallWarnsMissingHeaders: an install without a header the entry declares still
// succeeds, with a warning that names the header (never a value); given, no warning.
func TestInstallWarnsMissingHeaders(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	entry := w.entry(t, "Needs auth", fixture(t).URL, "streamable-http") // declares Authorization
	st, b := w.install(t, entry, w.wsA, w.adminA, nil)
	want(t, "install without header", st, http.StatusCreated, b)
	ws, _ := b["warnings"].([]any)
	if len(ws) != 1 || !strings.Contains(ws[0].(string), "Authorization") {
		t.Fatalf("warnings: %v", b["warnings"])
	}
	st, b = w.install(t, entry, w.wsB, w.adminB, map[string]any{"headers": map[string]string{"authorization": "Bearer s3cret-value"}})
	want(t, "install with header", st, http.StatusCreated, b)
	if b["warnings"] != nil || strings.Contains(fmt.Sprint(b), "s3cret-value") {
		t.Fatalf("with the header: %v", b)
	}
}

// TestCatalogCategoriesAndPages: category filtering ignores case, the categories list
// counts entries, and limit/offset page the catalog with total and nextOffset.
func TestCatalogCategoriesAndPages(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	member := stacktest.Token(t, "m", auth.RoleMember, w.wsA)
	st, b := w.do(t, "GET", "/api/mcp-marketplace?category=databases", member, nil)
	want(t, "lower", st, http.StatusOK, b)
	lower := len(b["entries"].([]any))
	st, b = w.do(t, "GET", "/api/mcp-marketplace?category=DataBases", member, nil)
	want(t, "mixed", st, http.StatusOK, b)
	if lower == 0 || len(b["entries"].([]any)) != lower || int(b["total"].(float64)) != lower {
		t.Fatalf("category filter: %d lower-case, %v mixed-case", lower, b)
	}

	st, b = w.do(t, "GET", "/api/mcp-marketplace/categories", member, nil)
	want(t, "categories", st, http.StatusOK, b)
	sum := 0
	seen := map[string]bool{}
	for _, c := range b["categories"].([]any) {
		m := c.(map[string]any)
		name := strings.ToLower(m["name"].(string))
		if seen[name] {
			t.Errorf("category %q listed twice", name)
		}
		seen[name] = true
		sum += int(m["count"].(float64))
	}
	st, all := w.do(t, "GET", "/api/mcp-marketplace", member, nil)
	want(t, "all", st, http.StatusOK, all)
	total := int(all["total"].(float64))
	if !seen["databases"] || sum > total || total != len(all["entries"].([]any)) || all["nextOffset"] != nil {
		t.Fatalf("categories %v (sum %d) vs %d entries", b, sum, total)
	}

	var names []string
	offset := 0
	for pages := 0; ; pages++ {
		if pages > total {
			t.Fatal("pagination does not end")
		}
		st, b := w.do(t, "GET", fmt.Sprintf("/api/mcp-marketplace?limit=7&offset=%d", offset), member, nil)
		want(t, "page", st, http.StatusOK, b)
		for _, e := range b["entries"].([]any) {
			names = append(names, e.(map[string]any)["name"].(string))
		}
		next, ok := b["nextOffset"].(float64)
		if !ok {
			break
		}
		offset = int(next)
	}
	if len(names) != total {
		t.Fatalf("pages gave %d entries, want %d", len(names), total)
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("pages out of order or repeated at %d: %q, %q", i, names[i-1], names[i])
		}
	}
	st, b = w.do(t, "GET", "/api/mcp-marketplace?limit=5&offset=1000", member, nil)
	want(t, "past the end", st, http.StatusOK, b)
	if len(b["entries"].([]any)) != 0 || int(b["total"].(float64)) != total {
		t.Fatalf("past the end: %v", b)
	}
	for _, q := range []string{"limit=0", "limit=201", "limit=x", "offset=-1", "offset=x"} {
		if st, b := w.do(t, "GET", "/api/mcp-marketplace?"+q, member, nil); st != http.StatusBadRequest || errCode(b) != "VALIDATION_ERROR" {
			t.Errorf("%s: %d %v", q, st, b)
		}
	}
	if st, _ := w.do(t, "GET", "/api/mcp-marketplace/categories", "", nil); st != http.StatusUnauthorized {
		t.Errorf("categories without a token: %d", st)
	}
}

// TestCreateDefaultsWorkspace (issue 25): an admin whose token names one workspace may
// leave workspaceId out of POST /api/mcp-connections (as of install); the connection is
// created in that workspace, not refused as a global one. A superuser's request without
// one still means global; an admin of two workspaces without one is still refused.
func TestCreateDefaultsWorkspace(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	fx := fixture(t)
	st, b := w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{"name": "Defaulted", "url": fx.URL})
	want(t, "create without workspaceId", st, http.StatusCreated, b)
	if b["workspaceId"] != w.wsA {
		t.Fatalf("created %v, want workspace %s", b, w.wsA)
	}
	st, b = w.do(t, "POST", "/api/mcp-connections", w.su, map[string]any{"name": "Global one", "url": fx.URL})
	want(t, "superuser global", st, http.StatusCreated, b)
	if b["id"] == nil || b["workspaceId"] != nil {
		t.Fatalf("superuser without workspaceId: %v, want a global connection", b)
	}
	two := stacktest.Token(t, "carol", auth.RoleAdmin, w.wsA, w.wsB)
	st, b = w.do(t, "POST", "/api/mcp-connections", two, map[string]any{"name": "Ambiguous", "url": fx.URL})
	if st != http.StatusForbidden {
		t.Fatalf("admin of two workspaces without workspaceId: %d %v", st, b)
	}
	if n := w.count(t, `SELECT count(*) FROM mcp_connections WHERE name = 'Ambiguous'`); n != 0 {
		t.Fatalf("a refused create wrote %d rows", n)
	}
}

// TestErrorsSpeakJSON (issue 25): unknown /api routes and wrong methods answer the REST
// error body (404 NOT_FOUND, 405 METHOD_NOT_ALLOWED with Allow), and a body of the wrong
// JSON type is described in JSON terms, never by a Go type name.
func TestErrorsSpeakJSON(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	cases := []struct {
		method, path string
		body         any
		status       int
		code         string
		msgHas       string
	}{
		{"GET", "/api/nothing-here", nil, 404, "NOT_FOUND", "no route for GET /api/nothing-here"},
		{"GET", "/api/mcp-marketplace/x/y/z", nil, 404, "NOT_FOUND", "no route"},
		{"PATCH", "/api/mcp-connections", nil, 405, "METHOD_NOT_ALLOWED", "PATCH is not allowed on /api/mcp-connections"},
		{"PUT", "/api/chats", nil, 405, "METHOD_NOT_ALLOWED", "PUT is not allowed on /api/chats"},
		{"POST", "/api/mcp-connections", `[]`, 400, "VALIDATION_ERROR", "the body must be an object"},
		{"POST", "/api/mcp-connections", `{"name":"x","url":"http://a","headers":[1]}`, 400, "VALIDATION_ERROR", `field "headers" must be an object of strings`},
		{"POST", "/api/mcp-connections", `{"name":"x","url":"http://a","headers":{"a":1}}`, 400, "VALIDATION_ERROR", `must be a string`},
		{"POST", "/api/mcp-connections", `{"name":"x","enabled":"yes"}`, 400, "VALIDATION_ERROR", `field "enabled" must be a boolean`},
		{"POST", "/api/chats", `"title"`, 400, "VALIDATION_ERROR", "the body must be an object"},
	}
	for _, c := range cases {
		var st int
		var raw []byte
		if c.status == http.StatusNotFound {
			// Served by the stack's handler directly: the test server's OpenAPI check reports
			// every undocumented route on purpose (a tripwire for tests that mistype one).
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(c.method, c.path, nil)
			req.Header.Set("Authorization", "Bearer "+w.adminA)
			w.env.Stack.Handler.ServeHTTP(rec, req)
			st, raw = rec.Code, rec.Body.Bytes()
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s %s: Content-Type %q", c.method, c.path, ct)
			}
		} else {
			st, raw = w.env.Do(t, c.method, c.path, w.adminA, c.body)
		}
		b := decode(t, raw)
		if st != c.status || errCode(b) != c.code || !strings.Contains(errMessage(b), c.msgHas) {
			t.Errorf("%s %s %v: %d %s, want %d %s %q", c.method, c.path, c.body, st, raw, c.status, c.code, c.msgHas)
		}
		for _, goish := range []string{"connections.", "map[", "[]", "api.", "*", "struct"} {
			if strings.Contains(errMessage(b), goish) {
				t.Errorf("%s %s: message %q names a Go type (%q)", c.method, c.path, errMessage(b), goish)
			}
		}
	}
	// The 405 names the methods the path takes.
	req, _ := http.NewRequest("PATCH", w.env.URL+"/api/mcp-connections", nil)
	req.Header.Set("Authorization", "Bearer "+w.adminA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a := resp.Header.Get("Allow"); !strings.Contains(a, "GET") || !strings.Contains(a, "POST") {
		t.Errorf("405 Allow header %q", a)
	}
}
