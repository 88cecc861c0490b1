package stack_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/agentpack/gateway/shared/testpeer"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkProxiedEchoMiddleware (issue 17): a proxied tools/call (loopback fixture
// upstream, audit row included) through the composed stack, in process: "bare" is the
// stack's handler as before the operations middleware; "off" adds lambdaapp.Wrap (ids,
// one JSON access line to io.Discard) with tracing off; "on" the same with an SDK tracer
// provider (batch processor, exporter discarding). The pool of this test environment is
// not traced, so "on" counts the request span (and the upstream span once the gateway's
// upstream client uses telemetry.Transport). Reports p50/p99 per request.
//
//	go test ./cmd/local/stack -run '^$' -bench ProxiedEchoMiddleware -benchtime 2000x
func BenchmarkProxiedEchoMiddleware(b *testing.B) {
	env := stacktest.New(b, nil)
	ws, _, _ := env.Workspace(b, "bench")
	admin := stacktest.Token(b, "bench-admin", auth.RoleAdmin, ws)
	fx := testpeer.NewFixture(b, nil)
	handle := env.Connection(b, stacktest.Admin("bench-admin", ws), connections.CreateInput{Name: "Echo", URL: fx.URL,
		TransportType: "streamable-http", WorkspaceID: &ws}).Connection.Handle
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp_` + handle + `_echo","arguments":{"message":"hello"}}}`
	serve := func(h http.Handler) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/mcp/"+ws, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+admin)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	run := func(b *testing.B, h http.Handler) {
		for range 20 {
			if rec := serve(h); rec.Code != 200 || !strings.Contains(rec.Body.String(), "hello") {
				b.Fatalf("echo: %d %s", rec.Code, rec.Body)
			}
		}
		lat := make([]time.Duration, 0, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			t0 := time.Now()
			serve(h)
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
	logger := logx.New(io.Discard, "info")
	b.Run("bare", func(b *testing.B) { run(b, env.Stack.Handler) })
	b.Run("off", func(b *testing.B) { run(b, lambdaapp.Wrap(env.Stack.Handler, logger)) })
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		defer telemetry.Use(tp)()
		run(b, lambdaapp.Wrap(env.Stack.Handler, logger))
	})
}
