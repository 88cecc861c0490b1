package mcpclient

import (
	"bytes"
	"cmp"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tsStyleUpstream is a stateful MCP upstream (go-sdk's streamable handler, sessions on) in
// front of which a "restart" forgets every session the way a restarted TypeScript-SDK
// server does: a request carrying an Mcp-Session-Id of an earlier process gets HTTP 400 with
// {"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},
// "id":null} — the SDK's answer when a fresh transport sees a request before initialize.
type tsStyleUpstream struct {
	t   *testing.T
	URL string

	mu       sync.Mutex
	server   *mcp.Server
	handler  http.Handler
	sessions map[string]bool // issued by the current process
	answer   string          // body of the refusal
	status   int             // status of the refusal (400 when 0)
	always   bool            // every tools/call gets the refusal, on any session (a session that keeps failing)
	seen     []string        // "<METHOD> <jsonrpc method or ->[ 400]"
}

func newTSStyleUpstream(t *testing.T) *tsStyleUpstream {
	u := &tsStyleUpstream{t: t, answer: `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`}
	u.restart()
	s := httptest.NewServer(u)
	t.Cleanup(func() {
		s.Close()
		u.closeSessions()
	})
	u.URL = s.URL + "/mcp"
	return u
}

// restart starts a new "process": a new server and handler (no sessions) and no known
// session ids; the old process's sessions end.
func (u *tsStyleUpstream) restart() {
	srv := demoupstream.NewServer(nil)
	h, err := demoupstream.NewHandler(srv, testpeer.ModeStateful)
	if err != nil {
		u.t.Fatal(err)
	}
	u.closeSessions()
	u.mu.Lock()
	u.server, u.handler, u.sessions = srv, h, map[string]bool{}
	u.mu.Unlock()
}

func (u *tsStyleUpstream) closeSessions() {
	u.mu.Lock()
	srv := u.server
	u.mu.Unlock()
	if srv != nil {
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	}
}

func (u *tsStyleUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	method := "-"
	if i := strings.Index(string(body), `"method":"`); i >= 0 {
		rest := string(body[i+10:])
		method = rest[:strings.IndexByte(rest, '"')]
	}
	sid := r.Header.Get("Mcp-Session-Id")
	u.mu.Lock()
	h, known, always, answer, status := u.handler, u.sessions[sid], u.always, u.answer, cmp.Or(u.status, http.StatusBadRequest)
	refuse := sid != "" && (!known || (always && method == "tools/call"))
	entry := r.Method + " " + method
	if refuse {
		entry += " " + strconv.Itoa(status)
	}
	u.seen = append(u.seen, entry)
	u.mu.Unlock()
	if refuse {
		if strings.HasPrefix(answer, "{") {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
		return
	}
	// The session id is known from the moment its header is written: the client may send
	// its next request (notifications/initialized) before ServeHTTP returns.
	h.ServeHTTP(&sidRecorder{ResponseWriter: w, u: u}, r)
}

// sidRecorder remembers the Mcp-Session-Id a response issues when its header is written.
type sidRecorder struct {
	http.ResponseWriter
	u    *tsStyleUpstream
	done bool
}

func (s *sidRecorder) WriteHeader(code int) {
	if !s.done {
		s.done = true
		if id := s.Header().Get("Mcp-Session-Id"); id != "" {
			s.u.mu.Lock()
			s.u.sessions[id] = true
			s.u.mu.Unlock()
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *sidRecorder) Write(b []byte) (int, error) {
	if !s.done {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

func (s *sidRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (u *tsStyleUpstream) count(entry string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, s := range u.seen {
		if s == entry {
			n++
		}
	}
	return n
}

func echoParams(msg string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}}
}

// TestStatefulUpstreamRestart400 (issue 14 item 6): an upstream that answers 400 "Server not
// initialized" to a request on a remembered session gets exactly one re-initialize and the
// call is retried once on the new session.
func TestStatefulUpstreamRestart400(t *testing.T) {
	t.Parallel()
	u := newTSStyleUpstream(t)
	p := newPool(t, nil)
	tg := Target{ConnectionID: "ts", URL: u.URL}
	if err := echo(t, p, tg, "one"); err != nil {
		t.Fatal(err)
	}
	u.restart()
	if err := echo(t, p, tg, "two"); err != nil {
		t.Fatalf("call after the upstream restarted: %v", err)
	}
	if n := u.count("POST tools/call 400"); n != 1 {
		t.Errorf("%d refused calls, want 1", n)
	}
	if n := u.count("POST initialize"); n != 2 {
		t.Errorf("%d initialize requests, want 2 (one reconnect)", n)
	}
	if n := u.count("POST tools/call"); n != 2 {
		t.Errorf("%d calls served, want 2", n)
	}
}

// TestStatefulUpstreamSessionKeepsFailing: a session that keeps failing is retried once,
// not more, and ends in an error naming the status; a 400 that does not say the session is
// gone is not retried at all.
func TestStatefulUpstreamSessionKeepsFailing(t *testing.T) {
	t.Parallel()
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		u := newTSStyleUpstream(t)
		p := newPool(t, nil)
		tg := Target{ConnectionID: "ts", URL: u.URL}
		if err := echo(t, p, tg, "one"); err != nil {
			t.Fatal(err)
		}
		u.mu.Lock()
		u.always = true
		u.mu.Unlock()
		err := echo(t, p, tg, "two")
		if apperr.As(err) == nil {
			t.Fatalf("err = %v, want an *apperr.Error", err)
		}
		if n := u.count("POST initialize"); n != 2 {
			t.Errorf("%d initialize requests, want 2 (exactly one reconnect)", n)
		}
		if n := u.count("POST tools/call 400"); n != 2 {
			t.Errorf("%d refused calls, want 2 (the call and its one retry): %v; err %v", n, u.seen, err)
		}
	})
	// Issue 22 (session recovery by status): a genuine 400 is retried once on a new session
	// like any 400 to a session, and the retry's answer is then relayed unchanged.
	t.Run("genuine 400 relayed after one retry", func(t *testing.T) {
		t.Parallel()
		u := newTSStyleUpstream(t)
		u.answer = `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Bad Request: invalid arguments"},"id":null}`
		p := newPool(t, nil)
		tg := Target{ConnectionID: "ts", URL: u.URL}
		if err := echo(t, p, tg, "one"); err != nil {
			t.Fatal(err)
		}
		u.mu.Lock()
		u.always = true
		u.mu.Unlock()
		err := echo(t, p, tg, "two")
		if rpc := RPCError(err); rpc == nil || rpc.Code != -32602 || rpc.Message != "Bad Request: invalid arguments" {
			t.Errorf("err = %v, want the upstream's -32602 relayed", err)
		}
		if n := u.count("POST initialize"); n != 2 {
			t.Errorf("%d initialize requests, want 2 (one reconnect): %v", n, u.seen)
		}
		if n := u.count("POST tools/call 400"); n != 2 {
			t.Errorf("%d refused calls, want 2 (the call and its one retry): %v", n, u.seen)
		}
	})
	// Issue 22: a session that keeps answering 404 with the TypeScript SDK's -32001 "Session
	// not found" ends as UPSTREAM_UNAVAILABLE, and that error object is not passed through
	// (it is about the gateway's session, not the caller's request).
	t.Run("404 twice is not relayed", func(t *testing.T) {
		t.Parallel()
		u := newTSStyleUpstream(t)
		u.status = http.StatusNotFound
		u.answer = `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`
		p := newPool(t, nil)
		tg := Target{ConnectionID: "ts", URL: u.URL}
		if err := echo(t, p, tg, "one"); err != nil {
			t.Fatal(err)
		}
		u.mu.Lock()
		u.always = true
		u.mu.Unlock()
		err := echo(t, p, tg, "two")
		wantCode(t, err, apperr.UpstreamUnavailable, "closed the session")
		if rpc := RPCError(err); rpc != nil {
			t.Errorf("the upstream's %d is passed through: %v", rpc.Code, err)
		}
		if n := u.count("POST initialize"); n != 2 {
			t.Errorf("%d initialize requests, want 2 (exactly one reconnect): %v", n, u.seen)
		}
		if n := u.count("POST tools/call 404"); n != 2 {
			t.Errorf("%d refused calls, want 2: %v", n, u.seen)
		}
	})
}

// TestStatefulUpstream400AnyText (issue 22, session recovery by status): a one-off 400 to
// a request on a remembered session, in words no list of phrases holds (plain text or a
// JSON-RPC error), gets exactly one re-initialize and the call succeeds on the retry.
func TestStatefulUpstream400AnyText(t *testing.T) {
	t.Parallel()
	for _, answer := range []string{
		"Bad Request: initialize first, please",
		"the session you sent belongs to a previous deployment",
		`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: who are you?"},"id":null}`,
		"",
	} {
		t.Run(answer, func(t *testing.T) {
			t.Parallel()
			u := newTSStyleUpstream(t)
			u.answer = answer
			p := newPool(t, nil)
			tg := Target{ConnectionID: "ts", URL: u.URL}
			if err := echo(t, p, tg, "one"); err != nil {
				t.Fatal(err)
			}
			u.restart()
			if err := echo(t, p, tg, "two"); err != nil {
				t.Fatalf("call after a 400: %v", err)
			}
			if n := u.count("POST tools/call 400"); n != 1 {
				t.Errorf("%d refused calls, want 1: %v", n, u.seen)
			}
			if n := u.count("POST initialize"); n != 2 {
				t.Errorf("%d initialize requests, want 2 (one reconnect): %v", n, u.seen)
			}
			if n := u.count("POST tools/call"); n != 2 {
				t.Errorf("%d calls served, want 2: %v", n, u.seen)
			}
		})
	}
}

// TestStatefulUpstreamEverythingRestart (issue 14 item 6): the real npm server-everything
// (stateful streamable HTTP) restarted on the same port between two calls: its answer to
// the old session (400 "Bad Request: No valid session ID provided") is taken as "session
// gone", and the second call succeeds on a new session.
func TestStatefulUpstreamEverythingRestart(t *testing.T) {
	t.Parallel()
	peer := testpeer.EverythingRestartable(t, "streamable")
	p := newPool(t, nil)
	tg := Target{ConnectionID: "everything", URL: peer.URL}
	call := func(msg string) error {
		res, err := p.CallTool(t.Context(), tg, echoParams(msg))
		if err == nil && res.IsError {
			t.Fatalf("echo %s: tool error %+v", msg, res.Content)
		}
		return err
	}
	if err := call("one"); err != nil {
		t.Fatal(err)
	}
	peer.Restart(t)
	if err := call("two"); err != nil {
		t.Fatalf("call after server-everything restarted: %v", err)
	}
}

// TestCloseEndsSessions (issue 14 item 6): Pool.Close ends every session the pool opened
// with an HTTP DELETE carrying its Mcp-Session-Id (MCP 2025-11-25 §2.5.3).
func TestCloseEndsSessions(t *testing.T) {
	t.Parallel()
	f := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: testpeer.ModeStateful})
	p := New(&Options{Guard: newPool(t, nil).opts.Guard})
	if _, _, err := p.ListTools(t.Context(), Target{ConnectionID: "a", URL: f.URL}); err != nil {
		t.Fatal(err)
	}
	var sid string
	for _, r := range f.Requests() {
		if s := r.Header.Get("Mcp-Session-Id"); s != "" {
			sid = s
		}
	}
	if sid == "" {
		t.Fatal("the fixture issued no session")
	}
	if n := f.CountRequests(http.MethodDelete, ""); n != 0 {
		t.Fatalf("%d DELETEs before Close", n)
	}
	_ = p.Close()
	deletes := 0
	for _, r := range f.Requests() {
		if r.Method == http.MethodDelete && r.Header.Get("Mcp-Session-Id") == sid {
			deletes++
		}
	}
	if deletes != 1 {
		t.Errorf("%d DELETEs of session %s after Close, want 1", deletes, sid)
	}
}
