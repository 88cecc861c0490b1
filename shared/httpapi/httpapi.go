// Package httpapi holds what the REST functions share: JSON responses, the error body
// {"error": {"code", "message", "hint"?, "errorId"?, "details"?}} with the status of its
// code (docs/DESIGN.md §5), strict JSON body decoding with a size limit, bearer authentication,
// and request ids.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// MaxBodyBytes is the largest REST request body accepted (1 MiB).
const MaxBodyBytes = 1 << 20

// JSON writes v as JSON with status.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ErrorBody is the REST error shape.
type ErrorBody struct {
	Code    apperr.Code `json:"code"`
	Message string      `json:"message"`
	Hint    string      `json:"hint,omitempty"`
	ErrorID string      `json:"errorId,omitempty"`
	Details any         `json:"details,omitempty"`
}

// Error writes err as the REST error body with its code's status. Unclassified errors
// become INTERNAL_ERROR with a generic message and an errorId, logged (with the cause)
// under the same id; 5xx errors are logged, 4xx are not.
func Error(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away: not a server error
	}
	e := apperr.Public(err)
	body := ErrorBody{Code: e.Code, Message: e.Message, Hint: e.Hint, Details: e.Details}
	status := e.Code.HTTPStatus()
	if status >= 500 {
		body.ErrorID = NewID()
		logx.Annotate(r.Context(), logx.FieldErrorID, body.ErrorID)
		logger.ErrorContext(r.Context(), "request failed", "error_id", body.ErrorID, "code", e.Code,
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	if e.Code == apperr.Unauthenticated {
		w.Header().Set("WWW-Authenticate", `Bearer`)
	}
	if ra, ok := e.Details.(RetryAfterer); ok && e.Code == apperr.RateLimited {
		w.Header().Set("Retry-After", strconv.Itoa(max(ra.RetryAfter(), 1))) // RFC 9110 §10.2.3, seconds
	}
	JSON(w, status, map[string]any{"error": body})
}

// RetryAfterer is an error's Details that know when to retry: RetryAfter is in whole
// seconds. A RATE_LIMITED error whose details implement it is answered 429 with a
// Retry-After header (docs/RATE-LIMITS.md; shared/ratelimit.RefusalDetails).
type RetryAfterer interface{ RetryAfter() int }

// Decode reads r's JSON body into v: at most MaxBodyBytes, unknown fields refused, one
// value only. Failures are VALIDATION_ERROR (PAYLOAD_TOO_LARGE for an oversized body).
func Decode(w http.ResponseWriter, r *http.Request, v any) error {
	r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return apperr.New(apperr.PayloadTooLarge, "request body exceeds %d bytes", MaxBodyBytes)
		}
		if errors.Is(err, io.EOF) {
			return apperr.New(apperr.Validation, "request body is empty")
		}
		return apperr.Wrap(err, apperr.Validation, "malformed JSON body: %s", jsonErrText(err))
	}
	if dec.More() {
		return apperr.New(apperr.Validation, "request body holds more than one JSON value")
	}
	return nil
}

func jsonErrText(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		if te.Field == "" {
			return "the body must be " + jsonKind(te.Type)
		}
		return fmt.Sprintf("field %q must be %s", te.Field, jsonKind(te.Type))
	}
	if text, ok := unknownField(err); ok {
		return text
	}
	return "invalid JSON"
}

// jsonKind names the JSON type a Go type decodes from ("a string", "an object", …), so
// that a message speaks JSON and never names a Go type (such as `connections.CreateInput` or
// `map[string]string`).
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a JSON value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "an object of strings"
		}
		return "an object"
	case reflect.Struct:
		return "an object"
	}
	return "a JSON value"
}

// unknownField returns `unknown field "name"` when err is encoding/json's refusal of a
// field under DisallowUnknownFields. The standard library has no type or sentinel for it
// (encoding/json decode.go builds it with fmt.Errorf), so this is the one place that reads
// its text; TestDecodeUnknownField pins the text for the Go release in use.
func unknownField(err error) (string, bool) {
	if rest, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + rest, true
	}
	return "", false
}

// Routes wraps mux so that a request no pattern of mux matches gets the REST error body
// instead of net/http's plain text: 404 NOT_FOUND naming the method and path, or — when
// the path exists under other methods — 405 with an Allow header (RFC 9110 §15.5.6) and
// code METHOD_NOT_ALLOWED. Matched requests pass through untouched.
func Routes(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// ServeMux answers an unmatched request itself: run that answer into a recorder only
		// to learn whether it is a 404 or a 405 (and the Allow header), then answer in JSON.
		rec := &statusRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r)
		NotMatched(w, r, rec.status, rec.header.Get("Allow"))
	})
}

// NotMatched writes the JSON answer for a request no route matched: status 405 (with
// allow as the Allow header) or else 404.
func NotMatched(w http.ResponseWriter, r *http.Request, status int, allow string) {
	if status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", allow)
		JSON(w, status, map[string]any{"error": ErrorBody{Code: "METHOD_NOT_ALLOWED",
			Message: fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path), Hint: "allowed: " + allow}})
		return
	}
	JSON(w, http.StatusNotFound, map[string]any{"error": ErrorBody{Code: apperr.NotFound,
		Message: fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path), Hint: "the routes are listed in /api/openapi.json"}})
}

// statusRecorder keeps only the status and headers of an answer (Routes).
type statusRecorder struct {
	header http.Header
	status int
}

func (s *statusRecorder) Header() http.Header { return s.header }
func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return len(b), nil
}
func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}

// NewID returns a random 16-hex-digit id (errorId, request id).
func NewID() string { return logx.NewID() }

// BearerToken returns the token of an "Authorization: Bearer <token>" header, or "".
func BearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// GrantChecker says whether a grant of the gateway's authorization server still stands
// (shared/grants.Service).
type GrantChecker interface {
	Active(ctx context.Context, id string) (bool, error)
}

// Bearer is the REST APIs' bearer authentication (docs/AUTH.md "The console"): today's
// JWTs (HS256, JWT_JWKS_URL) and, when Grants is set, the access tokens the gateway's own
// authorization server issues to the console for the REST resource APIResource(base),
// whose grant must still stand. A token of that server for another resource (/mcp) is
// refused, as an /api token is refused by the MCP endpoint.
type Bearer struct {
	Verifier *auth.Verifier
	// PublicBaseURL is the issuer's base (the resource is its /api); "" derives it from
	// the request's scheme (X-Forwarded-Proto) and host, as the authorization server does.
	PublicBaseURL string
	// Grants, when set, admits the authorization server's tokens for the REST resource;
	// nil refuses them all.
	Grants GrantChecker
}

// APIResource is the REST API's resource (RFC 8707) for issuer base: the audience of the
// console's access tokens.
func APIResource(base string) string { return base + "/api" }

// BaseURL is public when set, else the request's scheme and host (https when r came over
// TLS or with X-Forwarded-Proto: https).
func BaseURL(public string, r *http.Request) string {
	if public != "" {
		return public
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Authenticate wraps next so that only requests with a valid bearer token reach it; the
// principal is put in the request context (auth.FromContext). Errors (401 with the REST
// error body): no token; a token the verifier refuses (auth.Verifier's
// messages, "token is for another resource" among them); a console token whose grant was
// revoked ("the sign-in behind this token was revoked"). A failed grant read is 500.
func (b Bearer) Authenticate(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := BearerToken(r)
		if tok == "" {
			Error(w, r, logger, apperr.New(apperr.Unauthenticated, "missing bearer token").
				WithHint("send Authorization: Bearer <token>"))
			return
		}
		resource := ""
		if b.Grants != nil {
			resource = APIResource(BaseURL(b.PublicBaseURL, r))
		}
		p, err := b.Verifier.VerifyResource(r.Context(), tok, resource)
		if err == nil && p.Grant != "" {
			var ok bool
			if ok, err = b.Grants.Active(r.Context(), p.Grant); err == nil && !ok {
				err = apperr.New(apperr.Unauthenticated, "the sign-in behind this token was revoked").
					WithHint("sign in to the console again")
			}
		}
		if err != nil {
			Error(w, r, logger, err)
			return
		}
		logx.Annotate(r.Context(), logx.FieldPrincipal, p.Subject)
		next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	})
}

// RequestID wraps next so that every request has a request id in its context (logx
// RequestID, logged as request_id) and echoed as X-Request-Id: the one the context
// already carries (shared/lambdaapp and logx.AccessLog set it; the request then passes
// through unchanged), else the invocation's Lambda request id (lambdacontext, the
// awsRequestId of the platform's REPORT line), else a new random id. An inbound
// X-Request-Id header is never used: a client could forge it.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if logx.RequestID(r.Context()) != "" {
			next.ServeHTTP(w, r)
			return
		}
		id := ""
		if lc, ok := lambdacontext.FromContext(r.Context()); ok {
			id = lc.AwsRequestID
		}
		if id == "" {
			id = NewID()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(logx.WithRequestID(r.Context(), id)))
	})
}

// Recover turns a panic in next into a 500 INTERNAL_ERROR with an errorId (logged with
// the panic value), so one bad request never kills a warm process.
func Recover(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				Error(w, r, logger, fmt.Errorf("panic: %v", p))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
