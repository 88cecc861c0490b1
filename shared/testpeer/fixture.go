package testpeer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TB is the part of testing.TB the helpers use; *testing.T and *testing.B satisfy it. It is
// an interface of our own so that this package does not import "testing" (cmd/local imports
// it for the demo upstream).
type TB interface {
	Helper()
	Cleanup(func())
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// FixtureOptions configures NewFixture. nil means defaults.
type FixtureOptions struct {
	// Mode is ModeStreamable (default: stateless, JSON responses), ModeStateful or ModeSSE.
	Mode string
	// PageSize is the server's tools/list page size (0: go-sdk default 1000).
	PageSize int
}

// SeenRequest is one HTTP request the fixture received.
type SeenRequest struct {
	Method string
	Path   string
	Header http.Header // a copy
	Body   string      // the first 64 KiB of the body
}

// Fixture is the demo upstream (demoupstream.NewServer) served on a loopback httptest server, with
// knobs for drift, fault and header tests. All methods are safe for concurrent use and may
// be called between (or during) client calls.
type Fixture struct {
	// Server is the live go-sdk server; AddTool / RemoveTools on it take effect at once.
	Server *mcp.Server
	// URL is the MCP endpoint: http://127.0.0.1:PORT/mcp (streamable, stateful) or
	// http://127.0.0.1:PORT/sse (SSE).
	URL string

	mode string
	srv  *httptest.Server
	stop chan struct{}

	mu        sync.Mutex
	handler   http.Handler
	status    map[string]int // HTTP method ("*" = any) → status to answer instead
	requests  []SeenRequest
	overrides map[string]func(*mcp.Tool)
	listHook  func(string, *mcp.ListToolsResult)
	closeOnce sync.Once
}

// NewFixture starts the demo upstream on 127.0.0.1 in opts.Mode and stops it in t.Cleanup.
// It fails the test on an unknown mode.
func NewFixture(t TB, opts *FixtureOptions) *Fixture {
	t.Helper()
	if opts == nil {
		opts = &FixtureOptions{}
	}
	f := &Fixture{mode: opts.Mode, stop: make(chan struct{}), status: map[string]int{}, overrides: map[string]func(*mcp.Tool){}}
	if f.mode == "" {
		f.mode = ModeStreamable
	}
	f.Server = demoupstream.NewServer(&demoupstream.Options{PageSize: opts.PageSize, Stop: f.stop})
	f.Server.AddReceivingMiddleware(f.listMiddleware)
	h, err := demoupstream.NewHandler(f.Server, f.mode)
	if err != nil {
		t.Fatalf("%v", err)
	}
	f.handler = h
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveHTTP))
	path := "/mcp"
	if f.mode == ModeSSE {
		path = "/sse"
	}
	f.URL = f.srv.URL + path
	t.Cleanup(f.Close)
	return f
}

// Close stops the server: ends sleeping slow tools, closes every MCP session and every
// client connection. Idempotent; NewFixture registers it with t.Cleanup.
func (f *Fixture) Close() {
	f.closeOnce.Do(func() {
		close(f.stop)
		f.closeSessions()
		f.srv.CloseClientConnections()
		f.srv.Close()
	})
}

// SetStatus makes the fixture answer every request with HTTP method (e.g. "POST", "GET";
// "*" for any) with status code and a plain-text body, before MCP sees it. code 0 clears.
func (f *Fixture) SetStatus(method string, code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if code == 0 {
		delete(f.status, method)
		return
	}
	f.status[method] = code
}

// SetToolDescription makes tools/list report desc as the description of tool name (a
// definition change, as seen by clients, for drift tests). "" restores the original.
func (f *Fixture) SetToolDescription(name, desc string) {
	if desc == "" {
		f.SetToolOverride(name, nil)
		return
	}
	f.SetToolOverride(name, func(t *mcp.Tool) { t.Description = desc })
}

// SetToolOverride makes tools/list pass tool name through edit (which gets a copy) before
// answering; nil removes the override. The tool's handler is unchanged.
func (f *Fixture) SetToolOverride(name string, edit func(*mcp.Tool)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if edit == nil {
		delete(f.overrides, name)
		return
	}
	f.overrides[name] = edit
}

// SetListHook installs hook to rewrite every tools/list result (a deep copy) after the
// overrides: add tools the go-sdk would refuse to register (a non-object inputSchema), or
// set NextCursor for pagination-loop tests. While a hook is set it owns pagination: the
// server always computes its first page, and the hook gets the request's cursor. nil
// removes it.
func (f *Fixture) SetListHook(hook func(cursor string, res *mcp.ListToolsResult)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listHook = hook
}

// AddNumberedTools adds n trivial tools named prefix_000, prefix_001, ... (each answers
// text "<name>"), e.g. to exercise pagination with a small PageSize.
func (f *Fixture) AddNumberedTools(prefix string, n int) {
	for i := range n {
		name := fmt.Sprintf("%s_%03d", prefix, i)
		f.Server.AddTool(&mcp.Tool{
			Name: name, Description: "numbered tool " + name,
			InputSchema: json.RawMessage(`{"type":"object"}`),
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return demoupstream.TextResult(name), nil
		})
	}
}

// DropSessions forgets every MCP session, as an upstream restart would: stateful clients
// then get 404 for their session id (go-sdk: ErrSessionMissing) and SSE clients see their
// stream end. A no-op for sessions in stateless mode.
func (f *Fixture) DropSessions() {
	h, _ := demoupstream.NewHandler(f.Server, f.mode)
	f.mu.Lock()
	f.handler = h
	f.mu.Unlock()
	f.closeSessions()
}

// Requests returns a copy of the requests received so far, oldest first.
func (f *Fixture) Requests() []SeenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]SeenRequest(nil), f.requests...)
}

// CountRequests returns how many recorded requests have method (or any, for "") and a body
// containing substr (e.g. `"method":"initialize"`).
func (f *Fixture) CountRequests(method, substr string) int {
	n := 0
	for _, r := range f.Requests() {
		if (method == "" || r.Method == method) && strings.Contains(r.Body, substr) {
			n++
		}
	}
	return n
}

// ResetRequests forgets the recorded requests.
func (f *Fixture) ResetRequests() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = nil
}

func (f *Fixture) closeSessions() {
	for ss := range f.Server.Sessions() {
		_ = ss.Close()
	}
}

func (f *Fixture) serveHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(r.Body, 64<<10))
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	}
	f.mu.Lock()
	f.requests = append(f.requests, SeenRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: string(body)})
	code, ok := f.status[r.Method]
	if !ok {
		code, ok = f.status["*"]
	}
	h := f.handler
	f.mu.Unlock()
	if ok {
		http.Error(w, http.StatusText(code), code)
		return
	}
	h.ServeHTTP(w, r)
}

func (f *Fixture) listMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/list" {
			return next(ctx, method, req)
		}
		f.mu.Lock()
		hooked := f.listHook != nil
		f.mu.Unlock()
		cursor := ""
		if lreq, ok := req.(*mcp.ListToolsRequest); ok && hooked && lreq.Params != nil {
			cursor = lreq.Params.Cursor
			params := *lreq.Params
			params.Cursor = ""
			lreq.Params = &params
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return res, err
		}
		f.mu.Lock()
		hook := f.listHook
		overrides := make(map[string]func(*mcp.Tool), len(f.overrides))
		for k, v := range f.overrides {
			overrides[k] = v
		}
		f.mu.Unlock()
		if hook == nil && len(overrides) == 0 {
			return res, nil
		}
		// Deep copy: the *Tool values in lr belong to the server.
		data, err := json.Marshal(lr)
		if err != nil {
			return nil, err
		}
		out := new(mcp.ListToolsResult)
		if err := json.Unmarshal(data, out); err != nil {
			return nil, err
		}
		for _, t := range out.Tools {
			if edit := overrides[t.Name]; edit != nil {
				edit(t)
			}
		}
		if hook != nil {
			hook(cursor, out)
		}
		return out, nil
	}
}
