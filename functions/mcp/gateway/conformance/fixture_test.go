//lint:file-ignore SA1019 tests of MCP logging and sampling, deprecated as of 2026-07-28 (SEP-2577) but defined by the revisions before, which the gateway serves.

package conformance_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fixture upstream: a small MCP server written for these tests from the conformance
// scenarios' descriptions (tool, resource and prompt names and the results they expect).
// The gateway's single-server endpoint is put in front of it.

// redPixelPNG is a 1×1 red PNG; silentWAV a WAV header with no samples.
var (
	redPixelPNG = mustB64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	silentWAV   = mustB64("UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=")
)

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

const noArgs = `{"type":"object","properties":{}}`

type fixtureTool struct {
	name, desc, schema string
	fn                 func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
}

func fixtureTools() []fixtureTool {
	return []fixtureTool{
		{"test_simple_text", "Returns simple text content", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("This is a simple text response for testing."), nil
		}},
		{"test_image_content", "Returns image content", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}}}, nil
		}},
		{"test_audio_content", "Returns audio content", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: silentWAV, MIMEType: "audio/wav"}}}, nil
		}},
		{"test_embedded_resource", "Returns an embedded resource", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}}}, nil
		}},
		{"test_multiple_content_types", "Returns text, image and resource content", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Multiple content types test:"},
				&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
			}}, nil
		}},
		{"test_tool_with_logging", "Sends three log messages while it runs", noArgs, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					time.Sleep(50 * time.Millisecond)
				}
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "fixture", Data: msg})
			}
			return text("Tool with logging executed successfully"), nil
		}},
		{"test_tool_with_progress", "Reports progress 0, 50, 100 of 100", noArgs, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					time.Sleep(50 * time.Millisecond)
				}
				if tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p, Total: 100})
				}
			}
			return text("Tool with progress executed successfully"), nil
		}},
		{"test_error_handling", "Always fails", noArgs, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("This tool intentionally returns an error for testing")
			r.IsError = true
			return r, nil
		}},
		{"test_sampling", "Asks the client's LLM", `{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Prompt string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 100,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}}})
			if err != nil {
				return nil, err
			}
			t, _ := res.Content.(*mcp.TextContent)
			if t == nil {
				return nil, fmt.Errorf("sampling answered non-text content")
			}
			return text("LLM response: " + t.Text), nil
		}},
		{"test_elicitation", "Asks the user", `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Message string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: in.Message, RequestedSchema: json.RawMessage(
				`{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`)})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(res.Content)
			return text(fmt.Sprintf("User response: action=%s, content=%s", res.Action, b)), nil
		}},
		{"test_elicitation_sep1034_defaults", "Asks the user, with defaults for every primitive type", noArgs, elicitWith(
			`{"type":"object","properties":{"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},"verified":{"type":"boolean","default":true}}}`)},
		{"test_elicitation_sep1330_enums", "Asks the user, with the five enum forms", noArgs, elicitWith(
			`{"type":"object","properties":{"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"}]},"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"}]}}}}`)},
		{"json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`,
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil }},
	}
}

// elicitWith returns a handler that elicits with schema and reports the answer.
func elicitWith(schema string) func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Please fill in the form", RequestedSchema: json.RawMessage(schema)})
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(res.Content)
		return text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, b)), nil
	}
}

// newFixtureServer builds the fixture's MCP server.
func newFixtureServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "conformance-fixture", Version: "1.0.0"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			var vals []string
			for _, v := range []string{"paris", "park", "party"} {
				if strings.HasPrefix(v, req.Params.Argument.Value) {
					vals = append(vals, v)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: append([]string{}, vals...), Total: len(vals)}}, nil
		},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	for _, ft := range fixtureTools() {
		s.AddTool(&mcp.Tool{Name: ft.name, Description: ft.desc, InputSchema: json.RawMessage(ft.schema)}, ft.fn)
	}
	static := func(uri, mime, body string, blob []byte) mcp.ResourceHandler {
		return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: body, Blob: blob}}}, nil
		}
	}
	s.AddResource(&mcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain"},
		static("test://static-text", "text/plain", "This is the content of the static text resource.", nil))
	s.AddResource(&mcp.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static PNG", MIMEType: "image/png"},
		static("test://static-binary", "image/png", "", redPixelPNG))
	s.AddResource(&mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource to subscribe to", MIMEType: "text/plain"},
		static("test://watched-resource", "text/plain", "watched", nil))
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template-data", Description: "Data by id", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			b, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
		})
	prompt := func(msgs ...*mcp.PromptMessage) *mcp.GetPromptResult { return &mcp.GetPromptResult{Messages: msgs} }
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A prompt without arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return prompt(&mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: "This is a simple prompt for testing."}}), nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two arguments", Arguments: []*mcp.PromptArgument{
		{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return prompt(&mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])}}), nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource", Arguments: []*mcp.PromptArgument{
		{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return prompt(
				&mcp.PromptMessage{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}},
				&mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: "Please process the embedded resource above."}}), nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return prompt(
				&mcp.PromptMessage{Role: "user", Content: &mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}},
				&mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: "Please analyze the image above."}}), nil
		})
	return s
}

// startFixture serves the fixture (stateful streamable HTTP) on a loopback port and
// returns its MCP endpoint URL.
func startFixture(t *testing.T) string {
	t.Helper()
	srv := newFixtureServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}
