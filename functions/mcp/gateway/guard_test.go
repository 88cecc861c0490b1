package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
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

// TestTaskStoreError: a classified failure while serving tasks keeps its code and retryable
// flag (a database outage is UNAVAILABLE, retryable); an unclassified one is
// INTERNAL_ERROR. Both are -32603 with an errorId.
func TestTaskStoreError(t *testing.T) {
	t.Parallel()
	g, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		err       error
		code      apperr.Code
		retryable bool
	}{
		{fmt.Errorf("task get: %w", apperr.New(apperr.Unavailable, "database unavailable")), apperr.Unavailable, true},
		{apperr.New(apperr.NotFound, "this server was removed"), apperr.NotFound, false},
		{errors.New("bug"), apperr.Internal, false},
	} {
		var je *jsonrpc.Error
		if !errors.As(g.taskStoreError(context.Background(), c.err), &je) || je.Code != jsonrpc.CodeInternalError {
			t.Fatalf("%v: %v", c.err, je)
		}
		var data apperr.RPCData
		if json.Unmarshal(je.Data, &data) != nil || data.Code != c.code || data.Retryable != c.retryable || data.ErrorID == "" {
			t.Errorf("%v: data %s", c.err, je.Data)
		}
	}
}
