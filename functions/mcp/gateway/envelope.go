package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
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

// EnvelopeMeta names the tool and its version; it is stamped in seal and nowhere else.
type EnvelopeMeta struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
}

// toolError classifies err into the failure body (the seed's toolError): an
// *apperr.Error keeps its code, message and hint; a driver error is translated by
// db.Interpret (no rows → NOT_FOUND, unique violation → CONFLICT, foreign-key violation →
// INVALID_REFERENCE, connection failures → UNAVAILABLE, retryable); a JSON-RPC error from
// an upstream is UPSTREAM_ERROR; a deadline is UPSTREAM_TIMEOUT; anything else is
// INTERNAL_ERROR with a generic message. errorID is set for INTERNAL_ERROR and every
// 5xx-class code so that the log line can be found.
func toolError(err error, errorID string) *EnvelopeError {
	e := classify(err)
	out := &EnvelopeError{Code: e.Code, Message: e.Message, Retryable: e.Retryable(), Hint: e.Hint, Details: e.Details}
	if e.Code == apperr.Internal || e.Code.HTTPStatus() >= 500 {
		out.ErrorID = errorID
	}
	return out
}

// classify returns the *apperr.Error a client is shown for err.
func classify(err error) *apperr.Error {
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

// seal builds the tool result for a built-in outcome: the envelope as JSON text content
// and as structuredContent, isError on failure. It is the only place that writes meta.
func seal(meta EnvelopeMeta, data any, fail *EnvelopeError) *mcp.CallToolResult {
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
