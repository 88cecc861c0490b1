//lint:file-ignore SA1019 tests of MCP logging and sampling, deprecated as of 2026-07-28 (SEP-2577) but defined by the revisions before, which the gateway serves.

package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
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
	p := newPool(t, &Options{FixedVersion: true}) // one session throughout: no version measurement
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

// TestReadStream: an upstream's SSE answer in any framing (a priming event without data,
// comments, CRLF line ends, "data:" without a space, multi-line data, bytes split across
// reads) yields the result of the response whose id matches, byte for byte, and hands the
// notifications met before it to the sink — not foreign progress tokens, not another id's
// response, nothing after the call returned.
func TestReadStream(t *testing.T) {
	body := ": comment\r\n" +
		"id: prime\r\ndata:\r\n\r\n" +
		"event: message\r\nid: 1\r\ndata:{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"one\"}}\r\n\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\n" +
		"data: \"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"other\",\"progress\":2}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"warning\",\"data\":\"two\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1099511627777,\"result\":{\"content\":[{\"type\":\"future\",\"x\":1}], \"extra\": true}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"error\",\"data\":\"late\"}}\n\n"
	var got []string
	sink := &relaySink{token: "t", r: &Relay{
		Log: func(m *mcp.LoggingMessageParams) { got = append(got, fmt.Sprintf("log %s %v", m.Level, m.Data)) },
		Progress: func(p *mcp.ProgressNotificationParams) {
			got = append(got, fmt.Sprintf("progress %v %g", p.ProgressToken, p.Progress))
		},
	}}
	s := &session{maxEvent: 1 << 20}
	jid := forwardJID(1099511627777)
	res, err := s.readStream(iotest.OneByteReader(strings.NewReader(body)), jid, sink)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[{"type":"future","x":1}], "extra": true}`; string(res) != want {
		t.Fatalf("result %s, want %s", res, want)
	}
	want := []string{"log info one", "progress <nil> 1", "log warning two"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("relayed %q, want %q", got, want)
	}
	// A stream that ends without the response is an error, not an empty result.
	if _, err := s.readStream(strings.NewReader("data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n"), jid, nil); err == nil {
		t.Fatal("stream without our response: no error")
	}
	sink.close()
	got = nil
	_, _ = s.readStream(strings.NewReader(body), jid, sink)
	if len(got) != 0 {
		t.Fatalf("relayed %q after the call returned", got)
	}
}
