// Package demoupstream is the demo MCP server that `make run` serves beside the gateway
// (cmd/local) and that the tests' in-process fixtures build on (shared/testpeer): a go-sdk
// server with a few deterministic tools (echo, add, slow, big, fail, and a few content
// types), a resource and a prompt, served over streamable HTTP (stateless or stateful) or
// legacy SSE. It is ordinary code, so non-test packages may import it; the test-only
// helpers stay in shared/testpeer (docs/ARCHITECTURE.md "Import rules").
package demoupstream

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerName is the serverInfo.name of NewServer.
const ServerName = "agentpack-demo-upstream"

// Limits of the demo tools, so a demo upstream cannot be turned against its host.
const (
	// MaxSlowMS is the longest sleep the slow tool accepts, in milliseconds.
	MaxSlowMS = 120_000
	// MaxBigBytes is the largest text the big tool returns, in bytes (64 MiB).
	MaxBigBytes = 64 << 20
)

// EchoIn is the input of the echo tool.
type EchoIn struct {
	Message string `json:"message" jsonschema:"the text to echo back"`
}

// EchoOut is the structured output of the echo tool.
type EchoOut struct {
	Echo string `json:"echo" jsonschema:"the message, unchanged"`
}

// AddIn is the input of the add tool.
type AddIn struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

// AddOut is the structured output of the add tool.
type AddOut struct {
	Sum float64 `json:"sum" jsonschema:"a + b"`
}

// SlowIn is the input of the slow tool.
type SlowIn struct {
	MS int `json:"ms" jsonschema:"how long to sleep, in milliseconds (at most 120000)"`
}

// BigIn is the input of the big tool.
type BigIn struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes of text to return (at most 64 MiB)"`
}

// FailIn is the input of the fail tool.
type FailIn struct {
	Message string `json:"message,omitempty" jsonschema:"the error text to return"`
}

// Options tunes NewServer. nil means defaults.
type Options struct {
	// PageSize is the server's page size for tools/list etc. (0: the go-sdk default, 1000).
	PageSize int
	// Stop, when non-nil, ends every slow tool early when it is closed (used by Fixture.Close
	// so that closing a test server never waits for a sleeping handler).
	Stop <-chan struct{}
}

// NewServer returns a go-sdk MCP server named ServerName with these tools:
//
//   - echo {message: string} → text "Echo: <message>", structuredContent {"echo": message}
//   - add {a, b: number} → text "<a+b>", structuredContent {"sum": a+b}
//   - slow {ms: integer} → sleeps ms milliseconds (≤ MaxSlowMS) honouring ctx and
//     opts.Stop, then text "slept <ms> ms"
//   - big {bytes: integer} → text of exactly bytes bytes (≤ MaxBigBytes) of "x"
//   - fail {message?: string} → a tool error result (isError: true) with the message
//
// plus a resource demo://readme (text/plain) and a prompt "greet" {name}. Capabilities are
// explicit with listChanged false. The server is safe to mutate (AddTool/RemoveTools) while
// serving.
func NewServer(opts *Options) *mcp.Server {
	if opts == nil {
		opts = &Options{}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "Agentpack demo upstream", Version: "1.0.0"},
		&mcp.ServerOptions{
			PageSize:     opts.PageSize,
			Instructions: "A demo MCP server for local development and tests: echo, add, slow, big, fail.",
			Capabilities: &mcp.ServerCapabilities{
				Tools:     &mcp.ToolCapabilities{ListChanged: false},
				Resources: &mcp.ResourceCapabilities{ListChanged: false},
				Prompts:   &mcp.PromptCapabilities{ListChanged: false},
			},
		})
	mcp.AddTool(s, &mcp.Tool{
		Name: "echo", Title: "Echo", Description: "Echoes back the input message.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, EchoOut, error) {
		return TextResult("Echo: " + in.Message), EchoOut{Echo: in.Message}, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name: "add", Title: "Add", Description: "Adds two numbers.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in AddIn) (*mcp.CallToolResult, AddOut, error) {
		sum := in.A + in.B
		return TextResult(fmt.Sprint(sum)), AddOut{Sum: sum}, nil
	})
	stop := opts.Stop
	mcp.AddTool(s, &mcp.Tool{
		Name: "slow", Title: "Slow", Description: "Sleeps for the given number of milliseconds, then answers.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in SlowIn) (*mcp.CallToolResult, any, error) {
		if in.MS < 0 || in.MS > MaxSlowMS {
			return nil, nil, fmt.Errorf("ms must be between 0 and %d", MaxSlowMS)
		}
		timer := time.NewTimer(time.Duration(in.MS) * time.Millisecond)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-stop:
			return nil, nil, fmt.Errorf("server stopping")
		}
		return TextResult(fmt.Sprintf("slept %d ms", in.MS)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name: "big", Title: "Big", Description: "Returns a text of the requested size in bytes.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in BigIn) (*mcp.CallToolResult, any, error) {
		if in.Bytes < 0 || in.Bytes > MaxBigBytes {
			return nil, nil, fmt.Errorf("bytes must be between 0 and %d", MaxBigBytes)
		}
		return TextResult(strings.Repeat("x", in.Bytes)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name: "fail", Title: "Fail", Description: "Always fails with a tool error (isError: true).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in FailIn) (*mcp.CallToolResult, any, error) {
		msg := in.Message
		if msg == "" {
			msg = "this tool always fails"
		}
		res := TextResult(msg)
		res.IsError = true
		return res, nil, nil
	})
	s.AddResource(&mcp.Resource{
		URI: "demo://readme", Name: "readme", Title: "Demo readme", MIMEType: "text/plain",
		Description: "What this demo upstream is.",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: req.Params.URI, MIMEType: "text/plain",
			Text: "The Agentpack demo upstream: tools echo, add, slow, big and fail.",
		}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{
		Name: "greet", Title: "Greet", Description: "Greets someone by name.",
		Arguments: []*mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{
			Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"] + "."},
		}}}, nil
	})
	return s
}

// Modes of NewHandler and NewFixture.
const (
	// ModeStreamable is stateless Streamable HTTP with JSON responses (the gateway's own mode).
	ModeStreamable = "streamable"
	// ModeStateful is Streamable HTTP with sessions (Mcp-Session-Id) and SSE responses.
	ModeStateful = "stateful"
	// ModeSSE is the legacy HTTP+SSE transport (2024-11-05): GET opens the stream, POSTs go
	// to the endpoint it announces.
	ModeSSE = "sse"
)

// NewHandler serves server over HTTP in mode (ModeStreamable, ModeStateful or ModeSSE)
// at whatever path it is mounted on. It returns an error for an unknown mode.
func NewHandler(server *mcp.Server, mode string) (http.Handler, error) {
	get := func(*http.Request) *mcp.Server { return server }
	switch mode {
	case ModeStreamable, "":
		return mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}), nil
	case ModeStateful:
		return mcp.NewStreamableHTTPHandler(get, nil), nil
	case ModeSSE:
		return mcp.NewSSEHandler(get, nil), nil
	}
	return nil, fmt.Errorf("demoupstream: unknown mode %q (want %q, %q or %q)", mode, ModeStreamable, ModeStateful, ModeSSE)
}

// TextResult is a tool result of one text content block.
func TextResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
