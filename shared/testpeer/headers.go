package testpeer

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HeaderToolSchema is the input schema of HeaderUpstream's tools: parameters marked
// x-mcp-header at the root (string, integer, boolean) and one nested under an object's
// properties (2026-07-28 transport, "Custom Headers from Tool Parameters").
const HeaderToolSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"count":{"type":"integer","x-mcp-header":"Count"},` +
	`"dry":{"type":"boolean","x-mcp-header":"Dry"},` +
	`"where":{"type":"object","properties":{"city":{"type":"string","x-mcp-header":"City"}}},` +
	`"query":{"type":"string"}}}`

// HeaderToolASCII and HeaderToolUnicode are HeaderUpstream's tools (same schema): one
// named in plain ASCII, one whose name needs the Base64 form in Mcp-Name. The ASCII one
// sorts first: the official conformance suite's custom-header scenario tests the first
// x-mcp-header tool it lists and sends its name raw in Mcp-Name, which for "météo" a
// 2026-07-28 server must refuse (the name must travel Base64-encoded).
const (
	HeaderToolASCII   = "forecast"
	HeaderToolUnicode = "météo"
)

// HeaderUpstream is a 2026-07-28-only MCP upstream (go-sdk's stateless handler; an
// initialize offering an older revision is refused with 400) whose tools carry
// x-mcp-header parameters. go-sdk's server checks every tools/call's Mcp-Name and
// Mcp-Param-* headers against the body and answers 400 / -32020 to a mismatch, so a call
// that reaches a tool was mirrored correctly (Mcp-Name in the Base64 form is decoded for
// go-sdk first, as a conforming server does). It records the headers of every tools/call
// as received.
type HeaderUpstream struct {
	URL string

	mu    sync.Mutex
	calls []http.Header
}

// NewHeaderUpstream starts a HeaderUpstream on 127.0.0.1, closed in t.Cleanup. A tool
// answers "ok <name>: <arguments as JSON>".
func NewHeaderUpstream(t TB) *HeaderUpstream {
	u := &HeaderUpstream{}
	s := mcp.NewServer(&mcp.Implementation{Name: "header-upstream", Version: "1"}, nil)
	for _, name := range []string{HeaderToolASCII, HeaderToolUnicode} {
		s.AddTool(&mcp.Tool{Name: name, Description: "Answers with its arguments; its parameters are mirrored into Mcp-Param-* headers",
			InputSchema: json.RawMessage(HeaderToolSchema)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
					Text: "ok " + req.Params.Name + ": " + string(req.Params.Arguments)}}}, nil
			})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"initialize"`)) && !bytes.Contains(body, []byte(`"2026-07-28"`)) {
			http.Error(w, "Bad Request: unsupported protocol version", http.StatusBadRequest)
			return
		}
		if bytes.Contains(body, []byte(`"method":"tools/call"`)) {
			u.mu.Lock()
			u.calls = append(u.calls, r.Header.Clone())
			u.mu.Unlock()
		}
		// go-sdk v1.8.0's server compares Mcp-Name undecoded (it decodes Mcp-Param-* only);
		// the transport chapter says a server decodes it first, which this peer does for it.
		if v := r.Header.Get("Mcp-Name"); strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
			if b, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(v, "=?base64?"), "?=")); err == nil {
				r.Header.Set("Mcp-Name", string(b))
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u.URL = srv.URL + "/mcp"
	return u
}

// Calls returns the request headers of the tools/call requests received so far.
func (u *HeaderUpstream) Calls() []http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]http.Header(nil), u.calls...)
}

// ParamHeaders returns the Mcp-Param-* headers of h, by canonical name.
func ParamHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		if strings.HasPrefix(k, "Mcp-Param-") && len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}
