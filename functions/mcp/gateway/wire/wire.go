// Package wire is the one place the gateway produces what it answers on its own account
// (docs/ARCHITECTURE.md): the built-in tools' envelope (docs/DESIGN.md §5) and every
// JSON-RPC error and response object the edge writes itself. Results and errors that
// come from an upstream pass through as the upstream's bytes and are not made here.
//
// The rule for errors: a refusal of the request is the JSON-RPC code that names it
// (-32600, -32601, -32602); a failure on the gateway's side is -32603 whose data carries
// the envelope code, the retryable flag and an errorId, and the same errorId is in the
// log line (Internal, Failure).
package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/text"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Envelope is the one response shape of every built-in tool (docs/DESIGN.md §5).
type Envelope struct {
	OK    bool           `json:"ok"`
	Data  any            `json:"data,omitempty"`
	Error *EnvelopeError `json:"error,omitempty"`
	Meta  EnvelopeMeta   `json:"meta"`
}

// EnvelopeError is the failure half of the envelope.
type EnvelopeError struct {
	Code      apperr.Code `json:"code"`
	Message   string      `json:"message"`
	Retryable bool        `json:"retryable"`
	Hint      string      `json:"hint,omitempty"`
	ErrorID   string      `json:"errorId,omitempty"`
	Details   any         `json:"details,omitempty"`
}

// EnvelopeMeta names the tool and its version; it is stamped in Seal and nowhere else.
type EnvelopeMeta struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
}

// ToolError classifies err into the failure body of docs/DESIGN.md §5: an
// *apperr.Error keeps its code, message and hint; a driver error is translated by
// db.Interpret (no rows → NOT_FOUND, unique violation → CONFLICT, foreign-key violation →
// INVALID_REFERENCE, connection failures → UNAVAILABLE, retryable); a JSON-RPC error from
// an upstream is UPSTREAM_ERROR; a deadline is UPSTREAM_TIMEOUT; anything else is
// INTERNAL_ERROR with a generic message. errorID is set for INTERNAL_ERROR and every
// 5xx-class code so that the log line can be found.
func ToolError(err error, errorID string) *EnvelopeError {
	e := Classify(err)
	out := &EnvelopeError{Code: e.Code, Message: e.Message, Retryable: e.Retryable(), Hint: e.Hint, Details: e.Details}
	if e.Code == apperr.Internal || e.Code.HTTPStatus() >= 500 {
		out.ErrorID = errorID
	}
	return out
}

// Classify returns the *apperr.Error a client is shown for err (see ToolError).
func Classify(err error) *apperr.Error {
	if e := apperr.As(err); e != nil {
		return e
	}
	var je *jsonrpc.Error
	switch {
	case errors.As(err, &je):
		return apperr.Wrap(err, apperr.UpstreamError, "the upstream server answered an error")
	case errors.Is(err, context.DeadlineExceeded):
		return apperr.Wrap(err, apperr.UpstreamTimeout, "the operation timed out")
	}
	return apperr.Public(db.Interpret(err))
}

// UpstreamFailure is ToolError for a proxied call the gateway could not complete (the
// upstream unreachable, timing out, refusing the session): an unclassified error is
// UPSTREAM_ERROR "upstream <what> failed", not INTERNAL_ERROR — the gateway did its part.
func UpstreamFailure(err error, errorID, what string) *EnvelopeError {
	fail := ToolError(err, errorID)
	if fail.Code == apperr.Internal {
		fail.Code, fail.Message, fail.Retryable = apperr.UpstreamError, "upstream "+what+" failed", false
	}
	return fail
}

// Seal builds the tool result for an outcome: the envelope as JSON text content and as
// structuredContent, isError on failure. It is the only place that writes meta.
func Seal(meta EnvelopeMeta, data any, fail *EnvelopeError) *mcp.CallToolResult {
	env := Envelope{OK: fail == nil, Data: data, Error: fail, Meta: meta}
	if env.OK && env.Data == nil {
		env.Data = map[string]any{}
	}
	raw, err := json.Marshal(env)
	if err != nil { // data that cannot be encoded is a server bug
		env = Envelope{OK: false, Meta: env.Meta, Error: &EnvelopeError{Code: apperr.Internal, Message: "internal error"}}
		raw, _ = json.Marshal(env)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(raw)}},
		StructuredContent: json.RawMessage(raw),
		IsError:           !env.OK,
	}
}

// SealJSON is Seal encoded as a tools/call result.
func SealJSON(meta EnvelopeMeta, fail *EnvelopeError) json.RawMessage {
	b, _ := json.Marshal(Seal(meta, nil, fail)) // a sealed failure always encodes
	return b
}

// InvalidParams is the -32602 refusal of a request's params, message prefixed as go-sdk
// does ("invalid params: …").
func InvalidParams(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + msg}
}

// Refusal is a JSON-RPC error with code and message as given (no data).
func Refusal(code int64, msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: msg}
}

// Internal logs err (or a recovered panic value) under a new errorId, annotates the
// access line with it, and returns the -32603 "internal error" the client gets:
// apperr.RPC's, data {"code":"INTERNAL_ERROR","errorId":…,"retryable":false}. method names
// what was being served.
func Internal(ctx context.Context, log *slog.Logger, method string, err error, panicValue any) *jsonrpc.Error {
	id := httpapi.NewID()
	logx.Annotate(ctx, logx.FieldErrorID, id)
	logx.Annotate(ctx, logx.FieldOutcome, "error")
	if panicValue != nil {
		log.ErrorContext(ctx, "panic in MCP method", "error_id", id, "method", method, "panic", panicValue)
	} else {
		log.ErrorContext(ctx, "MCP method failed", "error_id", id, "method", method, "err", err)
	}
	return apperr.RPC(apperr.Wrap(err, apperr.Internal, "internal error"), id)
}

// Failure is the -32603 answer for a method the gateway could not complete on the
// client's behalf (an upstream unreachable or refusing, a connection removed meanwhile,
// the database down): message is the envelope's (safe to show) and data is
// apperr.RPCData {code, errorId, retryable} — the same data apperr.RPC gives a 5xx-class
// error, here whatever the code, because the request itself was valid. The caller logs
// errorId.
func Failure(fail *EnvelopeError, errorID string) *jsonrpc.Error {
	data, _ := json.Marshal(apperr.RPCData{Code: fail.Code, Retryable: fail.Retryable, ErrorID: errorID})
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fail.Message, Data: data}
}

// Refuse is the HTTP-level answer for err, an *apperr.Error refusing the request before
// any method runs (bad token, no access, no such server …): its HTTP status and the
// JSON-RPC error of apperr's table (apperr.RPC: -32600 with the message for 4xx-class
// codes; -32603 with {code, errorId, retryable} for 5xx-class ones, errorID being the id
// the caller logged).
func Refuse(w http.ResponseWriter, err error, errorID string) {
	WriteHTTP(w, apperr.Public(err).Code.HTTPStatus(), nil, apperr.RPC(err, errorID))
}

// Response encodes a JSON-RPC response object with id (null when nil): result as given
// (json.RawMessage / []byte as they are, anything else encoded without HTML escaping),
// else rerr (a *jsonrpc.Error as it is; anything else, a bug, is -32603 "internal error").
func Response(id json.RawMessage, result any, rerr error) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	if len(id) == 0 {
		buf.WriteString("null")
	} else {
		buf.Write(id)
	}
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if rerr != nil {
		var je *jsonrpc.Error
		if !errors.As(rerr, &je) {
			je = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
		}
		buf.WriteString(`,"error":`)
		_ = enc.Encode(je)
	} else {
		buf.WriteString(`,"result":`)
		switch v := result.(type) {
		case json.RawMessage:
			buf.Write(v)
		case []byte:
			buf.Write(v)
		default:
			if err := enc.Encode(v); err != nil {
				return Response(id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"})
			}
		}
	}
	out := bytes.TrimRight(buf.Bytes(), "\n")
	return append(out, '}')
}

// ErrorStatus is the HTTP status of a JSON-RPC error answer at protocol 2026-07-28
// (SEP-2575, as go-sdk's own streamable handler applies it): 404 for -32601 (method not
// found), 400 for -32602 (invalid params), -32022 (unsupported protocol version), -32021
// (missing required client capabilities) and -32020 (header mismatch, as the edge answers
// it before any handler), 200 for every other code. Earlier
// revisions answer every JSON-RPC error with 200.
func ErrorStatus(code int64) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities, mcp.CodeHeaderMismatch:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// Write answers 200 with Response(id, result, rerr) as application/json.
func Write(w http.ResponseWriter, id json.RawMessage, result any, rerr error) {
	out := Response(id, result, rerr)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// WriteHTTP answers an HTTP-level refusal (before or instead of JSON-RPC handling) with
// status and a JSON-RPC error body, so that MCP clients can show the message: rerr under
// id (null when nil).
func WriteHTTP(w http.ResponseWriter, status int, id json.RawMessage, rerr *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(Response(id, nil, rerr), '\n'))
}

// UnsupportedVersion is the answer to an MCP-Protocol-Version header the gateway does not
// serve (requested): UnsupportedProtocolVersionError (-32022, HTTP 400 with WriteHTTP)
// whose message names the supported versions in go-sdk's words ("Unsupported protocol
// version (supported versions: …)") and whose data carries them (supported, requested), as
// the 2026-07-28 transport chapter ("Protocol Version Header") describes.
func UnsupportedVersion(requested string) *jsonrpc.Error {
	sup := mcp.SupportedProtocolVersions()
	data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: sup, Requested: requested})
	return &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Data: data,
		Message: fmt.Sprintf("Unsupported protocol version %q (supported versions: %s)", text.Clip(requested, 64), strings.Join(sup, ", "))}
}

// WriteInvalidRequest is WriteHTTP with -32600 and msg, id null.
func WriteInvalidRequest(w http.ResponseWriter, status int, msg string) {
	WriteHTTP(w, status, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg})
}
