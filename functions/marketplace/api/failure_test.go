package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// TestTestStageProtocol (issue 44 item 3): an upstream that answers an MCP request with a
// well-formed JSON-RPC error — tools/list after a good initialize, or initialize itself —
// makes POST /api/mcp-connections/{id}/test answer stage "protocol" (not "connect"), with
// the error's code in the message and the answer's HTTP status (200); the connection's lastError
// and the answer never carry the X-Api-Key it was installed with (which the upstream
// echoes); a later success clears lastError.
func TestTestStageProtocol(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	const key = "key-stage-secret-7"
	var refuseList atomic.Bool
	refuseList.Store(true)
	srv := mcp.NewServer(&mcp.Implementation{Name: "keyed", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ping"}, func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	rpcError := func(rw http.ResponseWriter, id json.RawMessage, msg string) {
		rw.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(rw, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%q}}`, id, msg)
	}
	// keyed: initialize works; tools/list answers a JSON-RPC error (echoing the key) while
	// refuseList is set.
	keyed := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != key {
			http.Error(rw, "no key", http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		if m.Method == "tools/list" && refuseList.Load() {
			rpcError(rw, m.ID, "listing refused for key "+r.Header.Get("X-Api-Key"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sdk.ServeHTTP(rw, r)
	}))
	t.Cleanup(keyed.Close)
	// broken: initialize itself answers a JSON-RPC error; GET (the SSE fallback) 405.
	broken := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			rw.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		if m.ID == nil {
			rw.WriteHeader(http.StatusAccepted)
			return
		}
		rpcError(rw, m.ID, "server misconfigured")
	}))
	t.Cleanup(broken.Close)

	for _, tc := range []struct{ name, url, msg string }{
		{"tools/list refused", keyed.URL + "/mcp", "JSON-RPC error -32603"},
		{"initialize refused", broken.URL + "/mcp", "JSON-RPC error -32603: server misconfigured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{
				"name": tc.name, "url": tc.url, "workspaceId": w.wsA, "headers": map[string]string{"X-Api-Key": key}})
			want(t, "create", st, http.StatusCreated, b)
			id := b["id"].(string)
			st, tb := w.do(t, "POST", "/api/mcp-connections/"+id+"/test", w.adminA, nil)
			want(t, "test", st, http.StatusOK, tb)
			msg, _ := tb["error"].(string)
			if tb["success"] != false || tb["stage"] != "protocol" || !strings.Contains(msg, tc.msg) {
				t.Errorf("test = %v, want stage protocol and %q", tb, tc.msg)
			}
			if tb["httpStatus"] != float64(200) {
				t.Errorf("httpStatus: %v, want the 200 the error came with", tb)
			}
			st, c := w.do(t, "GET", "/api/mcp-connections/"+id, w.adminA, nil)
			want(t, "get", st, http.StatusOK, c)
			if c["lastError"] == nil {
				t.Errorf("lastError not recorded: %v", c)
			}
			for what, v := range map[string]any{"test answer": tb, "connection": c} {
				if strings.Contains(fmt.Sprint(v), key) {
					t.Errorf("%s carries the API key: %v", what, v)
				}
			}
		})
	}
	t.Run("success clears it", func(t *testing.T) {
		refuseList.Store(false)
		st, b := w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{
			"name": "keyed ok", "url": keyed.URL + "/mcp", "workspaceId": w.wsA, "headers": map[string]string{"X-Api-Key": key}})
		want(t, "create", st, http.StatusCreated, b)
		id := b["id"].(string)
		refuseList.Store(true)
		_, tb := w.do(t, "POST", "/api/mcp-connections/"+id+"/test", w.adminA, nil)
		if tb["stage"] != "protocol" {
			t.Fatalf("test = %v", tb)
		}
		refuseList.Store(false)
		_, tb = w.do(t, "POST", "/api/mcp-connections/"+id+"/test", w.adminA, nil)
		_, c := w.do(t, "GET", "/api/mcp-connections/"+id, w.adminA, nil)
		if tb["success"] != true || tb["stage"] != nil || c["lastError"] != nil {
			t.Errorf("after recovery: test %v, lastError %v", tb, c["lastError"])
		}
	})
}
