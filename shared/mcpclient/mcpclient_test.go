package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newPool returns a Pool allowed to reach loopback, closed in t.Cleanup.
func newPool(t *testing.T, opts *Options) *Pool {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if opts.Guard == nil {
		opts.Guard = urlguard.New(&urlguard.Options{AllowPrivate: true})
	}
	p := New(opts)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func wantCode(t *testing.T, err error, code apperr.Code, mention string) *apperr.Error {
	t.Helper()
	e := apperr.As(err)
	if e == nil {
		t.Fatalf("err = %v, want *apperr.Error %s", err, code)
	}
	if e.Code != code {
		t.Fatalf("code = %s (%s), want %s", e.Code, e.Message, code)
	}
	if !strings.Contains(e.Message, mention) {
		t.Fatalf("message %q does not mention %q", e.Message, mention)
	}
	return e
}

func echo(t *testing.T, p *Pool, tg Target, msg string) error {
	t.Helper()
	res, err := p.CallTool(t.Context(), tg, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
	if err != nil {
		return err
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "Echo: "+msg {
		t.Fatalf("echo = %q", got)
	}
	return nil
}

func names(tools []Tool) []string {
	var out []string
	for _, tool := range tools {
		out = append(out, tool.Name)
	}
	return out
}

func TestEverythingStreamable(t *testing.T) {
	t.Parallel()
	url := testpeer.Everything(t, "streamable")
	p := newPool(t, nil)
	tg := Target{ConnectionID: "c1", URL: url, Transport: TransportStreamable}
	tools, info, err := p.ListTools(t.Context(), tg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names(tools), "echo") {
		t.Errorf("tools %v lack echo", names(tools))
	}
	if len(info.Dropped) != 0 {
		t.Errorf("dropped %v", info.Dropped)
	}
	if info.Transport != TransportStreamable || info.ProtocolVersion == "" || info.ServerName == "" {
		t.Errorf("info = %+v", info)
	}
	if err := echo(t, p, tg, "hello"); err != nil {
		t.Fatal(err)
	}
	if pi, err := p.Ping(t.Context(), tg); err != nil || pi.Transport != TransportStreamable {
		t.Fatalf("Ping = %+v, %v", pi, err)
	}
	if st := p.Status(); len(st) != 1 || st[0].ConnectionID != "c1" {
		t.Errorf("status = %+v", st)
	}
	// The remembered protocol version skips the discover probe and still works.
	tg2 := Target{ConnectionID: "c2", URL: url, Remembered: info.Transport, ProtocolVersion: info.ProtocolVersion}
	if err := echo(t, p, tg2, "again"); err != nil {
		t.Fatal(err)
	}
}

func TestEverythingSSE(t *testing.T) {
	t.Parallel()
	url := testpeer.Everything(t, "sse")
	p := newPool(t, nil)
	for _, declared := range []string{TransportStreamable, TransportSSE} {
		tg := Target{ConnectionID: "sse-" + declared, URL: url, Transport: declared}
		tools, info, err := p.ListTools(t.Context(), tg)
		if err != nil {
			t.Fatalf("declared %s: %v", declared, err)
		}
		if info.Transport != TransportSSE {
			t.Errorf("declared %s: Info.Transport = %q, want sse", declared, info.Transport)
		}
		if !slices.Contains(names(tools), "echo") {
			t.Errorf("tools %v lack echo", names(tools))
		}
		if err := echo(t, p, tg, "over sse"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFixtureTransports(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, declared, remembered, want string
		wantPosts                        bool // a streamable POST to the SSE URL is expected
	}{
		{testpeer.ModeStreamable, "", "", TransportStreamable, true},
		{testpeer.ModeStateful, TransportStreamable, "", TransportStreamable, true},
		{testpeer.ModeSSE, TransportStreamable, "", TransportSSE, true},
		{testpeer.ModeSSE, TransportStreamable, TransportSSE, TransportSSE, false},
		{testpeer.ModeSSE, TransportSSE, "", TransportSSE, false},
	} {
		t.Run(tc.mode+"/"+tc.declared+"/"+tc.remembered, func(t *testing.T) {
			t.Parallel()
			f := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: tc.mode})
			p := newPool(t, nil)
			_, info, err := p.ListTools(t.Context(), Target{ConnectionID: "x", URL: f.URL, Transport: tc.declared, Remembered: tc.remembered})
			if err != nil {
				t.Fatal(err)
			}
			if info.Transport != tc.want {
				t.Errorf("transport = %s, want %s", info.Transport, tc.want)
			}
			if tc.mode == testpeer.ModeSSE {
				postsToSSE := 0
				for _, r := range f.Requests() {
					if r.Method == http.MethodPost && strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
						postsToSSE++
					}
				}
				if (postsToSSE > 0) != tc.wantPosts {
					t.Errorf("streamable POSTs to the SSE endpoint = %d, want any: %v", postsToSSE, tc.wantPosts)
				}
			}
		})
	}
}

func TestConnectStatuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method   string
		status   int
		code     apperr.Code
		mention  string
		fallback bool
	}{
		{"*", 401, apperr.UpstreamError, "answered 401: check the connection's headers", false},
		{"*", 403, apperr.UpstreamError, "answered 403: check the connection's headers", false},
		{"POST", 429, apperr.UpstreamUnavailable, "429", false},
		{"POST", 500, apperr.UpstreamUnavailable, "answered 500", false},
		{"POST", 503, apperr.UpstreamUnavailable, "answered 503", false},
		{"POST", 302, apperr.UpstreamError, "redirect", false},
		{"POST", 400, apperr.UpstreamError, "answered 400 to streamable-http and 405 to sse", true},
		{"POST", 404, apperr.UpstreamError, "answered 404 to streamable-http and 405 to sse", true},
		{"POST", 405, apperr.UpstreamError, "answered 405 to streamable-http and 405 to sse", true},
		{"POST", 406, apperr.UpstreamError, "answered 406 to streamable-http and 405 to sse", true},
		{"POST", 415, apperr.UpstreamError, "answered 415", false},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			t.Parallel()
			f := testpeer.NewFixture(t, nil)
			f.SetStatus(tc.method, tc.status)
			p := newPool(t, nil)
			_, _, err := p.ListTools(t.Context(), Target{ConnectionID: "s", URL: f.URL, Headers: map[string]string{"Authorization": "Bearer SECRET-TOKEN"}})
			e := wantCode(t, err, tc.code, tc.mention)
			if strings.Contains(e.Error(), "SECRET-TOKEN") {
				t.Errorf("error leaks a header value: %v", e)
			}
			gets := 0
			for _, r := range f.Requests() {
				if r.Method == http.MethodGet {
					gets++
				}
			}
			if (gets > 0) != tc.fallback {
				t.Errorf("SSE GETs = %d, want fallback %v", gets, tc.fallback)
			}
		})
	}
}

func TestClosedPort(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := newPool(t, nil)
	_, _, err = p.ListTools(t.Context(), Target{ConnectionID: "closed", URL: "http://" + addr + "/mcp"})
	wantCode(t, err, apperr.UpstreamUnavailable, "unreachable")
	_, err = p.Ping(t.Context(), Target{URL: "http://" + addr + "/mcp", Transport: TransportSSE})
	wantCode(t, err, apperr.UpstreamUnavailable, "unreachable")
}

func TestBlockedURL(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, nil)
	p := New(&Options{Guard: urlguard.New(nil)}) // strict
	t.Cleanup(func() { _ = p.Close() })
	_, _, err := p.ListTools(t.Context(), Target{ConnectionID: "b", URL: f.URL})
	wantCode(t, err, apperr.UpstreamError, "URL is not allowed")
	if n := len(f.Requests()); n != 0 {
		t.Errorf("%d requests reached the blocked upstream", n)
	}
}

func TestTimeouts(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{testpeer.ModeStreamable, testpeer.ModeSSE} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			f := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: mode})
			p := newPool(t, &Options{CallTimeout: 300 * time.Millisecond})
			tg := Target{ConnectionID: "slow", URL: f.URL}
			start := time.Now()
			_, err := p.CallTool(t.Context(), tg, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60000}})
			wantCode(t, err, apperr.UpstreamTimeout, "did not answer")
			// The upstream would answer after 60 s: the bound catches a missing timeout
			// and leaves a loaded machine room (scaled by TEST_TIMEOUT_SCALE).
			if d, max := time.Since(start), testpeer.Scaled(15*time.Second); d > max {
				t.Errorf("timeout took %s, want at most %s", d, max)
			}
			// The session survives a timed-out call.
			if err := echo(t, p, tg, "after timeout"); err != nil {
				t.Fatal(err)
			}
			// The caller's own deadline wins too.
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			_, err = p.CallTool(ctx, tg, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 10000}})
			wantCode(t, err, apperr.UpstreamTimeout, "")
		})
	}
	t.Run("connect", func(t *testing.T) {
		t.Parallel()
		// A listener that accepts and never answers: the handshake times out.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var conns []net.Conn
		var mu sync.Mutex
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
		t.Cleanup(func() {
			l.Close()
			<-done
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
		})
		p := newPool(t, &Options{ConnectTimeout: 300 * time.Millisecond})
		for _, tr := range []string{TransportStreamable, TransportSSE} {
			_, _, err = p.ListTools(t.Context(), Target{ConnectionID: "hang", URL: "http://" + l.Addr().String() + "/mcp", Transport: tr})
			wantCode(t, err, apperr.UpstreamTimeout, "handshake")
		}
	})
}

func TestReconnectOnce(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{testpeer.ModeStateful, testpeer.ModeSSE} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			f := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: mode})
			p := newPool(t, nil)
			tg := Target{ConnectionID: "r", URL: f.URL}
			if err := echo(t, p, tg, "one"); err != nil {
				t.Fatal(err)
			}
			f.DropSessions()
			if err := echo(t, p, tg, "two"); err != nil {
				t.Fatalf("after the upstream dropped its sessions: %v", err)
			}
			// Two sessions; the reconnect goes straight to the transport that worked.
			n := 0
			for _, r := range f.Requests() {
				if r.Method == http.MethodPost && strings.Contains(r.Body, `"method":"initialize"`) {
					n++
				}
			}
			want := 2
			if mode == testpeer.ModeSSE {
				want = 3 // one streamable attempt answered 400, then SSE twice
			}
			if n != want {
				t.Errorf("initialize sent %d times, want %d", n, want)
			}
		})
	}
}

func TestHeadersGoUpstream(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, nil)
	p := newPool(t, &Options{UserAgent: "agentpack-test/1"})
	tg := Target{ConnectionID: "h", URL: f.URL, Headers: map[string]string{"Authorization": "Bearer upstream-key", "X-Tenant": "acme"}}
	ctx := context.WithValue(t.Context(), struct{ k string }{"inbound"}, http.Header{"Authorization": {"Bearer inbound"}})
	if _, err := p.CallTool(ctx, tg, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "h"}}); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) == 0 {
		t.Fatal("no requests")
	}
	for _, r := range reqs {
		if got := r.Header.Values("Authorization"); len(got) != 1 || got[0] != "Bearer upstream-key" {
			t.Errorf("Authorization = %q", got)
		}
		if r.Header.Get("X-Tenant") != "acme" || r.Header.Get("User-Agent") != "agentpack-test/1" {
			t.Errorf("headers = %v", r.Header)
		}
		if r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("Content-Type = %q", r.Header.Get("Content-Type"))
		}
	}

	// A header that passed the REST check once but is invalid now never goes out.
	f.ResetRequests()
	bad := Target{ConnectionID: "h2", URL: f.URL, Headers: map[string]string{"X-A": "v\r\nX-Injected: 1"}}
	_, _, err := p.ListTools(t.Context(), bad)
	e := wantCode(t, err, apperr.UpstreamError, "headers are invalid")
	if strings.Contains(e.Error(), "Injected") {
		t.Errorf("error leaks the value: %v", e)
	}
	bad.Headers = map[string]string{"Mcp-Session-Id": "forged"}
	_, _, err = p.ListTools(t.Context(), bad)
	wantCode(t, err, apperr.UpstreamError, "Mcp-Session-Id")
	if n := len(f.Requests()); n != 0 {
		t.Errorf("%d requests sent with invalid headers", n)
	}
}

func TestSessionCache(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: testpeer.ModeStateful})
	p := newPool(t, &Options{FixedVersion: true}) // counts connects: no version measurement
	tg := Target{ConnectionID: "k", URL: f.URL, Headers: map[string]string{"X-Key": "a"}}

	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() { errs <- echo(t, p, tg, strings.Repeat("x", i)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := f.CountRequests(http.MethodPost, `"method":"initialize"`); n != 1 {
		t.Errorf("20 concurrent calls made %d connects, want 1", n)
	}

	tg.Headers = map[string]string{"X-Key": "b"} // config changed: new session
	if err := echo(t, p, tg, "b"); err != nil {
		t.Fatal(err)
	}
	if n := f.CountRequests(http.MethodPost, `"method":"initialize"`); n != 2 {
		t.Errorf("after a header change: %d connects, want 2", n)
	}
	if st := p.Status(); len(st) != 1 {
		t.Errorf("status = %+v, want one session", st)
	}

	// Ping connects afresh and caches nothing.
	info, err := p.Ping(t.Context(), Target{ConnectionID: "k", URL: f.URL})
	if err != nil || info.ServerName != demoupstream.ServerName {
		t.Fatalf("Ping = %+v, %v", info, err)
	}
	if n := f.CountRequests(http.MethodPost, `"method":"initialize"`); n != 3 {
		t.Errorf("Ping did not connect afresh (%d connects)", n)
	}
	if st := p.Status(); len(st) != 1 {
		t.Errorf("status after Ping = %+v", st)
	}

	p.Disconnect("k")
	if st := p.Status(); len(st) != 0 {
		t.Errorf("status after Disconnect = %+v", st)
	}

	// A one-shot target (no connection id) is never cached.
	if err := echo(t, p, Target{URL: f.URL}, "once"); err != nil {
		t.Fatal(err)
	}
	if st := p.Status(); len(st) != 0 {
		t.Errorf("one-shot session cached: %+v", st)
	}
}

func TestPagination(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, &testpeer.FixtureOptions{PageSize: 2})
	f.AddNumberedTools("n", 5)
	p := newPool(t, &Options{MaxPages: 8})
	tg := Target{ConnectionID: "pg", URL: f.URL}
	tools, _, err := p.ListTools(t.Context(), tg)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 10 { // echo add slow big fail + 5
		t.Errorf("got %d tools %v, want 10", len(tools), names(tools))
	}

	f.SetListHook(func(_ string, r *mcp.ListToolsResult) { r.NextCursor = "same-cursor" })
	_, _, err = p.ListTools(t.Context(), tg)
	wantCode(t, err, apperr.UpstreamError, "repeated a pagination cursor")

	f.SetListHook(func(cursor string, r *mcp.ListToolsResult) {
		r.NextCursor = cursor + "c" // never ends, never repeats
	})
	_, _, err = p.ListTools(t.Context(), tg)
	wantCode(t, err, apperr.UpstreamError, "within 8 pages")
}

func TestDroppedTools(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, nil)
	f.SetListHook(func(_ string, r *mcp.ListToolsResult) {
		r.Tools = append(r.Tools,
			&mcp.Tool{Name: "array_root", InputSchema: map[string]any{"type": "array"}},
			&mcp.Tool{Name: "no_type", InputSchema: map[string]any{"properties": map[string]any{}}},
			&mcp.Tool{Name: "union_type", InputSchema: map[string]any{"type": []any{"object", "null"}}},
			&mcp.Tool{Name: "bad_schema", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": 12}}}},
			&mcp.Tool{Name: "remote_ref", InputSchema: map[string]any{"type": "object", "$ref": "https://example.com/s.json"}},
			&mcp.Tool{Name: "bad_output", InputSchema: map[string]any{"type": "object"}, OutputSchema: map[string]any{"type": "string"}},
			&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, // duplicate
			&mcp.Tool{Name: "draft7", InputSchema: map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}},
		)
	})
	p := newPool(t, nil)
	tools, info, err := p.ListTools(t.Context(), Target{ConnectionID: "d", URL: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	got := names(tools)
	for _, want := range []string{"echo", "add", "slow", "big", "fail", "draft7"} {
		if !slices.Contains(got, want) {
			t.Errorf("kept %v lack %q", got, want)
		}
	}
	var dropped []string
	for _, d := range info.Dropped {
		dropped = append(dropped, d.Name+": "+d.Reason)
	}
	// no_type and union_type (["object","null"]) describe objects: normalised, kept.
	if len(info.Dropped) != 5 {
		t.Errorf("dropped = %q, want 5", dropped)
	}
	var normalized []string
	for _, n := range info.Normalized {
		normalized = append(normalized, n.Name)
	}
	if !slices.Contains(normalized, "no_type") || !slices.Contains(normalized, "union_type") ||
		!slices.Contains(got, "no_type") || !slices.Contains(got, "union_type") {
		t.Errorf("normalized %v, kept %v: want no_type and union_type normalised and kept", normalized, got)
	}
	for _, d := range info.Dropped {
		if slices.Contains(got, d.Name) && d.Name != "echo" {
			t.Errorf("%q both kept and dropped", d.Name)
		}
	}
}

func TestTooLarge(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{testpeer.ModeStreamable, testpeer.ModeStateful, testpeer.ModeSSE} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			f := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: mode})
			p := newPool(t, &Options{MaxResponseBytes: 64 << 10})
			tg := Target{ConnectionID: "big", URL: f.URL}
			res, err := p.CallTool(t.Context(), tg, &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": 32 << 10}})
			if err != nil || res.IsError {
				t.Fatalf("32 KiB: %v", err)
			}
			_, err = p.CallTool(t.Context(), tg, &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": 1 << 20}})
			wantCode(t, err, apperr.UpstreamError, "larger than the 65536-byte limit")
			if err := echo(t, p, tg, "still fine"); err != nil {
				t.Fatalf("after a too-large response: %v", err)
			}
		})
	}
}

func TestRPCErrorPassThrough(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, nil)
	p := newPool(t, nil)
	tg := Target{ConnectionID: "rpc", URL: f.URL}
	_, err := p.CallTool(t.Context(), tg, &mcp.CallToolParams{Name: "no_such_tool"})
	wantCode(t, err, apperr.UpstreamError, "JSON-RPC error")
	rpc := RPCError(err)
	if rpc == nil {
		t.Fatalf("RPCError(%v) = nil", err)
	}
	// A tool error is a result, not an error.
	res, err := p.CallTool(t.Context(), tg, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"message": "nope"}})
	if err != nil || !res.IsError {
		t.Fatalf("fail tool: %+v, %v", res, err)
	}
	if len(p.Status()) != 1 {
		t.Error("a JSON-RPC error dropped the session")
	}
}

func TestForwardPassThrough(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: testpeer.ModeStateful})
	p := newPool(t, nil)
	raw, err := p.Forward(t.Context(), Target{ConnectionID: "do", URL: f.URL}, "resources/read",
		json.RawMessage(`{"uri":"demo://readme"}`), nil)
	if err != nil || !strings.Contains(string(raw), "demo upstream") {
		t.Fatalf("Forward = %s, %v", raw, err)
	}
	_, err = p.Forward(t.Context(), Target{ConnectionID: "do", URL: f.URL}, "prompts/get", json.RawMessage(`{"name":"nope"}`), nil)
	if rpc := RPCError(err); rpc == nil || rpc.Code >= 0 {
		t.Errorf("unknown prompt: %v, want the upstream's JSON-RPC error passed through", err)
	}
}

func TestCancelledCaller(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, nil)
	p := newPool(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := p.CallTool(ctx, Target{ConnectionID: "cx", URL: f.URL}, &mcp.CallToolParams{Name: "echo"})
	wantCode(t, err, apperr.UpstreamUnavailable, "cancelled")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v does not wrap context.Canceled", err)
	}
}

// TestNoLeaks runs sequentially (before the parallel tests resume) so that VerifyNone sees
// only this test's goroutines.
func TestNoLeaks(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	func() {
		for _, mode := range []string{testpeer.ModeStreamable, testpeer.ModeStateful, testpeer.ModeSSE} {
			f := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: mode})
			p := New(&Options{Guard: urlguard.New(&urlguard.Options{AllowPrivate: true})})
			tg := Target{ConnectionID: "leak", URL: f.URL}
			if _, _, err := p.ListTools(t.Context(), tg); err != nil {
				t.Fatal(err)
			}
			if err := echo(t, p, tg, "x"); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Ping(t.Context(), tg); err != nil {
				t.Fatal(err)
			}
			_ = p.Close()
			if _, err := p.CallTool(t.Context(), tg, &mcp.CallToolParams{Name: "echo"}); apperr.CodeOf(err) != apperr.UpstreamUnavailable {
				t.Errorf("call after Close = %v", err)
			}
			f.Close()
		}
	}()
	goleak.VerifyNone(t, opt)
}

// TestDialTimeBlock bypasses CheckURL (as a DNS name rebinding to loopback would) and shows
// the dial-time refusal classified as UPSTREAM_ERROR.
func TestDialTimeBlock(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, nil)
	p := New(&Options{Guard: urlguard.New(nil)})
	t.Cleanup(func() { _ = p.Close() })
	_, _, _, err := p.connectOnce(t.Context(), Target{URL: f.URL}, TransportStreamable, time.Now().Add(5*time.Second), "")
	e := wantCode(t, err, apperr.UpstreamError, "address is not allowed (loopback)")
	if !errors.Is(e, urlguard.ErrBlockedAddress) {
		t.Errorf("error %v does not wrap ErrBlockedAddress", e)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("%d requests reached the upstream", n)
	}
}

// refusedCreds is a token source whose token the upstream refuses; it never asks for a retry.
type refusedCreds struct{}

func (refusedCreds) Token(context.Context) (string, error) { return "OAUTH-TOKEN", nil }
func (refusedCreds) Unauthorized(context.Context, string, *http.Response) bool {
	return false
}

// TestConnectStatusOAuth: a 401 to a target with OAuth credentials names the refused token
// and says to authorize again, never "check the connection's headers" (an OAuth connection
// has none), and never the token.
func TestConnectStatusOAuth(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, nil)
	f.SetStatus("*", http.StatusUnauthorized)
	p := newPool(t, nil)
	_, _, err := p.ListTools(t.Context(), Target{ConnectionID: "o", URL: f.URL, Credentials: refusedCreds{}})
	e := wantCode(t, err, apperr.UpstreamError, "answered 401: it refused the connection's OAuth token")
	if strings.Contains(e.Error(), "headers") || strings.Contains(e.Error(), "OAUTH-TOKEN") || !strings.Contains(e.Hint, "authorize") {
		t.Errorf("OAuth 401: %v (hint %q)", e, e.Hint)
	}
}
