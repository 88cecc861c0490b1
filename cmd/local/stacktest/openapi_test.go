package stacktest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
)

// TestOpenAPICheckerCatchesViolations proves the checker rejects responses the document
// does not describe, so the check every stack test runs cannot silently pass everything.
func TestOpenAPICheckerCatchesViolations(t *testing.T) {
	t.Parallel()
	oas, err := stacktest.ProductOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	const cats = "/api/mcp-marketplace/categories"
	const entry = "/api/mcp-marketplace/6f1c2a9e-4b1d-4c55-9a43-0c1c8d1f2e3a"
	tests := []struct {
		name, method, path string
		status             int
		contentType, body  string
		allow              string
		wantErr            string // "" = valid
	}{
		{"valid 200", "GET", cats, 200, "application/json", `{"categories":[{"name":"dev","count":2}]}`, "", ""},
		{"valid error body", "GET", cats, 401, "application/json", `{"error":{"code":"UNAUTHENTICATED","message":"no token"}}`, "", ""},
		{"valid 204", "DELETE", entry, 204, "", ``, "", ""},
		{"body violates the schema", "GET", cats, 200, "application/json", `{"categories":[{"name":"dev","count":"two"}]}`, "", "doesn't match schema"},
		{"required member missing", "GET", cats, 200, "application/json", `{}`, "", "doesn't match schema"},
		{"error code outside the enum", "GET", cats, 401, "application/json", `{"error":{"code":"NOPE","message":"x"}}`, "", "doesn't match schema"},
		{"status not documented for the route", "GET", cats, 418, "application/json", `{}`, "", "status is not supported"},
		{"content type not documented", "GET", cats, 200, "text/plain", `hello`, "", "Content-Type"},
		{"body on a status documented without one", "DELETE", entry, 204, "application/json", `{"deleted":true}`, "", "without a body"},
		{"route not documented", "GET", "/api/nope", 404, "application/json", `{"error":{"code":"NOT_FOUND","message":"x"}}`, "", "route not in the OpenAPI document"},
		{"405 whose Allow matches the document", "PATCH", cats, 405, "text/plain", "Method Not Allowed\n", "GET, HEAD", ""},
		{"405 whose Allow differs from the document", "PATCH", cats, 405, "text/plain", "Method Not Allowed\n", "GET, HEAD, POST", "document lists"},
		{"method not documented, answered 200", "PATCH", cats, 200, "application/json", `{"categories":[]}`, "", "route not in the OpenAPI document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var reported []error
			h := oas.Middleware(func(err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() },
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if tt.contentType != "" {
						w.Header().Set("Content-Type", tt.contentType)
					}
					if tt.allow != "" {
						w.Header().Set("Allow", tt.allow)
					}
					w.WriteHeader(tt.status)
					fmt.Fprint(w, tt.body)
				}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			if rec.Code != tt.status || rec.Body.String() != tt.body {
				t.Fatalf("the middleware changed the response: %d %q", rec.Code, rec.Body.String())
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case tt.wantErr == "" && len(reported) > 0:
				t.Fatalf("valid response reported: %v", reported)
			case tt.wantErr != "" && len(reported) != 1:
				t.Fatalf("reported %d errors, want 1 containing %q: %v", len(reported), tt.wantErr, reported)
			case tt.wantErr != "" && !strings.Contains(reported[0].Error(), tt.wantErr):
				t.Fatalf("reported %q, want it to contain %q", reported[0], tt.wantErr)
			}
		})
	}
}

// TestOpenAPICheckerSkipsNonREST: paths outside /api/ (MCP endpoints, the console) pass
// through unchecked.
func TestOpenAPICheckerSkipsNonREST(t *testing.T) {
	t.Parallel()
	oas, err := stacktest.ProductOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	called := false
	h := oas.Middleware(func(err error) { t.Errorf("reported %v", err) }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called = true
		w.WriteHeader(http.StatusTeapot)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/mcp/ws", nil))
	if !called {
		t.Fatal("handler not called")
	}
}

// TestOpenAPICheckerSkipsAbandonedRequests: a handler that writes nothing because its
// client went away (httpapi.Error on a cancelled request) is not reported; the same empty
// answer to a live request is (a 200 without a body is not GET /api/chats's).
func TestOpenAPICheckerSkipsAbandonedRequests(t *testing.T) {
	t.Parallel()
	oas, err := stacktest.ProductOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var reports []error
	h := oas.Middleware(func(err error) { reports = append(reports, err) }, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, "GET", "/api/chats", nil))
	if len(reports) != 0 {
		t.Fatalf("an abandoned request was reported: %v", reports)
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/chats", nil))
	if len(reports) != 1 {
		t.Fatalf("an empty answer to a live request gave %d reports, want 1", len(reports))
	}
}

// reportingTB records Errorf instead of failing, to observe the stack's checker.
type reportingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *reportingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestStackChecksRESTResponses: the stack every end-to-end test runs accepts a documented
// REST response and reports one the document does not describe (GET /api/no-such-route,
// an undocumented route, answered 404).
func TestStackChecksRESTResponses(t *testing.T) {
	rt := &reportingTB{TB: t}
	env := stacktest.New(rt, nil)
	tok := stacktest.Token(t, "alice", "member")
	if st, _ := env.Do(t, "GET", "/api/mcp-marketplace/categories", tok, nil); st != http.StatusOK {
		t.Fatalf("categories: %d", st)
	}
	rt.mu.Lock()
	if len(rt.errors) != 0 {
		t.Errorf("documented response reported: %v", rt.errors)
	}
	rt.mu.Unlock()
	if st, _ := env.Do(t, "GET", "/api/no-such-route", tok, nil); st != http.StatusNotFound {
		t.Fatalf("undocumented route: %d", st)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.errors) != 1 || !strings.Contains(rt.errors[0], "route not in the OpenAPI document") {
		t.Fatalf("undocumented route: reported %v", rt.errors)
	}
}
