package apperr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// table is every Code with its HTTP status, JSON-RPC code and retryable flag: the three
// mappings of an edge, one row per code.
var table = []struct {
	code      Code
	status    int
	rpc       int64
	retryable bool
}{
	{Validation, 400, -32600, false},
	{Unauthenticated, 401, -32600, false},
	{Forbidden, 403, -32600, false},
	{NotFound, 404, -32600, false},
	{Conflict, 409, -32600, false},
	{InvalidReference, 422, -32600, false},
	{RateLimited, 429, -32600, true},
	{PayloadTooLarge, 413, -32600, false},
	{Unavailable, 503, -32603, true},
	{UpstreamUnavailable, 503, -32603, true},
	{UpstreamError, 502, -32603, false},
	{UpstreamTimeout, 504, -32603, true},
	{Internal, 500, -32603, false},
	{Code("SOMETHING_NEW"), 500, -32603, false}, // an unknown code is INTERNAL_ERROR's
}

// TestTableCoversEveryCode: every Code constant declared in this package has a row, so a
// new code cannot go without its HTTP status and JSON-RPC code being decided.
func TestTableCoversEveryCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "apperr.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[Code]bool{}
	for _, r := range table {
		rows[r.code] = true
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || vs.Type == nil || fmt.Sprint(vs.Type) != "Code" {
			return true
		}
		for _, v := range vs.Values {
			lit := v.(*ast.BasicLit).Value
			n++
			if c := Code(lit[1 : len(lit)-1]); !rows[c] {
				t.Errorf("code %s has no row in the table", c)
			}
		}
		return true
	})
	if n < 13 {
		t.Errorf("found %d Code constants, want at least 13: did the declaration move?", n)
	}
}

func TestCodeMappings(t *testing.T) {
	for _, r := range table {
		if got := r.code.HTTPStatus(); got != r.status {
			t.Errorf("%s: HTTP %d, want %d", r.code, got, r.status)
		}
		if got := r.code.RPCCode(); got != r.rpc {
			t.Errorf("%s: JSON-RPC %d, want %d", r.code, got, r.rpc)
		}
		if got := r.code.Retryable(); got != r.retryable {
			t.Errorf("%s: retryable %v, want %v", r.code, got, r.retryable)
		}
		// The rule the gateway has applied: a 5xx is the gateway's fault (-32603), a 4xx
		// the request's (-32600).
		if (r.status >= 500) != (r.rpc == jsonrpc.CodeInternalError) {
			t.Errorf("%s: HTTP %d but JSON-RPC %d", r.code, r.status, r.rpc)
		}
	}
}

// TestRPC: every row through RPC — message kept, data only for -32603, carrying the
// envelope code, retryable flag and errorId in the gateway's member order.
func TestRPC(t *testing.T) {
	for _, r := range table {
		err := fmt.Errorf("handler: %w", Wrap(errors.New("secret cause"), r.code, "safe message"))
		je := RPC(err, "e1")
		if je.Code != r.rpc || je.Message != "safe message" || RPCCode(err) != r.rpc {
			t.Errorf("%s: %d %q (RPCCode %d), want %d", r.code, je.Code, je.Message, RPCCode(err), r.rpc)
		}
		want := ""
		if r.rpc == jsonrpc.CodeInternalError {
			want = fmt.Sprintf(`{"code":%q,"errorId":"e1","retryable":%v}`, r.code, r.retryable)
		}
		if string(je.Data) != want {
			t.Errorf("%s: data %s, want %s", r.code, je.Data, want)
		}
	}
}

func TestRPCOtherErrors(t *testing.T) {
	upstream := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool"}
	cases := []struct {
		name string
		err  error
		want string // the error as encoded
	}{
		{"plain error: generic internal error, cause hidden", errors.New("pq: password=hunter2"),
			`{"code":-32603,"message":"internal error","data":{"code":"INTERNAL_ERROR","errorId":"e1","retryable":false}}`},
		{"deadline without classification", context.DeadlineExceeded,
			`{"code":-32603,"message":"internal error","data":{"code":"INTERNAL_ERROR","errorId":"e1","retryable":false}}`},
		{"upstream JSON-RPC error passes through", fmt.Errorf("calling: %w", upstream),
			`{"code":-32602,"message":"unknown tool"}`},
		{"an *Error wins over the JSON-RPC error it wraps", Wrap(upstream, UpstreamError, "upstream returned JSON-RPC error"),
			`{"code":-32603,"message":"upstream returned JSON-RPC error","data":{"code":"UPSTREAM_ERROR","errorId":"e1","retryable":false}}`},
	}
	for _, c := range cases {
		raw, err := json.Marshal(RPC(c.err, "e1"))
		if err != nil || string(raw) != c.want {
			t.Errorf("%s: %s %v\nwant %s", c.name, raw, err, c.want)
		}
	}
	if RPC(nil, "e1") != nil {
		t.Error("RPC(nil) is not nil")
	}
	if RPCCode(fmt.Errorf("x: %w", upstream)) != jsonrpc.CodeInvalidParams || RPCCode(errors.New("x")) != jsonrpc.CodeInternalError {
		t.Error("RPCCode of a non-*Error")
	}
	raw, _ := json.Marshal(RPC(New(Unavailable, "catalog unavailable"), ""))
	if string(raw) != `{"code":-32603,"message":"catalog unavailable","data":{"code":"UNAVAILABLE","retryable":true}}` {
		t.Errorf("no errorId: %s", raw)
	}
}
