//lint:file-ignore SA1019 tests of MCP logging and sampling, deprecated as of 2026-07-28 (SEP-2577) but defined by the revisions before, which the gateway serves.

package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmaxmax/go-sse"
)

// chattyUpstream serves (stateful Streamable HTTP, SSE answers, logging capability) a tool
// "chatty" {marker, n} that sends n log messages and, when asked, n progress notifications
// naming its marker, then answers with the marker.
func chattyUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "chatty", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "chatty", Description: "Talks while it runs.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"marker":{"type":"string"},"n":{"type":"integer"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Marker string
				N      int
			}
			_ = json.Unmarshal(req.Params.Arguments, &in)
			tok := req.Params.GetProgressToken()
			for i := range in.N {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "chatty", Data: fmt.Sprintf("%s log %d", in.Marker, i)})
				if tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.N), Message: in.Marker})
				}
				time.Sleep(3 * time.Millisecond)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Marker}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// sseMessages returns the data of each event of an SSE body, read with go-sse (as the
// forwarding path reads upstream streams); a body that is not a well-formed event stream
// fails the test.
func sseMessages(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	for ev, err := range sse.Read(bytes.NewReader(body), &sse.ReadConfig{MaxEventSize: len(body) + 1}) {
		if err != nil {
			t.Fatalf("reading the event stream: %v\n%s", err, body)
		}
		out = append(out, ev.Data)
	}
	return out
}

// TestNotificationRelay: through the single-server endpoint, an upstream's log and
// progress notifications reach the caller as a buffered text/event-stream answer, in
// order and under the caller's own progress token; calls without notifications and the
// aggregate endpoint keep their JSON answers; and concurrent calls by other principals —
// on the same connection (so the same pooled upstream session, with the same client
// progress token), on another connection, and in another workspace — never receive one
// another's notifications.
func TestNotificationRelay(t *testing.T) {
	t.Parallel()
	env := stacktest.New(t, nil)
	wsA, _, _ := env.Workspace(t, "A")
	wsB, _, _ := env.Workspace(t, "B")
	adminA := stacktest.Token(t, "alice", auth.RoleAdmin, wsA)
	memberA := stacktest.Token(t, "mallory", auth.RoleMember, wsA)
	adminB := stacktest.Token(t, "bob", auth.RoleAdmin, wsB)
	create := func(ws string, p *auth.Principal, name, url string) (id, handle string) {
		c := env.Connection(t, p, connections.CreateInput{Name: name, URL: url, TransportType: "streamable-http", WorkspaceID: &ws}).Connection
		return c.ID, c.Handle
	}
	up1, up2 := chattyUpstream(t), chattyUpstream(t)
	connA1, handleA1 := create(wsA, stacktest.Admin("alice", wsA), "Chatty One", up1)
	connA2, _ := create(wsA, stacktest.Admin("alice", wsA), "Chatty Two", up2)
	connB, _ := create(wsB, stacktest.Admin("bob", wsB), "Chatty", up1) // same upstream, other workspace
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	call := func(marker string, n int, progress bool) string {
		meta := ""
		if progress {
			meta = `,"_meta":{"progressToken":"tok"}`
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chatty","arguments":{"marker":%q,"n":%d}%s}}`, marker, n, meta)
	}

	// check verifies one single-server answer: n log events (and n progress events when
	// progress) naming only marker, in order, then the result.
	check := func(t *testing.T, resp *http.Response, body []byte, marker string, n int, progress bool, others []string) {
		t.Helper()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("%s: Content-Type %q, want text/event-stream; body %s", marker, ct, body)
		}
		msgs := sseMessages(t, body)
		want := n
		if progress {
			want = 2 * n
		}
		if len(msgs) != want+1 {
			t.Fatalf("%s: %d events, want %d: %q", marker, len(msgs), want+1, msgs)
		}
		logs, prog := 0, 0
		for _, m := range msgs[:want] {
			for _, o := range others {
				if strings.Contains(m, o) {
					t.Fatalf("%s received %s's notification: %s", marker, o, m)
				}
			}
			var note struct {
				ID     json.RawMessage
				Method string
				Params map[string]any
			}
			if err := json.Unmarshal([]byte(m), &note); err != nil || note.ID != nil {
				t.Fatalf("%s: not a notification: %s", marker, m)
			}
			switch note.Method {
			case "notifications/message":
				if d := note.Params["data"]; d != fmt.Sprintf("%s log %d", marker, logs) || note.Params["level"] != "info" {
					t.Fatalf("%s: log %d = %s", marker, logs, m)
				}
				logs++
			case "notifications/progress":
				if note.Params["progressToken"] != "tok" || note.Params["progress"] != float64(prog) || note.Params["message"] != marker {
					t.Fatalf("%s: progress %d = %s", marker, prog, m)
				}
				prog++
			default:
				t.Fatalf("%s: unexpected %s", marker, m)
			}
		}
		var res struct {
			ID     int
			Result mcp.CallToolResult
		}
		if err := json.Unmarshal([]byte(msgs[want]), &res); err != nil || res.ID != 1 || len(res.Result.Content) != 1 ||
			res.Result.Content[0].(*mcp.TextContent).Text != marker {
			t.Fatalf("%s: last event is not the result: %s (%v)", marker, msgs[want], err)
		}
	}

	t.Run("no notifications: JSON as before", func(t *testing.T) {
		resp, body := env.RPC(t, "/mcp/"+wsA+"/servers/"+connA1, adminA, call("quiet", 0, true), hdr)
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","id":1,"result"`)) {
			t.Fatalf("Content-Type %q, body %s", ct, body)
		}
	})
	// The aggregate endpoint relays progress (the caller asked for it with its token: the
	// conformance scenario tools-call-with-progress failed there, "No progress notifications
	// received") and never an upstream's log messages; without a token the answer is JSON.
	t.Run("aggregate endpoint: progress relayed, logs not", func(t *testing.T) {
		agg := func(marker string, progress bool) string {
			return strings.Replace(call(marker, 3, progress), `"chatty"`, `"mcp_`+handleA1+`_chatty"`, 1)
		}
		resp, body := env.RPC(t, "/mcp/"+wsA, adminA, agg("agg", false), hdr)
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !bytes.Contains(body, []byte(`"text":"agg"`)) {
			t.Fatalf("without a progress token: Content-Type %q, body %s", ct, body)
		}
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			h, req := hdr, agg("agg-progress", true)
			if version == "2026-07-28" {
				h = newEraHeaders(version, "tools/call", "mcp_"+handleA1+"_chatty")
				req = strings.Replace(req, `"_meta":{`, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"debug",`, 1)
			}
			resp, body = env.RPC(t, "/mcp/"+wsA, adminA, req, h)
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("%s with a progress token: Content-Type %q, want text/event-stream; body %s", version, ct, body)
			}
			msgs := sseMessages(t, body)
			if len(msgs) != 4 {
				t.Fatalf("%s: %d events, want 3 progress and the result: %q", version, len(msgs), msgs)
			}
			for i, m := range msgs[:3] {
				var note struct {
					Method string
					Params map[string]any
				}
				if err := json.Unmarshal([]byte(m), &note); err != nil || note.Method != "notifications/progress" ||
					note.Params["progressToken"] != "tok" || note.Params["progress"] != float64(i) || note.Params["message"] != "agg-progress" {
					t.Fatalf("%s: event %d is not progress %d under the caller's token: %s", version, i, i, m)
				}
			}
			if !strings.Contains(msgs[3], `"text":"agg-progress"`) || !strings.Contains(msgs[3], `"id":1`) {
				t.Fatalf("%s: last event is not the result: %s", version, msgs[3])
			}
		}
	})
	t.Run("plain call: logs", func(t *testing.T) {
		for range 3 {
			resp, body := env.RPC(t, "/mcp/"+wsA+"/servers/"+connA1, adminA, call("plain", 2, false), hdr)
			check(t, resp, body, "plain", 2, false, nil)
		}
	})
	t.Run("isolation", func(t *testing.T) {
		callers := []struct{ ws, conn, token, marker string }{
			{wsA, connA1, adminA, "mk-alpha"},
			{wsA, connA1, memberA, "mk-bravo"}, // same connection: the same upstream session
			{wsA, connA2, adminA, "mk-charlie"},
			{wsB, connB, adminB, "mk-delta"},
		}
		markers := []string{}
		for _, c := range callers {
			markers = append(markers, c.marker)
		}
		var wg sync.WaitGroup
		for round := range 5 {
			for i, c := range callers {
				others := append(append([]string{}, markers[:i]...), markers[i+1:]...)
				progress := (round+i)%2 == 0
				wg.Go(func() {
					resp, body := env.RPC(t, "/mcp/"+c.ws+"/servers/"+c.conn, c.token, call(c.marker, 4, progress), hdr)
					check(t, resp, body, c.marker, 4, progress, others)
				})
			}
		}
		wg.Wait()
	})
}
