package stack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/mcp/gateway"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callTimeout is the gateway's upstream call timeout in TestUpstreamTimeout (25 s in AWS).
// The other fault tests keep the default: under a loaded machine a 6 MiB answer can take
// longer than 1.5 s to arrive, and a timeout would then hide the fault they exist for.
const callTimeout = 1500 * time.Millisecond

// hostile is an upstream that lists its tools normally and misbehaves on tools/call of
// the tools named after a fault.
type hostile struct {
	srv *httptest.Server
	URL string
}

var hostileTools = []string{"malformed", "wrongshape", "hangup", "slow", "escaped", "oversize"}

func newHostile(t *testing.T) *hostile {
	t.Helper()
	s := demoupstream.NewServer(nil)
	for _, n := range hostileTools {
		s.AddTool(&mcp.Tool{Name: n, Description: "fault " + n, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "unreachable"}}}, nil
			})
	}
	h, err := demoupstream.NewHandler(s, demoupstream.ModeStreamable)
	if err != nil {
		t.Fatal(err)
	}
	hs := &hostile{}
	hs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		if msg.Method != "tools/call" {
			h.ServeHTTP(w, r)
			return
		}
		result := func(text string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, msg.ID, text)
		}
		switch msg.Params.Name {
		case "malformed":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"te`, msg.ID)
		case "wrongshape":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":"not an array","isError":"maybe"}}`, msg.ID)
		case "hangup":
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":" + string(msg.ID) + ",\"result\":{\"cont")
			_ = buf.Flush()
			_ = conn.Close()
		case "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(60 * time.Second): // far past any budget: only the timeout ends the call
			}
			result("too late")
		case "escaped":
			// 1 MiB upstream, but every '<' becomes \u003c when re-encoded: 6 MiB, past the
			// gateway's 5 MiB response limit (Lambda refuses more than 6 MB).
			result(strings.Repeat("<", 1<<20))
		case "oversize":
			result(strings.Repeat("x", 6<<20)) // past the upstream client's 5 MiB limit
		default:
			h.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(hs.srv.Close)
	hs.URL = hs.srv.URL + "/mcp"
	return hs
}

// faultEnv is a stack whose gateway gives up on upstream calls after timeout (0: the
// default, 25 s).
func faultEnv(t *testing.T, timeout time.Duration) *stacktest.Env {
	t.Helper()
	o := &stacktest.Options{}
	up := mcpclient.New(&mcpclient.Options{Guard: urlguard.New(&urlguard.Options{AllowPrivate: true}), CallTimeout: timeout})
	t.Cleanup(func() { _ = up.Close() })
	o.Stack = &stack.Options{Gateway: func(g *gateway.Options) { g.Upstreams = up }}
	return stacktest.New(t, o)
}

// faultEnvWith is a stack whose gateway uses the upstream client up.
func faultEnvWith(t *testing.T, up *mcpclient.Pool) *stacktest.Env {
	t.Helper()
	return stacktest.New(t, &stacktest.Options{Stack: &stack.Options{Gateway: func(g *gateway.Options) { g.Upstreams = up }}})
}

// TestUpstreamTimeout: an upstream that would answer after 60 s is given up on after the
// gateway's call timeout (1.5 s here) with UPSTREAM_TIMEOUT, and the gateway keeps serving.
// The bound proves the timeout, not the machine's speed: it is far below 60 s and scales
// with TEST_TIMEOUT_SCALE.
func TestUpstreamTimeout(t *testing.T) {
	t.Parallel()
	env := faultEnv(t, callTimeout)
	w := &world{env: env, ws: map[string]*tenant{}}
	ws, _, _ := env.Workspace(t, "T")
	admin := stacktest.Token(t, "admin-t", auth.RoleAdmin, ws)
	path := "/mcp/" + ws
	hs := newHostile(t)
	_, hh := createConnection(t, w, ws, admin, "Hostile", hs.URL, "streamable-http")
	start := time.Now()
	st, m, out := w.call(t, path, admin, "mcp_"+hh+"_slow", map[string]any{}, nil)
	if st != 200 || out != "UPSTREAM_TIMEOUT" {
		t.Errorf("slow call = %d %s, want UPSTREAM_TIMEOUT (%.300v)", st, out, m)
	}
	if d, max := time.Since(start), callTimeout+testpeer.Scaled(15*time.Second); d > max {
		t.Errorf("took %v, want at most %v", d, max)
	}
	if st, _, out := w.call(t, path, admin, "mcp_"+hh+"_wrongshape", map[string]any{}, nil); st != 200 || out != "ok" {
		t.Errorf("after the timeout: %d %s", st, out)
	}
}

func createConnection(t *testing.T, w *world, ws, admin, name, url, transport string) (id, handle string) {
	t.Helper()
	st, b := w.do(t, "POST", "/api/mcp-connections", admin, map[string]any{
		"name": name, "url": url, "transportType": transport, "workspaceId": ws,
		"headers": map[string]string{"X-Api-Key": secretHeader}})
	mustStatus(t, "create "+name, st, http.StatusCreated, b)
	if c, _ := b["connect"].(map[string]any); c == nil || c["success"] != true {
		t.Fatalf("create %s: connect %v", name, b["connect"])
	}
	return b["id"].(string), b["handle"].(string)
}

// TestUpstreamFaults (issue 7 "Faults"): each upstream misbehaviour has its written-down
// answer through the gateway, the gateway keeps serving afterwards, and every proxied call
// is audited with its outcome (a fault's: its envelope code, unavailable or upstream_error).
//
// The time bounds catch a hang (an upstream that would answer after 60 s, a retry loop),
// not slowness: they are far above an idle machine's answer and scale with
// TEST_TIMEOUT_SCALE.
func TestUpstreamFaults(t *testing.T) {
	t.Parallel()
	env := faultEnv(t, 0)
	w := &world{env: env, ws: map[string]*tenant{}}
	ws, _, _ := env.Workspace(t, "F")
	admin := stacktest.Token(t, "admin-f", auth.RoleAdmin, ws)
	path := "/mcp/" + ws
	hs := newHostile(t)
	_, hh := createConnection(t, w, ws, admin, "Hostile", hs.URL, "streamable-http")
	stateful := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: testpeer.ModeStateful})
	_, sh := createConnection(t, w, ws, admin, "Stateful", stateful.URL, "streamable-http")
	gone := testpeer.NewFixture(t, nil)
	_, gh := createConnection(t, w, ws, admin, "Gone", gone.URL, "streamable-http")
	gone.Close()
	failing := testpeer.NewFixture(t, nil)
	_, fh := createConnection(t, w, ws, admin, "Failing", failing.URL, "streamable-http")
	failing.SetStatus("POST", http.StatusServiceUnavailable)

	audited := 0               // successful proxied calls: outcome ok
	failed := map[string]int{} // failed proxied calls by audit outcome
	echo := func(t *testing.T) {
		t.Helper()
		st, _, out := w.call(t, path, admin, "mcp_"+sh+"_echo", map[string]any{"message": "still here"}, nil)
		if st != 200 || out != "ok" {
			t.Fatalf("the gateway stopped serving: %d %s", st, out)
		}
		audited++
	}
	echo(t)
	tests := []struct {
		name, tool string
		want       string // the outcome (see outcome) written down for this fault
		maxTime    time.Duration
	}{
		{"upstream down", "mcp_" + gh + "_echo", "UPSTREAM_UNAVAILABLE", 15 * time.Second},
		{"upstream answers 503", "mcp_" + fh + "_echo", "UPSTREAM_UNAVAILABLE", 15 * time.Second},
		{"malformed JSON-RPC", "mcp_" + hh + "_malformed", "UPSTREAM_ERROR", 15 * time.Second},
		// The gateway forwards the upstream's result bytes without decoding them (the
		// pass-through rule): a result of a shape no revision defines reaches the client as
		// sent, and judging it is the client's part.
		{"result of the wrong shape passes through", "mcp_" + hh + "_wrongshape", "ok", 15 * time.Second},
		// A truncated body is a protocol error (go-sdk reports the broken read, not a network error).
		{"connection closed mid-response", "mcp_" + hh + "_hangup", "UPSTREAM_ERROR", 15 * time.Second},
		{"result over the upstream size limit", "mcp_" + hh + "_oversize", "UPSTREAM_ERROR", 20 * time.Second},
		// 1 MiB of '<': re-encoding used to escape each to \u003c (6 MiB, past the
		// response limit); forwarded bytes stay 1 MiB.
		{"result full of HTML characters is not re-escaped", "mcp_" + hh + "_escaped", "ok", 20 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			st, m, out := w.call(t, path, admin, tt.tool, map[string]any{}, nil)
			if st != 200 || out != tt.want {
				s := fmt.Sprint(m)
				if len(s) > 300 {
					s = s[:300]
				}
				t.Errorf("%s = %d %s, want %s (%s)", tt.tool, st, out, tt.want, s)
			}
			if id := m["id"]; id == nil {
				t.Errorf("the answer does not carry the request's id: a client cannot match it: %.200v", m)
			}
			if d, max := time.Since(start), testpeer.Scaled(tt.maxTime); d > max {
				t.Errorf("took %v, want at most %v", d, max)
			}
			if tt.want != "ok" {
				failed[map[string]string{"UPSTREAM_UNAVAILABLE": "unavailable", "UPSTREAM_ERROR": "upstream_error"}[tt.want]]++
			}
			echo(t)
		})
	}
	t.Run("session expired: reconnect once", func(t *testing.T) {
		before := stateful.CountRequests("POST", `"method":"initialize"`)
		stateful.DropSessions()
		echo(t)
		if n := stateful.CountRequests("POST", `"method":"initialize"`) - before; n != 1 {
			t.Errorf("%d new initialize requests, want 1", n)
		}
	})
	t.Run("a go-sdk client gets the HTML characters intact", func(t *testing.T) {
		sess := env.MCP(t, path, admin, "", nil)
		ctx, cancel := context.WithTimeout(t.Context(), testpeer.Scaled(30*time.Second))
		defer cancel()
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_" + hh + "_escaped", Arguments: map[string]any{}})
		if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != strings.Repeat("<", 1<<20) {
			t.Errorf("CallTool = %v, want 1 MiB of '<'", err)
		}
	})
	// wrongshape, and escaped twice: results the upstream answered, audited like every
	// proxied call that reached a result without isError.
	audited += 3
	if n := w.count(t, `SELECT count(*) FROM audit_events WHERE outcome = 'ok'`); n != audited {
		t.Errorf("%d ok audit rows, want %d (one per successful proxied call)", n, audited)
	}
	for outcome, want := range failed {
		if n := w.count(t, `SELECT count(*) FROM audit_events WHERE outcome = $1`, outcome); n != want {
			t.Errorf("%d %s audit rows, want %d (one per failed call)", n, outcome, want)
		}
	}
	if n := w.count(t, `SELECT count(*) FROM audit_events`); n != audited+5 {
		t.Errorf("%d audit rows, want %d (every proxied call)", n, audited+5)
	}
}
