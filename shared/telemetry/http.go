package telemetry

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/agentpack/gateway/shared/logx"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const codesError = codes.Error

func typeName(err error) string { return fmt.Sprintf("%T", err) }

// spanFields are the access-record fields copied onto the request span as
// agentpack.<key> attributes (ids, names and codes only).
var spanFields = []logx.Field{logx.FieldWorkspace, logx.FieldMCPMethod, logx.FieldTool,
	logx.FieldConnectionID, logx.FieldOutcome, logx.FieldRPCCode, logx.FieldErrorID}

// Middleware wraps next with a server span per request, the child of the request's W3C
// traceparent when it has one. The span is named "<METHOD> <route>" (the matched
// http.ServeMux pattern) and carries http.request.method, http.route, url.path,
// http.response.status_code, the Lambda and API Gateway request ids
// (faas.invocation_id, aws.apigateway.request_id) and the access-record annotations of
// logx (agentpack.workspace, agentpack.tool, …); a 5xx marks it failed. Put it inside
// logx.AccessLog: it annotates the record's trace_id and passes the matched route back.
// With tracing off the request passes through untouched.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := current.Load()
		if s == nil {
			next.ServeHTTP(w, r)
			return
		}
		ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		attrs := []attribute.KeyValue{
			attribute.String("http.request.method", r.Method),
			attribute.String("url.path", r.URL.Path),
		}
		if l, a := logx.RequestIDs(ctx); l != "" || a != "" {
			if l != "" {
				attrs = append(attrs, attribute.String("faas.invocation_id", l))
			}
			if a != "" {
				attrs = append(attrs, attribute.String("aws.apigateway.request_id", a))
			}
		}
		ctx, span := s.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		logx.Annotate(ctx, logx.FieldTraceID, span.SpanContext().TraceID().String())
		sw := &statusRecorder{ResponseWriter: w}
		r2 := r.WithContext(ctx)
		next.ServeHTTP(sw, r2)
		if r2.Pattern != "" {
			r.Pattern = r2.Pattern // for logx.AccessLog, which holds r
			span.SetName(spanName(r.Method, r2.Pattern))
			span.SetAttributes(attribute.String("http.route", r2.Pattern))
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		for _, f := range spanFields {
			if v := logx.Annotated(ctx, f); v != "" {
				span.SetAttributes(attribute.String("agentpack."+f.String(), v))
			}
		}
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	})
}

// spanName is "<METHOD> <route>", or the pattern alone when it already names its method
// ("GET /health").
func spanName(method, pattern string) string {
	if len(pattern) > len(method) && pattern[:len(method)] == method && pattern[len(method)] == ' ' {
		return pattern
	}
	return method + " " + pattern
}

// Transport returns an http.RoundTripper (base, or http.DefaultTransport when nil) that
// wraps each outbound request in a client span named "<METHOD> upstream" and injects the
// span's W3C traceparent (and tracestate) into a copy of the request's headers. The span
// records http.request.method, server.address, server.port, url.scheme and
// http.response.status_code — never the URL's path or query (some MCP servers take an
// API key there) nor a header. A transport error marks the span failed with error.type
// only. The span ends when the response headers arrive. With tracing off requests pass
// through untouched.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base}
}

type transport struct{ base http.RoundTripper }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	s := current.Load()
	if s == nil {
		return t.base.RoundTrip(req)
	}
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[req.URL.Scheme]
	}
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", req.Method),
		attribute.String("server.address", host),
		attribute.String("url.scheme", req.URL.Scheme),
	}
	if p, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, attribute.Int("server.port", p))
	}
	ctx, span := s.tracer.Start(req.Context(), req.Method+" upstream", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrs...))
	defer span.End()
	req = req.Clone(ctx)
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		Fail(span, "upstream request failed", err)
		return resp, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
	}
	return resp, nil
}

// statusRecorder records the status; Unwrap and Flush keep http.ResponseController and
// http.Flusher type assertions working.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusRecorder) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
