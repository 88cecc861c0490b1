package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProtocolGuard: a panic or a plain error escaping method handling is -32603 with
// data.errorId; JSON-RPC errors pass unchanged.
func TestProtocolGuard(t *testing.T) {
	g, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Parallel()
	rpcErr := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool"}
	tests := []struct {
		name     string
		next     mcp.MethodHandler
		wantCode int64
		wantID   bool
	}{
		{"panic", func(context.Context, string, mcp.Request) (mcp.Result, error) { panic("boom") }, jsonrpc.CodeInternalError, true},
		{"plain error", func(context.Context, string, mcp.Request) (mcp.Result, error) {
			return nil, errors.New("db password=x")
		}, jsonrpc.CodeInternalError, true},
		{"json-rpc error", func(context.Context, string, mcp.Request) (mcp.Result, error) { return nil, rpcErr }, jsonrpc.CodeInvalidParams, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := g.guard(tt.next)(context.Background(), "tools/list", &mcp.ListToolsRequest{})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != tt.wantCode {
				t.Fatalf("err = %v, want code %d", err, tt.wantCode)
			}
			var data struct{ ErrorID string }
			_ = json.Unmarshal(je.Data, &data)
			if (data.ErrorID != "") != tt.wantID || strings.Contains(je.Message, "password") {
				t.Errorf("error = %+v", je)
			}
		})
	}
}
