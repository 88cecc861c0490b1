package mcpclient

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// This file is the one place where the project recognises a go-sdk error by its text,
// because go-sdk exports no sentinel, type or code for it. Every predicate here is checked
// against the go-sdk release sdkVersionChecked by TestSDKErrorTexts, which produces each
// error from the real go-sdk and fails when go.mod names another release: re-check the
// texts (grep the new release's mcp/streamable.go and internal/jsonrpc2) before bumping
// the constant.

// sdkVersionChecked is the go-sdk module version the texts below were checked against.
const sdkVersionChecked = "v1.8.0"

// codeRejected and textRejected are go-sdk's internal jsonrpc2.ErrRejected
// (internal/jsonrpc2/wire.go: NewError(-32005, "rejected by transport")), which the
// streamable client transport wraps around a failed POST (dial error, 5xx answer).
const (
	codeRejected = -32005
	textRejected = "rejected by transport"
)

// transportRejected reports whether e is go-sdk's transport-local "rejected by transport"
// (-32005): an error of the client's own transport, not a JSON-RPC answer of the upstream.
func transportRejected(e *jsonrpc.Error) bool {
	return e.Code == codeRejected && e.Message == textRejected
}

// PlainRefusalCode returns the JSON-RPC error code for the body of a plain-text
// (text/plain) refusal that go-sdk's streamable HTTP handler writes with http.Error
// instead of a JSON-RPC error object, so that an edge can answer it as one:
//
//   - -32601 method not found for an unknown method ("JSON RPC not handled: "x"
//     unsupported", from jsonrpc2.ErrNotHandled in mcp checkRequest) and "unsupported
//     method" (an HTTP method the transport does not serve);
//   - -32700 parse error for a body that is not JSON ("malformed payload: …", and
//     encoding/json texts such as "invalid character" and "unexpected end");
//   - -32600 invalid request for anything else (a notification with an id, missing
//     params, a bad Accept or Content-Type, "Bad Request: Unsupported protocol version").
//
// text is the body as written (surrounding space is ignored). The matching is
// case-sensitive, as go-sdk writes it.
func PlainRefusalCode(text string) int64 {
	switch {
	case strings.Contains(text, "unsupported") || strings.Contains(text, "not handled"):
		return jsonrpc.CodeMethodNotFound
	case strings.Contains(text, "malformed") || strings.Contains(text, "invalid character") ||
		strings.Contains(text, "unexpected end") || strings.Contains(text, "parse"):
		return jsonrpc.CodeParseError
	}
	return jsonrpc.CodeInvalidRequest
}
