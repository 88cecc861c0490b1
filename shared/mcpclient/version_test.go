package mcpclient

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProtocolPreference: the pool offers PreferredProtocolVersion first, even to an
// upstream remembered at 2026-07-28; an older remembered version is offered as is; an
// upstream that refuses the preference is connected at go-sdk's newest and the refusal is
// remembered, so the next connect does not offer the preference again.
func TestProtocolPreference(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, nil)
	for _, tc := range []struct{ remembered, want string }{
		{"", PreferredProtocolVersion},
		{"2026-07-28", PreferredProtocolVersion},
		{"2025-06-18", "2025-06-18"},
	} {
		p := newPool(t, nil)
		tg := Target{ConnectionID: "c", URL: f.URL, ProtocolVersion: tc.remembered}
		_, info, err := p.ListTools(t.Context(), tg)
		if err != nil {
			t.Fatal(err)
		}
		if info.ProtocolVersion != tc.want {
			t.Errorf("remembered %q: negotiated %q, want %q", tc.remembered, info.ProtocolVersion, tc.want)
		}
		if err := echo(t, p, tg, "hi"); err != nil {
			t.Fatal(err)
		}
	}

	// An upstream that answers 400 to an initialize offering the preferred version.
	s := mcp.NewServer(&mcp.Implementation{Name: "new-only", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in demoupstream.EchoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	var refusals atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if strings.Contains(string(body), `"method":"initialize"`) && strings.Contains(string(body), PreferredProtocolVersion) {
			refusals.Add(1)
			http.Error(w, "Bad Request: unsupported protocol version", http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p := newPool(t, nil)
	tg := Target{ConnectionID: "n", URL: srv.URL}
	for i := range 2 {
		_, info, err := p.ListTools(t.Context(), tg)
		if err != nil {
			t.Fatal(err)
		}
		if info.ProtocolVersion != "2026-07-28" || info.Transport != TransportStreamable {
			t.Errorf("negotiated %q over %s, want 2026-07-28 over streamable", info.ProtocolVersion, info.Transport)
		}
		if err := echo(t, p, tg, "new"); err != nil {
			t.Fatal(err)
		}
		p.Disconnect("n")
		if got := refusals.Load(); got != 1 {
			t.Fatalf("connect %d: %d refused offers, want 1 (the refusal is remembered)", i, got)
		}
	}
}
