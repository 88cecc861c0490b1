package apperr

import (
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// RPCCode is the JSON-RPC error code an MCP edge answers for code c (JSON-RPC 2.0 §5.1),
// next to HTTPStatus and reproducing what the gateway answers today:
//
//   - -32603 internal error (jsonrpc.CodeInternalError) for INTERNAL_ERROR and every
//     5xx-class code (UNAVAILABLE, UPSTREAM_UNAVAILABLE, UPSTREAM_ERROR, UPSTREAM_TIMEOUT):
//     the gateway's or the upstream's fault, never the request's; RPC puts the envelope
//     code, the retryable flag and an errorId in the error's data;
//   - -32600 invalid request (jsonrpc.CodeInvalidRequest) for every 4xx-class code
//     (VALIDATION_ERROR, UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, CONFLICT,
//     INVALID_REFERENCE, RATE_LIMITED, PAYLOAD_TOO_LARGE): the edge refuses the HTTP
//     request as a whole (bad header, no access, no such server, body too large) before
//     any method runs, so the request, not a param, is what is wrong.
//
// Method-level codes are not kinds of *Error and are built where they arise: -32602
// invalid params and -32601 method not found by the gateway, -32002 resource not found
// (MCP "resources/read") and -32042 URL elicitation required (MCP 2025-11-25) by go-sdk
// and shared/upstreamauth. An unknown code is INTERNAL_ERROR's -32603.
func (c Code) RPCCode() int64 {
	switch c {
	case Validation, Unauthenticated, Forbidden, NotFound, Conflict, InvalidReference,
		RateLimited, PayloadTooLarge:
		return jsonrpc.CodeInvalidRequest
	default: // Internal, Unavailable, UpstreamUnavailable, UpstreamError, UpstreamTimeout
		return jsonrpc.CodeInternalError
	}
}

// RPCCode returns the JSON-RPC error code for err: the table of Code.RPCCode for the
// *Error in err's chain; else the code of a *jsonrpc.Error in the chain (an answer already
// in JSON-RPC form, e.g. an upstream's, which an edge passes through); else -32603
// (anything else is INTERNAL_ERROR, see Public).
func RPCCode(err error) int64 {
	if e := As(err); e != nil {
		return e.Code.RPCCode()
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return jsonrpc.CodeInternalError
}

// RPCData is the data member of the JSON-RPC error RPC builds for a 5xx-class failure:
// the envelope code (docs/DESIGN.md §5), whether the same request may be retried, and
// the errorId its log line carries.
// Its members are in the order the gateway has always written them (alphabetical).
type RPCData struct {
	Code      Code   `json:"code"`
	ErrorID   string `json:"errorId,omitempty"`
	Retryable bool   `json:"retryable"`
}

// RPC returns the JSON-RPC error an MCP edge answers for err (nil for a nil err):
//
//   - the *Error in err's chain (or, without one, a *jsonrpc.Error in the chain, returned
//     as is: an upstream's answer passes through unchanged; without either, Public's
//     generic INTERNAL_ERROR) gives code Code.RPCCode and its client-safe Message;
//   - for a -32603 (INTERNAL_ERROR and the 5xx-class codes) data is RPCData
//     {"code","errorId","retryable"}, errorId omitted when errorID is ""; the caller logs
//     err under the same errorID;
//   - for a -32600 (4xx-class codes) there is no data: the message says what is wrong.
//
// Hint and Details are not carried: the JSON-RPC edge has never shown them.
func RPC(err error, errorID string) *jsonrpc.Error {
	if err == nil {
		return nil
	}
	var je *jsonrpc.Error
	if As(err) == nil && errors.As(err, &je) {
		return je
	}
	e := Public(err)
	out := &jsonrpc.Error{Code: e.Code.RPCCode(), Message: e.Message}
	if out.Code == jsonrpc.CodeInternalError {
		out.Data, _ = json.Marshal(RPCData{Code: e.Code, Retryable: e.Retryable(), ErrorID: errorID})
	}
	return out
}
