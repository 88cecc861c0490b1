package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/shared/identity"
)

// TestSmokeAgainstStack: every check passes against the real stack (cmd/local/stack, what
// `make run` serves and the functions serve in Lambda) with the gateway's own
// authorization server and the browser session, as `make run` mounts them.
func TestSmokeAgainstStack(t *testing.T) {
	t.Parallel()
	sessions, err := identity.NewSessions([]byte(strings.Repeat("k", 32)), nil)
	if err != nil {
		t.Fatal(err)
	}
	people := &identity.Service{} // its pool is set once the stack has one
	env := stacktest.New(t, &stacktest.Options{Stack: &stack.Options{
		Identity: &stack.Identity{Sessions: authserver.IdentitySessions{Sessions: sessions}, Members: people}}})
	people.Pool = env.Pool
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{env.URL}, &out, &errOut, http.DefaultClient); code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out.String(), errOut.String())
	}
	if strings.Count(out.String(), "ok ") != 5 {
		t.Errorf("want five ok lines:\n%s", out.String())
	}
}

// fakeGateway answers like a healthy stack; routes replace one path's answer.
func fakeGateway(t *testing.T, routes map[string]http.HandlerFunc) string {
	t.Helper()
	var base string
	mux := http.NewServeMux()
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	good := map[string]http.HandlerFunc{
		"GET /health": func(w http.ResponseWriter, r *http.Request) { js(w, map[string]string{"status": "ok"}) },
		"GET /.well-known/oauth-protected-resource/mcp": func(w http.ResponseWriter, r *http.Request) {
			js(w, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
		},
		"GET /.well-known/oauth-authorization-server": func(w http.ResponseWriter, r *http.Request) {
			js(w, map[string]any{"issuer": base, "authorization_endpoint": base + "/oauth/authorize",
				"token_endpoint": base + "/oauth/token", "code_challenge_methods_supported": []string{"S256"}})
		},
		"POST /mcp/{ws}": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
		},
		"GET /admin/": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!doctype html><html><body>console</body></html>"))
		},
	}
	for k, h := range routes {
		good[k] = h
	}
	for k, h := range good {
		if h != nil {
			mux.HandleFunc(k, h)
		}
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	base = srv.URL
	return base
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }
}

func body(ct, s string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write([]byte(s))
	}
}

// TestSmokeFailures: each failure the checks name, against a loopback server that answers
// that one thing wrongly: the failing check says what is wrong, the others pass, and the
// exit code is 1.
func TestSmokeFailures(t *testing.T) {
	t.Parallel()
	const prm, asm = "GET /.well-known/oauth-protected-resource/mcp", "GET /.well-known/oauth-authorization-server"
	for _, tc := range []struct {
		name, check, want string
		routes            map[string]http.HandlerFunc
	}{
		{"health 503", "health", "answered 503, not 200", map[string]http.HandlerFunc{"GET /health": status(503)}},
		{"no resource metadata", "protected resource metadata", "answered 404", map[string]http.HandlerFunc{prm: nil}},
		{"metadata not JSON", "protected resource metadata", "did not answer JSON", map[string]http.HandlerFunc{prm: body("text/html", "<html>")}},
		{"wrong resource", "protected resource metadata", "PUBLIC_BASE_URL", map[string]http.HandlerFunc{
			prm: body("application/json", `{"resource":"https://other.example/mcp","authorization_servers":["https://other.example"]}`)}},
		{"no authorization server", "protected resource metadata", "names no authorization server", map[string]http.HandlerFunc{
			prm: func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"resource":"http://` + r.Host + `/mcp","authorization_servers":[]}`))
			}}},
		{"no AS metadata", "authorization server metadata", "publishes no metadata", map[string]http.HandlerFunc{asm: nil}},
		{"AS issuer differs", "authorization server metadata", "names the issuer", map[string]http.HandlerFunc{
			asm: body("application/json", `{"issuer":"https://elsewhere","authorization_endpoint":"a","token_endpoint":"b","code_challenge_methods_supported":["S256"]}`)}},
		{"no S256", "authorization server metadata", "S256", map[string]http.HandlerFunc{
			asm: func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"issuer":"http://` + r.Host + `","authorization_endpoint":"a","token_endpoint":"b","code_challenge_methods_supported":["plain"]}`))
			}}},
		{"open MCP endpoint", "unauthenticated call", "open to anyone", map[string]http.HandlerFunc{"POST /mcp/{ws}": status(200)}},
		{"401 without challenge", "unauthenticated call", "no Bearer challenge", map[string]http.HandlerFunc{"POST /mcp/{ws}": status(401)}},
		{"MCP 500", "unauthenticated call", "answered 500, not 401", map[string]http.HandlerFunc{"POST /mcp/{ws}": status(500)}},
		{"no console", "console", "the console is not served", map[string]http.HandlerFunc{"GET /admin/": nil}},
		{"console not HTML", "console", "did not answer an HTML page", map[string]http.HandlerFunc{"GET /admin/": body("application/json", "{}")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := fakeGateway(t, tc.routes)
			var out, errOut bytes.Buffer
			code := run(t.Context(), []string{base}, &out, &errOut, http.DefaultClient)
			if code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, out.String())
			}
			var failLines []string
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(l, "FAIL") {
					failLines = append(failLines, l)
				}
			}
			if len(failLines) != 1 || !strings.HasPrefix(failLines[0], "FAIL  "+tc.check+": ") || !strings.Contains(failLines[0], tc.want) {
				t.Errorf("want one FAIL line for %s naming %q:\n%s", tc.check, tc.want, out.String())
			}
		})
	}
}

// TestSmokeUnreachableAndUsage: a URL nobody answers fails every check in words (the
// authorization server check is skipped), and a bad argument exits 2.
func TestSmokeUnreachableAndUsage(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{url}, &out, &errOut, http.DefaultClient); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), "did not answer") || !strings.Contains(out.String(), "skip  authorization server metadata") ||
		strings.Count(out.String(), "FAIL") != 4 {
		t.Errorf("unreachable:\n%s", out.String())
	}
	for _, args := range [][]string{nil, {"a", "b"}, {"not a url"}, {"ftp://x"}, {"https://x/?q=1"}} {
		errOut.Reset()
		if code := run(t.Context(), args, &out, &errOut, http.DefaultClient); code != 2 || errOut.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut.String())
		}
	}
}
