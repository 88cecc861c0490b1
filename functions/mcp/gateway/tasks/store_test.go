package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestStoreError: a classified failure while serving tasks keeps its code and retryable
// flag (a database outage is UNAVAILABLE, retryable); an unclassified one is
// INTERNAL_ERROR. Both are -32603 with an errorId.
func TestStoreError(t *testing.T) {
	t.Parallel()
	s := New(Options{})
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
		if !errors.As(s.storeError(context.Background(), c.err), &je) || je.Code != jsonrpc.CodeInternalError {
			t.Fatalf("%v: %v", c.err, je)
		}
		var data apperr.RPCData
		if json.Unmarshal(je.Data, &data) != nil || data.Code != c.code || data.Retryable != c.retryable || data.ErrorID == "" {
			t.Errorf("%v: data %s", c.err, je.Data)
		}
	}
}
