package mcpclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSDKErrorTexts produces every go-sdk error that sdkerrors.go recognises by its text
// from the real go-sdk, and pins the go-sdk version the texts were checked against: an
// upgrade fails here until the texts are re-checked and sdkVersionChecked is bumped.
func TestSDKErrorTexts(t *testing.T) {
	t.Run("version", func(t *testing.T) {
		if v := sdkVersionInUse(t); v != sdkVersionChecked {
			t.Fatalf("go-sdk is %s, its error texts were checked against %s: re-check sdkerrors.go", v, sdkVersionChecked)
		}
	})

	t.Run("rejected by transport", func(t *testing.T) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
		var broken atomic.Bool
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if broken.Load() {
				http.Error(w, "down", http.StatusInternalServerError)
				return
			}
			h.ServeHTTP(w, r)
		}))
		defer ts.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		broken.Store(true)
		_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || !transportRejected(je) {
			t.Fatalf("a 500 answered %v (%#v): go-sdk no longer wraps its ErrRejected as -32005 %q", err, je, textRejected)
		}
		if RPCError(err) != nil {
			t.Error("RPCError passed the transport's own error through as the upstream's")
		}
		if transportRejected(&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: textRejected}) ||
			transportRejected(&jsonrpc.Error{Code: codeRejected, Message: "an upstream's own -32005"}) {
			t.Error("transportRejected matched another error")
		}
	})

	t.Run("plain-text refusals", func(t *testing.T) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		cases := []struct {
			name, method, body string
			text               string // what go-sdk writes (a part of it)
			want               int64
		}{
			{"unknown method", "POST", `{"jsonrpc":"2.0","id":1,"method":"nope/x","params":{}}`, `JSON RPC not handled: "nope/x" unsupported`, jsonrpc.CodeMethodNotFound},
			{"not JSON", "POST", `{"jsonrpc":`, "malformed payload: ", jsonrpc.CodeParseError},
			{"notification with an id", "POST", `{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}`, `invalid request: unexpected id for "notifications/initialized"`, jsonrpc.CodeInvalidRequest},
			{"HTTP method", "PUT", ``, "Method Not Allowed", jsonrpc.CodeInvalidRequest},
		}
		for _, c := range cases {
			r := httptest.NewRequest(c.method, "/", strings.NewReader(c.body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			body, _ := io.ReadAll(rec.Body)
			text := strings.TrimSpace(string(body))
			if rec.Code < 400 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") || !strings.Contains(text, c.text) {
				t.Errorf("%s: go-sdk answered %d %q %q, want a text/plain refusal containing %q", c.name, rec.Code,
					rec.Header().Get("Content-Type"), text, c.text)
				continue
			}
			if got := PlainRefusalCode(text); got != c.want {
				t.Errorf("%s: %q → %d, want %d", c.name, text, got, c.want)
			}
		}
	})
}

// sdkVersionInUse is the go-sdk version this test binary was built with: from the build
// info when the toolchain records dependencies in test binaries, else from go.mod's
// require line (a replace directive for go-sdk is refused: its texts would be unknown).
func sdkVersionInUse(t *testing.T) string {
	const path = "github.com/modelcontextprotocol/go-sdk"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil {
					return d.Replace.Path + "@" + d.Replace.Version
				}
				return d.Version
			}
		}
	}
	raw, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	version := ""
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "replace" && f[1] == path || len(f) >= 1 && f[0] == path && strings.Contains(line, "=>") {
			t.Fatalf("go.mod replaces go-sdk: %s", line)
		}
		if len(f) >= 2 && f[0] == path {
			version = f[1]
		} else if len(f) >= 3 && f[0] == "require" && f[1] == path {
			version = f[2]
		}
	}
	if version == "" {
		t.Fatal("go-sdk is in neither the build info nor go.mod")
	}
	return version
}
