package mcpclient

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/testpeer"
)

// TestFailureStages (issue 14 item 8): every way a connect can fail says where — stage,
// HTTP status when there was one, a hint — in words of ours: no "dial tcp", no Go error
// text, no query of the URL.
func TestFailureStages(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	status := func(code int) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }))
		t.Cleanup(s.Close)
		return s.URL
	}
	var followed atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed.Add(1) }))
	t.Cleanup(target.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/moved/mcp?token=redirect-secret-1", http.StatusMovedPermanently)
	}))
	t.Cleanup(redirect.Close)
	notMCP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"hello":"world"}`))
	}))
	t.Cleanup(notMCP.Close)
	selfSigned := httptest.NewUnstartedServer(http.NotFoundHandler())
	selfSigned.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	selfSigned.StartTLS()
	t.Cleanup(selfSigned.Close)
	plain := status(http.StatusOK)
	// Issue 22: an application whose MCP endpoint is elsewhere — 404 to the POST, and to the
	// SSE fallback's GET a 405 (a POST-only route) or its web page.
	postOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusMethodNotAllowed)
	}))
	t.Cleanup(postOnly.Close)
	webPage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<!doctype html><p>welcome</p>"))
	}))
	t.Cleanup(webPage.Close)

	tests := []struct {
		name       string
		url        string
		transport  string
		code       apperr.Code
		stage      string
		httpStatus int
		mention    string // in the message
		hint       string // in the hint ("" = any)
	}{
		{name: "connection refused", url: "http://" + closed + "/mcp?api_key=query-secret-1", code: apperr.UpstreamUnavailable,
			stage: StageConnect, mention: "refused", hint: "running"},
		{name: "404 without /mcp suggests /mcp", url: status(http.StatusNotFound) + "/v1?api_key=query-secret-1", code: apperr.UpstreamError,
			stage: StageHTTP, httpStatus: 404, mention: "404", hint: "/v1/mcp"},
		{name: "404, then 405 to the SSE GET, suggests /mcp", url: postOnly.URL + "/v1?api_key=query-secret-1", code: apperr.UpstreamError,
			stage: StageHTTP, httpStatus: 404, mention: "answered 404 to streamable-http and 405 to sse", hint: postOnly.URL + "/v1/mcp"},
		{name: "404, then a web page to the SSE GET, suggests /mcp", url: webPage.URL, code: apperr.UpstreamError,
			stage: StageHTTP, httpStatus: 404, mention: "answered 404 to streamable-http", hint: webPage.URL + "/mcp"},
		{name: "404 on /mcp has no /mcp hint", url: status(http.StatusNotFound) + "/mcp", transport: TransportStreamable, code: apperr.UpstreamError,
			stage: StageHTTP, httpStatus: 404, mention: "404", hint: "URL"},
		{name: "redirect reported, not followed", url: redirect.URL + "/mcp", code: apperr.UpstreamError,
			stage: StageHTTP, httpStatus: 301, mention: "not followed", hint: "final URL"},
		{name: "401", url: status(http.StatusUnauthorized) + "/mcp", code: apperr.UpstreamError,
			stage: StageHTTP, httpStatus: 401, mention: "headers", hint: "credentials"},
		{name: "503", url: status(http.StatusServiceUnavailable) + "/mcp", code: apperr.UpstreamUnavailable,
			stage: StageHTTP, httpStatus: 503, mention: "503"},
		{name: "not an MCP server", url: notMCP.URL + "/mcp", transport: TransportStreamable, code: apperr.UpstreamError,
			stage: StageProtocol, httpStatus: 200, mention: "protocol error", hint: "not as an MCP server"},
		{name: "https to a plain HTTP server", url: strings.Replace(plain, "http://", "https://", 1) + "/mcp", code: apperr.UpstreamUnavailable,
			stage: StageTLS, mention: "did not answer in TLS", hint: "http://"},
		{name: "untrusted certificate", url: selfSigned.URL + "/mcp", code: apperr.UpstreamUnavailable,
			stage: StageTLS, mention: "unknown authority"},
	}
	p := newPool(t, &Options{ConnectTimeout: 5 * time.Second})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := p.ListTools(t.Context(), Target{URL: tc.url, Transport: tc.transport})
			e := wantCode(t, err, tc.code, tc.mention)
			f := FailureOf(err)
			if f == nil {
				t.Fatalf("no Failure in %v", err)
			}
			if f.Stage != tc.stage || f.HTTPStatus != tc.httpStatus {
				t.Errorf("failure = %+v, want stage %s status %d (message %q)", f, tc.stage, tc.httpStatus, e.Message)
			}
			if !strings.Contains(f.Hint, tc.hint) {
				t.Errorf("hint %q does not mention %q", f.Hint, tc.hint)
			}
			for _, bad := range []string{"dial tcp", "query-secret-1", "redirect-secret-1", "tls:", "x509:", "goroutine", ".go:"} {
				if strings.Contains(e.Message+" "+f.Hint, bad) {
					t.Errorf("message or hint contains %q: %q / %q", bad, e.Message, f.Hint)
				}
			}
		})
	}
	t.Run("redirect target named without its query", func(t *testing.T) {
		t.Parallel()
		_, _, err := p.ListTools(t.Context(), Target{URL: redirect.URL + "/mcp"})
		if e := apperr.As(err); e == nil || !strings.Contains(e.Message, target.URL+"/moved/mcp") {
			t.Errorf("message does not name the redirect target: %v", err)
		}
		if n := followed.Load(); n != 0 {
			t.Errorf("the redirect was followed %d times", n)
		}
	})
}

// TestFailureDNS: a host name that does not resolve is stage dns.
func TestFailureDNS(t *testing.T) {
	t.Parallel()
	const host = "agentpack-no-such-host.invalid"
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	var dnsErr *net.DNSError
	if _, err := net.DefaultResolver.LookupHost(ctx, host); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Skipf("this machine's resolver does not answer NXDOMAIN quickly (%v)", err)
	}
	p := newPool(t, nil)
	_, _, err := p.ListTools(t.Context(), Target{URL: "http://" + host + "/mcp?k=dns-secret-1"})
	e := wantCode(t, err, apperr.UpstreamUnavailable, "does not exist (DNS)")
	if f := FailureOf(err); f == nil || f.Stage != StageDNS || f.Hint == "" {
		t.Errorf("failure = %+v", f)
	}
	if strings.Contains(e.Message, "dns-secret-1") || strings.Contains(e.Message, "lookup") {
		t.Errorf("message = %q", e.Message)
	}
}

// TestFailureOfSuccess: no failure without an error, and the fixture's success has none.
func TestFailureOfSuccess(t *testing.T) {
	t.Parallel()
	if FailureOf(nil) != nil || FailureOf(errors.New("x")) != nil {
		t.Error("FailureOf of a non-upstream error is not nil")
	}
	f := testpeer.NewFixture(t, nil)
	p := newPool(t, nil)
	if _, _, err := p.ListTools(t.Context(), Target{URL: f.URL}); err != nil {
		t.Fatal(err)
	}
}
