package logx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Field names one annotation of the access record (Annotate). Each is written under its
// key: FieldWorkspace "workspace", FieldPrincipal "principal", FieldErrorID "error_id",
// FieldMCPMethod "mcp_method", FieldTool "tool", FieldConnectionID "connection_id",
// FieldOutcome "outcome", FieldRPCCode "rpc_code", FieldRoute "route", FieldTraceID
// "trace_id".
type Field uint8

const (
	// FieldWorkspace is the workspace id the request acted in.
	FieldWorkspace Field = iota
	// FieldPrincipal is the principal's subject (the JWT "sub"), never the token.
	FieldPrincipal
	// FieldErrorID is the errorId a client was given (REST error body or tool envelope).
	FieldErrorID
	// FieldMCPMethod is the JSON-RPC method of an MCP request ("tools/call", …).
	FieldMCPMethod
	// FieldTool is the exposed tool name of a tools/call (mcp_<server>_<tool> or agentpack_*).
	FieldTool
	// FieldConnectionID is the connection id of a proxied tool call.
	FieldConnectionID
	// FieldOutcome is the MCP outcome: "ok", "tool_error" (isError / envelope ok:false),
	// "rpc_error" (a JSON-RPC error answer) or "error".
	FieldOutcome
	// FieldRPCCode is the JSON-RPC error code ("-32602") or the envelope error code
	// ("FORBIDDEN") behind a non-ok outcome.
	FieldRPCCode
	// FieldRoute overrides the route (by default the matched http.ServeMux pattern, else
	// API Gateway's routeKey).
	FieldRoute
	// FieldTraceID is the OpenTelemetry trace id of the request's span (shared/telemetry
	// sets it when tracing is on).
	FieldTraceID
	numFields
)

var fieldKeys = [numFields]string{"workspace", "principal", "error_id", "mcp_method", "tool",
	"connection_id", "outcome", "rpc_code", "route", "trace_id"}

// String returns the field's log key.
func (f Field) String() string {
	if f < numFields {
		return fieldKeys[f]
	}
	return "field" + strconv.Itoa(int(f))
}

// access is the mutable access record of one request; handlers annotate it through
// Annotate (it is safe for concurrent use: go-sdk may run a handler on another goroutine).
type access struct {
	mu        sync.Mutex
	requestID string
	fields    [numFields]string
}

type accessKey struct{}

func accessFrom(ctx context.Context) *access {
	a, _ := ctx.Value(accessKey{}).(*access)
	return a
}

func (a *access) setRequestID(id string) {
	a.mu.Lock()
	a.requestID = id
	a.mu.Unlock()
}

// Annotate sets field f of the access record of ctx's request to value (the last value
// wins). It does nothing when ctx carries no record (no AccessLog around the handler), so
// handlers can call it unconditionally. Values must be ids, names and codes: never a
// header value, a token, a tool argument or a URL with its query.
func Annotate(ctx context.Context, f Field, value string) {
	a := accessFrom(ctx)
	if a == nil || f >= numFields {
		return
	}
	a.mu.Lock()
	a.fields[f] = value
	a.mu.Unlock()
}

// Annotated returns the value of field f of ctx's access record, or "".
func Annotated(ctx context.Context, f Field) string {
	a := accessFrom(ctx)
	if a == nil || f >= numFields {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fields[f]
}

// AccessMessage is the msg of every access line.
const AccessMessage = "access"

// AccessLog wraps next so that each request writes exactly one access line to logger at
// info level, after next returns:
//
//	{"level":"INFO","msg":"access","route":"POST /mcp/{workspaceId}","method":"POST",
//	 "status":200,"duration_ms":1.93,"bytes":312,"request_id":…,"lambda_request_id":…,
//	 "apigw_request_id":…,"workspace":…,"principal":…,"mcp_method":"tools/call",
//	 "tool":…,"connection_id":…,"outcome":"ok",…}
//
// route, method, status, duration_ms (float, milliseconds) and bytes (response body bytes
// written) are always present; request_id is always present (the one of ctx, else a new
// one); the other keys appear when known (Annotate, WithRequestIDs, a sampled span's
// trace_id). The request's path beyond its route, its query and its headers are never
// logged. The request id is set as X-Request-Id on the response unless next sets its own.
func AccessLog(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx := r.Context()
		a := &access{requestID: RequestID(ctx)}
		if a.requestID == "" {
			a.requestID = NewID()
			ctx = context.WithValue(ctx, requestIDKey{}, a.requestID)
		}
		w.Header().Set("X-Request-Id", a.requestID)
		ctx = context.WithValue(ctx, accessKey{}, a)
		rw := &statusWriter{ResponseWriter: w}
		r2 := r.WithContext(ctx)
		defer func() {
			// After a panic too (httpapi.Recover usually answers first; when nothing
			// did, the line says 500 and the panic goes on).
			p := recover()
			status := rw.status
			if status == 0 {
				status = http.StatusOK
				if p != nil {
					status = http.StatusInternalServerError
				}
			}
			if p != nil {
				defer panic(p)
			}
			a.mu.Lock()
			f := a.fields
			id := a.requestID
			a.mu.Unlock()
			route := f[FieldRoute]
			if route == "" {
				route = r2.Pattern
			}
			if route == "" {
				route = apigwRoute(ctx)
			}
			attrs := make([]slog.Attr, 0, 8+numFields)
			attrs = append(attrs,
				slog.String("route", route),
				slog.String("method", r.Method),
				slog.Int("status", status),
				slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.Int64("bytes", rw.bytes))
			for i, v := range f {
				if v != "" && Field(i) != FieldRoute {
					attrs = append(attrs, slog.String(fieldKeys[i], v))
				}
			}
			// request_id of the record (a handler may have replaced it with WithRequestID).
			lctx := context.WithValue(ctx, requestIDKey{}, id)
			logger.LogAttrs(lctx, slog.LevelInfo, AccessMessage, attrs...)
		}()
		next.ServeHTTP(rw, r2)
	})
}

type routeKey struct{}

// WithRouteKey returns ctx carrying API Gateway's routeKey of the request (e.g.
// "ANY /mcp/{workspaceId}"), which AccessLog uses as route when no http.ServeMux pattern
// matched and no handler annotated FieldRoute.
func WithRouteKey(ctx context.Context, key string) context.Context {
	if key == "" {
		return ctx
	}
	return context.WithValue(ctx, routeKey{}, key)
}

func apigwRoute(ctx context.Context) string {
	s, _ := ctx.Value(routeKey{}).(string)
	return s
}

// NewID returns a random 16-hex-digit id (request id, errorId).
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusWriter records the status and the number of body bytes written. Unwrap lets
// http.ResponseController reach the underlying writer; Flush is explicit because go-sdk
// and the gateway's SSE relay type-assert http.Flusher.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
