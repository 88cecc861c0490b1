// Package apperr is the application error type shared by every function: one small set
// of kinds, each mapped exactly once to an envelope code (docs/DESIGN.md §5), an HTTP status for
// the REST functions, and a retryable flag.
//
// An *Error carries a message that is safe to show a client, an optional hint, and the
// wrapped cause that only logs see. Anything that is not an *Error is classified as
// INTERNAL_ERROR with a generic message, so internals never leak.
package apperr

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is an envelope / REST error code (docs/DESIGN.md §5).
type Code string

// The codes of docs/DESIGN.md §5.
const (
	Validation          Code = "VALIDATION_ERROR"
	Unauthenticated     Code = "UNAUTHENTICATED"
	Forbidden           Code = "FORBIDDEN"
	NotFound            Code = "NOT_FOUND"
	Conflict            Code = "CONFLICT"
	InvalidReference    Code = "INVALID_REFERENCE"
	Unavailable         Code = "UNAVAILABLE"
	UpstreamUnavailable Code = "UPSTREAM_UNAVAILABLE"
	UpstreamTimeout     Code = "UPSTREAM_TIMEOUT"
	UpstreamError       Code = "UPSTREAM_ERROR"
	RateLimited         Code = "RATE_LIMITED"
	PayloadTooLarge     Code = "PAYLOAD_TOO_LARGE"
	Internal            Code = "INTERNAL_ERROR"
)

// Codes are every code, in the order of their declaration (the OpenAPI document's enum
// of error.code).
var Codes = []Code{Validation, Unauthenticated, Forbidden, NotFound, Conflict, InvalidReference, Unavailable,
	UpstreamUnavailable, UpstreamTimeout, UpstreamError, RateLimited, PayloadTooLarge, Internal}

// HTTPStatus is the REST status for code c: 400, 401, 403, 404, 409, 422, 503, 502, 504,
// 429, 413 or 500.
func (c Code) HTTPStatus() int {
	switch c {
	case Validation:
		return http.StatusBadRequest
	case Unauthenticated:
		return http.StatusUnauthorized
	case Forbidden:
		return http.StatusForbidden
	case NotFound:
		return http.StatusNotFound
	case Conflict:
		return http.StatusConflict
	case InvalidReference:
		return http.StatusUnprocessableEntity
	case Unavailable, UpstreamUnavailable:
		return http.StatusServiceUnavailable
	case UpstreamError:
		return http.StatusBadGateway
	case UpstreamTimeout:
		return http.StatusGatewayTimeout
	case RateLimited:
		return http.StatusTooManyRequests
	case PayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	default:
		return http.StatusInternalServerError
	}
}

// Retryable reports whether a client may retry the same request unchanged.
func (c Code) Retryable() bool {
	switch c {
	case Unavailable, UpstreamUnavailable, UpstreamTimeout, RateLimited:
		return true
	}
	return false
}

// Error is an application error with a client-safe message.
type Error struct {
	Code    Code
	Message string // safe to show the client
	Hint    string // optional: what the client can do about it
	Details any    // optional: structured, client-safe details (e.g. field errors)
	Cause   error  // for logs only; never shown
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Retryable reports the code's retryable flag.
func (e *Error) Retryable() bool { return e.Code.Retryable() }

// WithHint returns e with hint set (e is modified and returned for chaining).
func (e *Error) WithHint(hint string) *Error { e.Hint = hint; return e }

// WithDetails returns e with details set.
func (e *Error) WithDetails(d any) *Error { e.Details = d; return e }

// New returns an *Error with code and a client-safe message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with code and message whose cause is err.
func Wrap(err error, code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Cause: err}
}

// As returns the first *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// CodeOf returns the code of the first *Error in err's chain, or Internal.
func CodeOf(err error) Code {
	if e := As(err); e != nil {
		return e.Code
	}
	return Internal
}

// Public is what an edge shows a client for err: the *Error in its chain, or a generic
// INTERNAL_ERROR with no detail of the cause.
func Public(err error) *Error {
	if e := As(err); e != nil {
		return e
	}
	return &Error{Code: Internal, Message: "internal error", Cause: err}
}
