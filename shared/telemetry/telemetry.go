// Package telemetry is the OpenTelemetry tracing of every function (official Go SDK, OTLP
// over HTTP). Setup turns it on only when an OTLP endpoint is configured
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); otherwise nothing
// is exported and every helper here costs one atomic load (BenchmarkMiddleware).
//
// What is traced: one server span per HTTP request (Middleware; an incoming W3C
// traceparent is honoured), one span per database query (PgxTracer, github.com/exaring/
// otelpgx), one client span per upstream HTTP request (Transport, which also injects the
// span's traceparent), and any span a caller opens with Start (e.g. a tool dispatch).
//
// Never recorded: header values, tokens, query strings, upstream URL paths, SQL
// parameters, and error texts of upstream calls (a net/url error quotes the URL).
package telemetry

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentpack/gateway/shared/logx"
	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans this package creates.
const ScopeName = "github.com/agentpack/gateway/shared/telemetry"

// FlushTimeout bounds Flush (the per-invocation export under Lambda).
const FlushTimeout = 2 * time.Second

type state struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
}

var current atomic.Pointer[state]

// propagator is W3C Trace Context (traceparent, tracestate) plus W3C Baggage.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Configured reports whether the environment asks for tracing: an OTLP traces endpoint is
// set (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT), and neither
// OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none says otherwise.
func Configured() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") ||
		strings.EqualFold(os.Getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// Setup turns tracing on when Configured: an OTLP/HTTP (protobuf) exporter configured by
// the standard OTEL_EXPORTER_OTLP_* variables, a batch span processor, the sampler of
// OTEL_TRACES_SAMPLER (default: parent-based, always on), and a resource naming service
// (OTEL_SERVICE_NAME overrides it) and the Lambda function. It also installs the tracer
// provider and the W3C propagator as the OpenTelemetry globals. When not Configured it
// does nothing and returns a no-op shutdown. shutdown flushes and stops the exporter.
func Setup(ctx context.Context, service string) (shutdown func(context.Context) error, err error) {
	if !Configured() {
		return func(context.Context) error { return nil }, nil
	}
	client, err := newHTTPClient()
	if err != nil {
		return nil, err
	}
	exp, err := otlptrace.New(ctx, client)
	if err != nil {
		return nil, err
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", service)}
	if fn := os.Getenv("AWS_LAMBDA_FUNCTION_NAME"); fn != "" {
		attrs = append(attrs, attribute.String("faas.name", fn), attribute.String("cloud.provider", "aws"),
			attribute.String("cloud.platform", "aws_lambda"))
		if v := os.Getenv("AWS_LAMBDA_FUNCTION_VERSION"); v != "" {
			attrs = append(attrs, attribute.String("faas.version", v))
		}
		if r := os.Getenv("AWS_REGION"); r != "" {
			attrs = append(attrs, attribute.String("cloud.region", r))
		}
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Use(tp)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagator)
	return func(ctx context.Context) error {
		current.CompareAndSwap(current.Load(), nil)
		return tp.Shutdown(ctx)
	}, nil
}

// Use makes tp the provider of this package's helpers (nil turns tracing off) and returns
// a function restoring the previous one. Setup calls it; tests use it with an in-memory
// or loopback exporter. It does not change the OpenTelemetry globals.
func Use(tp *sdktrace.TracerProvider) (restore func()) {
	var s *state
	if tp != nil {
		s = &state{tp: tp, tracer: tp.Tracer(ScopeName)}
	}
	prev := current.Swap(s)
	return func() { current.Store(prev) }
}

// Enabled reports whether spans are being recorded and exported.
func Enabled() bool { return current.Load() != nil }

// Flush exports the spans ended so far (at most FlushTimeout). Under Lambda it runs at the
// end of every invocation (shared/lambdaapp): the execution environment may be frozen
// right after the answer, with the batch still in memory.
func Flush(ctx context.Context) {
	s := current.Load()
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FlushTimeout)
	defer cancel()
	_ = s.tp.ForceFlush(ctx)
}

// noop is a non-recording span (what trace.SpanFromContext returns for a bare context).
var noop = trace.SpanFromContext(context.Background())

// Start opens an internal span named name as a child of ctx's span, e.g. a tool dispatch:
//
//	ctx, span := telemetry.Start(ctx, "tools/call "+exposed, attribute.String("agentpack.tool", exposed))
//	defer span.End()
//
// With tracing off it returns ctx unchanged and a no-op span. Attribute values must never
// be header values, tokens or tool arguments.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	s := current.Load()
	if s == nil {
		return ctx, noop
	}
	return s.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// Fail marks span as failed with a fixed description (never an error's text, which may
// quote a URL or a value) and the error's Go type as error.type.
func Fail(span trace.Span, description string, err error) {
	if !span.IsRecording() {
		return
	}
	span.SetStatus(codesError, description)
	if err != nil {
		span.SetAttributes(attribute.String("error.type", errType(err)))
	}
}

func errType(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return typeName(err)
}

// PgxTracer returns the query tracer for a pgx pool (otelpgx: a span per query, batch,
// copy, connect and prepare; SQL text with placeholders, never the parameters), or nil
// when tracing is off — set it on pgxpool.Config.ConnConfig.Tracer only when non-nil so
// that an untraced pool has no tracer at all. A pool built while tracing is off stays
// untraced.
func PgxTracer() pgx.QueryTracer {
	s := current.Load()
	if s == nil {
		return nil
	}
	return otelpgx.NewTracer(otelpgx.WithTracerProvider(s.tp),
		otelpgx.WithDisableAcquireTracer())
}

// Inject writes the W3C trace context of ctx's span into set (e.g. a JSON-RPC _meta map
// or header setter): keys "traceparent" and, when present, "tracestate". It does nothing
// when tracing is off or ctx has no span.
func Inject(ctx context.Context, set func(key, value string)) {
	if current.Load() == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	for k, v := range c {
		set(k, v)
	}
}

// Carry returns dst carrying src's current span (so spans started from the result are
// its children and Transport injects their traceparent) and src's request-scoped logging
// data (logx.Carry), and nothing else of src. Use it where a context is rebuilt from
// context.Background() on purpose, e.g. the gateway's upstream call context.
func Carry(dst, src context.Context) context.Context {
	dst = logx.Carry(dst, src)
	if sp := trace.SpanFromContext(src); sp.SpanContext().IsValid() {
		dst = trace.ContextWithSpan(dst, sp)
	}
	return dst
}
