package api_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestConnectFailureSaysWhy (issue 14 item 8): create, test and install answers say where a
// connect failed — stage, HTTP status when there was one, a hint — and never the raw network
// error or the URL's query.
func TestConnectFailureSaysWhy(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/mcp?api_key=fail-secret-1"
	l.Close()

	check := func(t *testing.T, what string, c map[string]any, stage string, status float64, hint string) {
		t.Helper()
		if c["success"] != false || c["stage"] != stage || (status != 0 && c["httpStatus"] != status) ||
			!strings.Contains(c["hint"].(string), hint) {
			t.Errorf("%s: connect = %v, want stage %s, httpStatus %v, hint with %q", what, c, stage, status, hint)
		}
		msg, _ := c["error"].(string)
		for _, bad := range []string{"dial tcp", "fail-secret-1", "connect: connection refused"} {
			if strings.Contains(msg, bad) {
				t.Errorf("%s: error %q contains %q", what, msg, bad)
			}
		}
	}

	// A URL without /mcp that answers 404: the hint names the /mcp URL.
	st, b := w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{
		"name": "No path", "url": notFound.URL + "/api", "workspaceId": w.wsA})
	want(t, "create", st, http.StatusCreated, b)
	check(t, "create (404)", b["connect"].(map[string]any), "http", 404, notFound.URL+"/api/mcp")
	st, tb := w.do(t, "POST", "/api/mcp-connections/"+b["id"].(string)+"/test", w.adminA, nil)
	want(t, "test", st, http.StatusOK, tb)
	check(t, "test (404)", tb, "http", 404, "/api/mcp")

	// Issue 22: 404 to the POST and 405 to the SSE fallback's GET (an application whose
	// MCP endpoint is at /mcp): test-connection still names the /mcp URL.
	postOnly := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.NotFound(rw, r)
			return
		}
		rw.WriteHeader(http.StatusMethodNotAllowed)
	}))
	t.Cleanup(postOnly.Close)
	st, b = w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{
		"name": "Post only", "url": postOnly.URL + "/api", "workspaceId": w.wsA})
	want(t, "create post-only", st, http.StatusCreated, b)
	st, tb = w.do(t, "POST", "/api/mcp-connections/"+b["id"].(string)+"/test", w.adminA, nil)
	want(t, "test post-only", st, http.StatusOK, tb)
	check(t, "test (404 then 405)", tb, "http", 404, postOnly.URL+"/api/mcp")

	// A closed port: stage connect, no status.
	st, b = w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{
		"name": "Closed", "url": closed, "workspaceId": w.wsA})
	want(t, "create closed", st, http.StatusCreated, b)
	check(t, "create (closed)", b["connect"].(map[string]any), "connect", 0, "running")
	if _, has := b["connect"].(map[string]any)["httpStatus"]; has {
		t.Errorf("httpStatus without an HTTP answer: %v", b["connect"])
	}

	// Install from the catalog answers the same way.
	entry := w.entry(t, "Closed Entry", closed, "streamable-http")
	st, b = w.install(t, entry, w.wsA, w.adminA, map[string]any{"headers": map[string]string{"Authorization": "Bearer x"}})
	want(t, "install", st, http.StatusCreated, b)
	check(t, "install (closed)", b["connect"].(map[string]any), "connect", 0, "running")
}
