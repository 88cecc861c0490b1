package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/telemetry"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkMiddleware: the cost per request of the functions' middleware around a
// trivial handler. "bare" is the handler alone; "middleware-off" is telemetry.Middleware
// alone with tracing off (one atomic load); "off" is lambdaapp.Wrap (ids, the JSON
// access line written to io.Discard, telemetry middleware) with tracing off; "on" adds a real
// SDK tracer provider with a batch span processor (exporter discarding the batches).
// `go test ./shared/telemetry -run '^$' -bench Middleware -benchmem`
func BenchmarkMiddleware(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux := http.NewServeMux()
	mux.Handle("GET /x", h)
	logger := logx.New(io.Discard, "info") // the access line is encoded, then discarded
	run := func(b *testing.B, handler http.Handler) {
		req := httptest.NewRequest("GET", "/x", nil)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			handler.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, mux) })
	b.Run("middleware-off", func(b *testing.B) { run(b, telemetry.Middleware(mux)) })
	b.Run("off", func(b *testing.B) { run(b, lambdaapp.Wrap(mux, logger)) })
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		defer telemetry.Use(tp)()
		run(b, lambdaapp.Wrap(mux, logger))
	})
}
