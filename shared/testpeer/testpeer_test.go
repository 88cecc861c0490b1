package testpeer

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func connect(t *testing.T, url, mode string) *mcp.ClientSession {
	t.Helper()
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}
	if mode == ModeSSE {
		tr = &mcp.SSEClientTransport{Endpoint: url}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "testpeer-test", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func TestFixtureModes(t *testing.T) {
	for _, mode := range []string{ModeStreamable, ModeStateful, ModeSSE} {
		t.Run(mode, func(t *testing.T) {
			f := NewFixture(t, &FixtureOptions{Mode: mode})
			cs := connect(t, f.URL, mode)
			names := toolNames(t, cs)
			for _, want := range []string{"echo", "add", "slow", "big", "fail"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools %v lack %q", names, want)
				}
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "Echo: hi" {
				t.Errorf("echo text = %q", got)
			}
			sc, _ := json.Marshal(res.StructuredContent)
			if string(sc) != `{"echo":"hi"}` {
				t.Errorf("echo structuredContent = %s", sc)
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": 1000}})
			if err != nil || len(res.Content[0].(*mcp.TextContent).Text) != 1000 {
				t.Errorf("big: %v", err)
			}
		})
	}
}

func TestFixtureKnobs(t *testing.T) {
	f := NewFixture(t, &FixtureOptions{PageSize: 3})
	f.AddNumberedTools("n", 4)
	f.SetToolDescription("echo", "CHANGED")
	cs := connect(t, f.URL, ModeStreamable)
	var descs = map[string]string{}
	pages := 0
	cursor := ""
	for {
		res, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, tool := range res.Tools {
			descs[tool.Name] = tool.Description
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if pages < 3 || descs["echo"] != "CHANGED" || len(descs) != 9 {
		t.Errorf("pages=%d descs=%v", pages, descs)
	}

	f.SetListHook(func(cursor string, r *mcp.ListToolsResult) {
		r.Tools = append(r.Tools, &mcp.Tool{Name: "broken", InputSchema: map[string]any{"type": "array"}})
		r.NextCursor = ""
		if cursor == "" {
			r.NextCursor = "hooked"
		}
	})
	res, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: "hooked"})
	if err != nil || res.NextCursor != "" || res.Tools[len(res.Tools)-1].Name != "broken" {
		t.Errorf("hooked list = %+v, %v", res, err)
	}
	f.SetListHook(nil)

	f.SetStatus("POST", http.StatusTeapot)
	if _, err := cs.ListTools(t.Context(), nil); err == nil {
		t.Error("want an error with a status override")
	}
	f.SetStatus("POST", 0)
	if reqs := f.Requests(); len(reqs) < 2 || reqs[1].Header.Get("Mcp-Protocol-Version") == "" {
		t.Errorf("requests not recorded: %v", reqs)
	}
}

func TestFixtureSlowStopsOnClose(t *testing.T) {
	f := NewFixture(t, nil)
	cs := connect(t, f.URL, ModeStreamable)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60000}}); err == nil {
		t.Fatal("slow call did not time out")
	}
	start := time.Now()
	f.Close()
	if d, max := time.Since(start), Scaled(15*time.Second); d > max { // the call would run 60 s
		t.Errorf("Close took %s, want at most %s", d, max)
	}
}

func TestEverything(t *testing.T) {
	for _, mode := range []string{"streamable", "sse"} {
		t.Run(mode, func(t *testing.T) {
			url := Everything(t, mode)
			if !strings.HasPrefix(url, "http://127.0.0.1:") {
				t.Fatalf("url %q is not loopback", url)
			}
			m := ModeStreamable
			if mode == "sse" {
				m = ModeSSE
			}
			cs := connect(t, url, m)
			if names := toolNames(t, cs); !slices.Contains(names, "echo") {
				t.Errorf("tools %v lack echo", names)
			}
		})
	}
}

func TestTSClient(t *testing.T) {
	f := NewFixture(t, nil)
	res := TSClient(t, TSClientOptions{
		URL:             f.URL,
		Authorization:   "Bearer test-token",
		ProtocolVersion: "2025-06-18",
		Plan: []map[string]any{
			{"op": "listTools"},
			{"op": "callTool", "name": "echo", "arguments": map[string]any{"message": "ts"}},
			{"op": "callTool", "name": "nope"},
		},
	})
	if res.ConnectError != nil {
		t.Fatalf("connect: %+v", res.ConnectError)
	}
	if res.ProtocolVersion != "2025-06-18" || len(res.Steps) != 3 {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(string(res.Steps[1].Result), "Echo: ts") {
		t.Errorf("echo step %s", res.Steps[1].Result)
	}
	if res.Steps[2].Error == nil && !strings.Contains(string(res.Steps[2].Result), `"isError":true`) {
		t.Errorf("unknown tool step %+v", res.Steps[2])
	}
	if got := f.Requests()[0].Header.Get("Authorization"); got != "Bearer test-token" {
		t.Errorf("Authorization = %q", got)
	}
}
