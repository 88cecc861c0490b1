package logx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentpack/gateway/shared/logx"
)

// lines decodes the JSON lines of buf.
func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		out = append(out, m)
	}
	return out
}

func accessLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range lines(t, buf) {
		if m["msg"] == logx.AccessMessage {
			out = append(out, m)
		}
	}
	return out
}

// TestAccessLogOneLineEveryField: one request → exactly one access line carrying the
// always-present keys, the request ids of the context, and every annotation; the other
// lines of the request carry the same ids; nothing of the query or the headers appears.
func TestAccessLogOneLineEveryField(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := logx.New(&buf, "debug")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp/{workspaceId}", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		for f, v := range map[logx.Field]string{
			logx.FieldWorkspace: "ws-1", logx.FieldPrincipal: "user-1", logx.FieldErrorID: "err-1",
			logx.FieldMCPMethod: "tools/call", logx.FieldTool: "mcp_demo_echo", logx.FieldConnectionID: "conn-1",
			logx.FieldOutcome: "tool_error", logx.FieldRPCCode: "UPSTREAM_ERROR",
		} {
			logx.Annotate(ctx, f, v)
		}
		logger.InfoContext(ctx, "inside")
		logger.Info("server session connected", "session_id", "") // go-sdk's noise: dropped
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("hello"))
	})
	h := logx.AccessLog(logger, mux)
	req := httptest.NewRequest("POST", "/mcp/ws-1?token=query-secret", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer header-secret")
	ctx := logx.WithRequestIDs(req.Context(), "lambda-id-1", "apigw-id-1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req.WithContext(logx.WithRequestID(ctx, "lambda-id-1")))

	all := lines(t, &buf)
	acc := accessLines(t, &buf)
	if len(acc) != 1 || len(all) != 2 {
		t.Fatalf("want 1 access line and 1 handler line, got %d lines:\n%s", len(all), buf.String())
	}
	a := acc[0]
	want := map[string]any{
		"route": "POST /mcp/{workspaceId}", "method": "POST", "status": 201.0, "bytes": 5.0,
		"request_id": "lambda-id-1", "lambda_request_id": "lambda-id-1", "apigw_request_id": "apigw-id-1",
		"workspace": "ws-1", "principal": "user-1", "error_id": "err-1", "mcp_method": "tools/call",
		"tool": "mcp_demo_echo", "connection_id": "conn-1", "outcome": "tool_error", "rpc_code": "UPSTREAM_ERROR",
	}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("access %s = %v, want %v", k, a[k], v)
		}
	}
	if d, ok := a["duration_ms"].(float64); !ok || d < 0 {
		t.Errorf("duration_ms = %v", a["duration_ms"])
	}
	if all[0]["lambda_request_id"] != "lambda-id-1" || all[0]["apigw_request_id"] != "apigw-id-1" {
		t.Errorf("handler line without the ids: %v", all[0])
	}
	if got := rec.Header().Get("X-Request-Id"); got != "lambda-id-1" {
		t.Errorf("X-Request-Id = %q", got)
	}
	for _, s := range []string{"query-secret", "header-secret", "session connected"} {
		if strings.Contains(buf.String(), s) {
			t.Errorf("the log contains %q", s)
		}
	}
}

// TestAccessLogDefaults: without ids in the context a request id is made (and echoed);
// a handler that writes nothing is a 200 with 0 bytes; an unmatched route is ""; a
// handler replacing the request id (WithRequestID) is followed by the access line; a
// panic still logs one line.
func TestAccessLogDefaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		h       http.HandlerFunc
		status  float64
		panics  bool
		checkID func(t *testing.T, id string, hdr string)
	}{
		{name: "empty", h: func(w http.ResponseWriter, r *http.Request) {}, status: 200,
			checkID: func(t *testing.T, id, hdr string) {
				if len(id) != 16 || id != hdr {
					t.Errorf("request_id %q, header %q", id, hdr)
				}
			}},
		{name: "handler id", h: func(w http.ResponseWriter, r *http.Request) {
			_ = logx.WithRequestID(r.Context(), "own-id")
			w.WriteHeader(http.StatusNotFound)
		}, status: 404, checkID: func(t *testing.T, id, _ string) {
			if id != "own-id" {
				t.Errorf("request_id %q, want own-id", id)
			}
		}},
		{name: "panic", h: func(w http.ResponseWriter, r *http.Request) { panic("boom") }, status: 500, panics: true,
			checkID: func(*testing.T, string, string) {}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			h := logx.AccessLog(logx.New(&buf, "info"), c.h)
			rec := httptest.NewRecorder()
			func() {
				defer func() {
					if p := recover(); (p != nil) != c.panics {
						t.Errorf("panic = %v", p)
					}
				}()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/nowhere", nil))
			}()
			acc := accessLines(t, &buf)
			if len(acc) != 1 {
				t.Fatalf("%d access lines: %s", len(acc), buf.String())
			}
			if acc[0]["status"] != c.status || acc[0]["route"] != "" || acc[0]["bytes"] != 0.0 {
				t.Errorf("access line %v", acc[0])
			}
			id, _ := acc[0]["request_id"].(string)
			c.checkID(t, id, rec.Header().Get("X-Request-Id"))
		})
	}
}

// TestAnnotateConcurrent: annotations from several goroutines are safe (go test -race) and
// the route key of API Gateway is the fallback route.
func TestAnnotateConcurrent(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h := logx.AccessLog(logx.New(&buf, "info"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() { logx.Annotate(r.Context(), logx.FieldTool, "t") })
		}
		wg.Wait()
	}))
	req := httptest.NewRequest("POST", "/x", nil)
	req = req.WithContext(logx.WithRouteKey(req.Context(), "ANY /mcp"))
	h.ServeHTTP(httptest.NewRecorder(), req)
	acc := accessLines(t, &buf)
	if len(acc) != 1 || acc[0]["tool"] != "t" || acc[0]["route"] != "ANY /mcp" {
		t.Fatalf("access lines: %s", buf.String())
	}
	// Without a record, Annotate is a no-op.
	logx.Annotate(context.Background(), logx.FieldTool, "x")
	if logx.Annotated(context.Background(), logx.FieldTool) != "" {
		t.Error("annotation without a record")
	}
}
