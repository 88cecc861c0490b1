// Package logx builds the JSON slog logger every function uses and carries request-scoped
// data through contexts: the request ids (the function's request id, the Lambda request id
// and the API Gateway request id), which every *Context log call adds to its line, and the
// access record that AccessLog writes as one line per request. Keys are stable: err,
// request_id, lambda_request_id, apigw_request_id, trace_id, tool, connection_id,
// duration_ms, error_id (docs/OPERATIONS.md). Header values and tokens are never logged
// (an http.Header attribute goes through headers.ScrubHTTP),
// and every URL in a message, a string or an error is written through headers.ScrubURLs
// (query values, userinfo and fragment redacted): net/http and go-sdk quote the whole
// upstream URL in their errors, and some upstreams take an API key in the query.
package logx

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/agentpack/gateway/shared/headers"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"go.opentelemetry.io/otel/trace"
)

// New returns a JSON logger writing to w (os.Stdout when nil) at level ("debug", "info",
// "warn", "error"; default info). Lines logged with a *Context call carry the request ids
// of the context (request_id, lambda_request_id, apigw_request_id) and, when a sampled
// OpenTelemetry span is active, its trace_id. go-sdk's per-request session lifecycle
// lines ("server session connected", …) are dropped: in the gateway's stateless mode
// every request opens and closes a session with an empty id, which is noise.
func New(w io.Writer, level string) *slog.Logger {
	if w == nil {
		w = os.Stdout
	}
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	}
	return slog.New(&ctxHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})})
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id that every log line made with a
// *Context call will include as request_id. When ctx holds an access record (AccessLog),
// the record's request_id becomes id too, so the access line and the handler's lines
// agree.
func WithRequestID(ctx context.Context, id string) context.Context {
	if a := accessFrom(ctx); a != nil {
		a.setRequestID(id)
	}
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id carried by ctx, or "".
func RequestID(ctx context.Context) string {
	s, _ := ctx.Value(requestIDKey{}).(string)
	return s
}

type platformIDsKey struct{}

type platformIDs struct{ lambda, apigw string }

// WithRequestIDs returns ctx carrying the Lambda request id (the invocation's
// awsRequestId, as in the platform's START/END/REPORT lines) and the API Gateway request
// id ($context.requestId, as in API Gateway's access logs). Either may be "" (locally
// both are). Every *Context log line carries them as lambda_request_id and
// apigw_request_id.
func WithRequestIDs(ctx context.Context, lambdaID, apigwID string) context.Context {
	if lambdaID == "" && apigwID == "" {
		return ctx
	}
	return context.WithValue(ctx, platformIDsKey{}, platformIDs{lambdaID, apigwID})
}

// RequestIDs returns the Lambda request id and the API Gateway request id carried by ctx
// ("" for each one absent). shared/lambdaapp puts them there from the Lambda context and
// the HTTP API v2 request context, never from request headers; without them the Lambda
// context of an event invocation still gives the Lambda request id.
func RequestIDs(ctx context.Context) (lambdaID, apigwID string) {
	if v, ok := ctx.Value(platformIDsKey{}).(platformIDs); ok {
		return v.lambda, v.apigw
	}
	if lc, ok := lambdacontext.FromContext(ctx); ok { // event functions (health check)
		return lc.AwsRequestID, ""
	}
	return "", ""
}

// noise are go-sdk's session lifecycle messages (mcp/server.go, v1.8.0), logged at info
// for every stateless request.
var noise = map[string]bool{
	"server session connected":    true,
	"server session disconnected": true,
	"session initialized":         true,
}

type ctxHandler struct{ slog.Handler }

func (h *ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && noise[r.Message] {
		return nil
	}
	out := slog.NewRecord(r.Time, r.Level, headers.ScrubURLs(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(scrubAttr(a))
		return true
	})
	if id := RequestID(ctx); id != "" {
		out.AddAttrs(slog.String("request_id", id))
	}
	if l, a := RequestIDs(ctx); l != "" || a != "" {
		if l != "" {
			out.AddAttrs(slog.String("lambda_request_id", l))
		}
		if a != "" {
			out.AddAttrs(slog.String("apigw_request_id", a))
		}
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		out.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
	}
	return h.Handler.Handle(ctx, out)
}

func (h *ctxHandler) WithAttrs(as []slog.Attr) slog.Handler {
	scrubbed := make([]slog.Attr, len(as))
	for i, a := range as {
		scrubbed[i] = scrubAttr(a)
	}
	return &ctxHandler{h.Handler.WithAttrs(scrubbed)}
}

// scrubAttr returns a with URLs in its text redacted: strings, errors, fmt.Stringers and
// other values printed as text, and groups member by member; an http.Header goes through
// headers.ScrubHTTP (credential values redacted). Numbers, times and the like pass
// unchanged.
func scrubAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); strings.Contains(s, "://") {
			return slog.String(a.Key, headers.ScrubURLs(s))
		}
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, m := range g {
			out[i] = scrubAttr(m)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		var text string
		switch x := v.Any().(type) {
		case http.Header:
			return slog.Any(a.Key, headers.ScrubHTTP(x))
		case error:
			text = x.Error()
		case fmt.Stringer:
			text = x.String()
		default:
			return slog.Attr{Key: a.Key, Value: v}
		}
		if strings.Contains(text, "://") {
			return slog.String(a.Key, headers.ScrubURLs(text))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (h *ctxHandler) WithGroup(name string) slog.Handler {
	return &ctxHandler{h.Handler.WithGroup(name)}
}

// Discard is a logger that drops everything (for benchmarks).
var Discard = slog.New(slog.DiscardHandler)

// Carry returns dst carrying src's request-scoped logging data — the request id, the
// Lambda and API Gateway request ids and the access record (so Annotate on the result
// annotates src's request) — and nothing else of src. It is for contexts that must not
// inherit src's other values or cancellation, e.g. the gateway's upstream call context.
func Carry(dst, src context.Context) context.Context {
	if id := RequestID(src); id != "" {
		dst = context.WithValue(dst, requestIDKey{}, id)
	}
	if v, ok := src.Value(platformIDsKey{}).(platformIDs); ok {
		dst = context.WithValue(dst, platformIDsKey{}, v)
	}
	if a := accessFrom(src); a != nil {
		dst = context.WithValue(dst, accessKey{}, a)
	}
	return dst
}

// AtLeast returns logger with records below min dropped (attributes and groups added
// later keep the floor). The gateway gives go-sdk's servers AtLeast(log, slog.LevelWarn):
// their Info lines ("server connecting", "session initialized") come once per request
// in stateless mode and say nothing a request's access line does not.
func AtLeast(logger *slog.Logger, min slog.Level) *slog.Logger {
	return slog.New(floorHandler{h: logger.Handler(), min: min})
}

type floorHandler struct {
	h   slog.Handler
	min slog.Level
}

func (f floorHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.h.Enabled(ctx, l)
}
func (f floorHandler) Handle(ctx context.Context, r slog.Record) error { return f.h.Handle(ctx, r) }
func (f floorHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return floorHandler{h: f.h.WithAttrs(as), min: f.min}
}
func (f floorHandler) WithGroup(name string) slog.Handler {
	return floorHandler{h: f.h.WithGroup(name), min: f.min}
}
