package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// chattyUpstream serves (stateful Streamable HTTP, SSE responses, logging capability) a
// tool "chatty" {marker, n} that sends, n times, a log message and a progress notification
// naming its marker (plus a debug message below RelayLogLevel and a progress notification
// under a foreign token), then answers with the marker.
func chattyUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "chatty", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "chatty", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Marker string
				N      int
			}
			_ = json.Unmarshal(req.Params.Arguments, &in)
			tok := req.Params.GetProgressToken()
			for i := range in.N {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "debug", Data: "debug " + in.Marker})
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "chatty", Data: fmt.Sprintf("%s %d", in.Marker, i)})
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "foreign", Progress: -1})
				if tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Message: in.Marker})
				}
				time.Sleep(5 * time.Millisecond)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Marker}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCallToolRelay: concurrent calls on one pooled upstream session (one connection id,
// so the same session for every caller) each receive exactly their own notifications, in
// order, the progress under no token of the upstream's; plain calls interleaved with them
// receive nothing; and no callback runs after CallToolRelay returned.
func TestCallToolRelay(t *testing.T) {
	url := chattyUpstream(t)
	p := newPool(t, nil)
	tg := Target{ConnectionID: "shared", URL: url, Transport: TransportStreamable}
	const callers, n = 8, 5
	var wg sync.WaitGroup
	for c := range callers {
		marker := fmt.Sprintf("caller-%d", c)
		wg.Go(func() {
			var mu sync.Mutex
			var logs, progress []string
			var returned atomic.Bool
			r := &Relay{
				Log: func(m *mcp.LoggingMessageParams) {
					if returned.Load() {
						t.Errorf("%s: log relayed after return", marker)
					}
					mu.Lock()
					logs = append(logs, fmt.Sprintf("%s|%s|%v", m.Level, m.Logger, m.Data))
					mu.Unlock()
				},
				Progress: func(pr *mcp.ProgressNotificationParams) {
					if returned.Load() {
						t.Errorf("%s: progress relayed after return", marker)
					}
					mu.Lock()
					progress = append(progress, fmt.Sprintf("%v|%g|%s", pr.ProgressToken, pr.Progress, pr.Message))
					mu.Unlock()
				},
			}
			res, err := p.CallToolRelay(t.Context(), tg, &mcp.CallToolParams{Name: "chatty", Arguments: map[string]any{"marker": marker, "n": n}}, r)
			returned.Store(true)
			if err != nil {
				t.Errorf("%s: %v", marker, err)
				return
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != marker {
				t.Errorf("%s: result %q", marker, got)
			}
			var wantLogs, wantProgress []string
			for i := range n {
				wantLogs = append(wantLogs, fmt.Sprintf("info|chatty|%s %d", marker, i))
				wantProgress = append(wantProgress, fmt.Sprintf("<nil>|%d|%s", i, marker))
			}
			mu.Lock()
			defer mu.Unlock()
			if strings.Join(logs, ",") != strings.Join(wantLogs, ",") {
				t.Errorf("%s: logs %q, want %q", marker, logs, wantLogs)
			}
			if strings.Join(progress, ",") != strings.Join(wantProgress, ",") {
				t.Errorf("%s: progress %q, want %q", marker, progress, wantProgress)
			}
		})
		wg.Go(func() { // a plain call on the same session, concurrently
			if _, err := p.CallTool(t.Context(), tg, &mcp.CallToolParams{Name: "chatty", Arguments: map[string]any{"marker": "plain", "n": n}}); err != nil {
				t.Errorf("plain call: %v", err)
			}
		})
	}
	wg.Wait()
	if st := p.Status(); len(st) != 1 {
		t.Fatalf("%d sessions, want the one shared session", len(st))
	}
}

// TestSSETap: the tap passes the body through unchanged and finds the notifications in
// any SSE framing (CRLF, "data:" without a space, multi-line data, comments, events split
// across reads), skipping responses, foreign progress tokens and oversized events.
func TestSSETap(t *testing.T) {
	big := strings.Repeat("x", maxRelayEvent)
	body := ": comment\r\n" +
		"event: message\r\nid: 1\r\ndata:{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"one\"}}\r\n\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\n" +
		"data: \"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"other\",\"progress\":2}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"" + big + "\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"notifications/message\"}]}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"warning\",\"data\":\"two\"}}\n\n"
	var got []string
	sink := &relaySink{token: "t", r: &Relay{
		Log: func(m *mcp.LoggingMessageParams) { got = append(got, fmt.Sprintf("log %s %v", m.Level, m.Data)) },
		Progress: func(p *mcp.ProgressNotificationParams) {
			got = append(got, fmt.Sprintf("progress %v %g", p.ProgressToken, p.Progress))
		},
	}}
	tap := &sseTap{rc: io.NopCloser(iotest.OneByteReader(strings.NewReader(body))), sink: sink}
	out, err := io.ReadAll(tap)
	if err != nil || string(out) != body {
		t.Fatalf("body changed (%v)", err)
	}
	want := []string{"log info one", "progress <nil> 1", "log warning two"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("relayed %q, want %q", got, want)
	}
	sink.close()
	got = nil
	_, _ = io.ReadAll(&sseTap{rc: io.NopCloser(strings.NewReader(body)), sink: sink})
	if len(got) != 0 {
		t.Fatalf("relayed %q after the call returned", got)
	}
}
