package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/agentpack/gateway/shared/telemetry/otlptest"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

const (
	incomingTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	incomingParent = "00f067aa0ba902b7"
	paramSecret    = "sql-param-secret-7d1c"
	querySecret    = "upstream-query-secret-93ab"
	tokenSecret    = "bearer-token-secret-c0ffee"
)

// upstream is a loopback HTTP server recording the traceparent of each request.
type upstream struct {
	*httptest.Server
	mu          sync.Mutex
	traceparent []string
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.traceparent = append(u.traceparent, r.Header.Get("Traceparent"))
		u.mu.Unlock()
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(u.Close)
	return u
}

// TestSpanTreeOverOTLP (issue 17): with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a real
// OTLP/HTTP receiver on loopback, one request through the functions' middleware (the same
// lambdaapp.Wrap as in Lambda) that runs a Postgres query and calls an upstream yields:
// a server span continuing the incoming traceparent, named by the route, with the
// annotations; a child span for the query (traced by the pool db.Open built); a child
// client span for the upstream call, whose traceparent the upstream received. The access
// line carries the trace id. No SQL parameter, upstream query string or token appears in
// any span.
func TestSpanTreeOverOTLP(t *testing.T) {
	rcv := otlptest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Endpoint)
	t.Setenv("OTEL_SERVICE_NAME", "")
	ctx := t.Context()
	shutdown, err := telemetry.Setup(ctx, "agentpack-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })
	if !telemetry.Enabled() {
		t.Fatal("tracing not enabled with an endpoint set")
	}
	_, url := dbtest.Fresh(t)
	pool, err := db.Open(ctx, url, 2) // built while tracing is on: traced
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	up := newUpstream(t)
	client := &http.Client{Transport: telemetry.Transport(nil)}

	var logs bytes.Buffer
	logger := logx.New(&logs, "debug")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		logx.Annotate(r.Context(), logx.FieldWorkspace, "ws-trace")
		var s string
		if err := pool.QueryRow(r.Context(), `SELECT $1::text`, paramSecret).Scan(&s); err != nil {
			t.Errorf("query: %v", err)
		}
		req, _ := http.NewRequestWithContext(r.Context(), "GET", up.URL+"/mcp?key="+querySecret, nil)
		req.Header.Set("Authorization", "Bearer "+tokenSecret)
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("upstream: %v", err)
			return
		}
		resp.Body.Close()
		logger.InfoContext(r.Context(), "handled")
		w.WriteHeader(http.StatusAccepted)
	})
	srv := httptest.NewServer(lambdaapp.Wrap(mux, logger))
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest("GET", srv.URL+"/items/7?x="+querySecret, nil)
	req.Header.Set("Traceparent", "00-"+incomingTrace+"-"+incomingParent+"-01")
	req.Header.Set("Authorization", "Bearer "+tokenSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	telemetry.Flush(ctx)

	spans, ok := rcv.WaitFor(5*time.Second, func(s []otlptest.Span) bool {
		return otlptest.Find(s, func(s otlptest.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER }) != nil
	})
	if !ok {
		t.Fatalf("no server span received: %v", otlptest.Text(spans))
	}
	server := otlptest.Find(spans, func(s otlptest.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER })
	if server.Name != "GET /items/{id}" || server.TraceID != incomingTrace || server.ParentSpanID != incomingParent ||
		server.Attributes["http.route"] != "GET /items/{id}" || server.Attributes["http.response.status_code"] != "202" ||
		server.Attributes["agentpack.workspace"] != "ws-trace" || server.Resource["service.name"] != "agentpack-test" {
		t.Errorf("server span: %+v", *server)
	}
	query := otlptest.Find(spans, func(s otlptest.Span) bool {
		return s.ParentSpanID == server.SpanID && strings.Contains(s.Attributes["db.query.text"]+s.Attributes["db.statement"], "SELECT $1::text")
	})
	if query == nil {
		t.Errorf("no query span under the request span:\n%s", otlptest.Text(spans))
	}
	call := otlptest.Find(spans, func(s otlptest.Span) bool {
		return s.ParentSpanID == server.SpanID && s.Kind == tracepb.Span_SPAN_KIND_CLIENT && s.Scope == telemetry.ScopeName
	})
	if call == nil {
		t.Fatalf("no upstream client span under the request span:\n%s", otlptest.Text(spans))
	}
	if call.Name != "GET upstream" || call.Attributes["server.address"] != "127.0.0.1" || call.Attributes["http.response.status_code"] != "200" {
		t.Errorf("upstream span: %+v", *call)
	}
	if want := "00-" + incomingTrace + "-" + call.SpanID + "-01"; len(up.traceparent) != 1 || up.traceparent[0] != want {
		t.Errorf("upstream got traceparent %q, want %q", up.traceparent, want)
	}
	var access map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		_ = json.Unmarshal([]byte(l), &m)
		if m["msg"] == "access" {
			access = m
		} else if m["msg"] == "handled" && m["trace_id"] != incomingTrace {
			t.Errorf("handler line without the trace id: %s", l)
		}
	}
	if access == nil || access["trace_id"] != incomingTrace {
		t.Errorf("access line %v", access)
	}
	text := otlptest.Text(spans) + logs.String()
	for _, s := range []string{paramSecret, querySecret, tokenSecret} {
		if strings.Contains(text, s) {
			t.Errorf("spans or logs contain %q", s)
		}
	}
}

// TestTransportFailure: an upstream that cannot be reached marks the client span failed
// with error.type and a fixed description, never the error's text (it quotes the URL).
func TestTransportFailure(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	t.Cleanup(telemetry.Use(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	client := &http.Client{Transport: telemetry.Transport(nil)}
	if _, err := client.Get(dead.URL + "/mcp?key=" + querySecret); err == nil {
		t.Fatal("a closed server answered")
	}
	spans := rec.Ended()
	if len(spans) != 1 || spans[0].Status().Description != "upstream request failed" {
		t.Fatalf("spans: %v", spans)
	}
	for _, kv := range spans[0].Attributes() {
		if strings.Contains(kv.Value.String(), querySecret) {
			t.Errorf("attribute %s holds the query", kv.Key)
		}
	}
	if !hasAttr(spans[0].Attributes(), "error.type") {
		t.Errorf("no error.type: %v", spans[0].Attributes())
	}
}

func hasAttr(kvs []attribute.KeyValue, key string) bool {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return true
		}
	}
	return false
}

// TestOffIsPassThrough: without an endpoint nothing is set up, the middleware hands the
// very same request on, the transport adds no header, Start returns ctx as is, and a pool
// gets no tracer.
func TestOffIsPassThrough(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	if telemetry.Configured() {
		t.Fatal("configured without an endpoint")
	}
	shutdown, err := telemetry.Setup(t.Context(), "x")
	if err != nil || telemetry.Enabled() {
		t.Fatalf("Setup without an endpoint: enabled=%v err=%v", telemetry.Enabled(), err)
	}
	_ = shutdown(t.Context())
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_SDK_DISABLED", "true")
	if telemetry.Configured() {
		t.Error("OTEL_SDK_DISABLED=true is not honoured")
	}

	in := httptest.NewRequest("GET", "/", nil)
	var got *http.Request
	telemetry.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r })).
		ServeHTTP(httptest.NewRecorder(), in)
	if got != in {
		t.Error("the middleware copied the request with tracing off")
	}
	up := newUpstream(t)
	resp, err := (&http.Client{Transport: telemetry.Transport(nil)}).Get(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if up.traceparent[0] != "" {
		t.Errorf("traceparent sent with tracing off: %q", up.traceparent[0])
	}
	ctx := t.Context()
	if c, span := telemetry.Start(ctx, "x"); c != ctx || span.IsRecording() {
		t.Error("Start with tracing off")
	}
	if telemetry.PgxTracer() != nil {
		t.Error("a pgx tracer with tracing off")
	}
	set := 0
	telemetry.Inject(ctx, func(string, string) { set++ })
	if set != 0 {
		t.Error("Inject with tracing off")
	}
}

// TestInject: with a span, Inject writes its traceparent (for a JSON-RPC _meta).
func TestInject(t *testing.T) {
	t.Cleanup(telemetry.Use(sdktrace.NewTracerProvider()))
	ctx, span := telemetry.Start(t.Context(), "dispatch")
	defer span.End()
	meta := map[string]string{}
	telemetry.Inject(ctx, func(k, v string) { meta[k] = v })
	sc := span.SpanContext()
	if want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"; meta["traceparent"] != want {
		t.Errorf("traceparent %q, want %q", meta["traceparent"], want)
	}
}

type probeKey struct{}

// TestCarry: the rebuilt context has the span, the ids and the access record of the
// request, and none of its other values or its cancellation.
func TestCarry(t *testing.T) {
	t.Cleanup(telemetry.Use(sdktrace.NewTracerProvider()))
	var carried context.Context
	h := logx.AccessLog(logx.Discard, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, span := telemetry.Start(r.Context(), "dispatch")
		defer span.End()
		ctx, cancel := context.WithCancel(context.WithValue(ctx, probeKey{}, "sdk value"))
		carried = telemetry.Carry(context.Background(), ctx)
		cancel()
		logx.Annotate(carried, logx.FieldConnectionID, "conn-9")
		if logx.Annotated(r.Context(), logx.FieldConnectionID) != "conn-9" {
			t.Error("annotation through the carried context lost")
		}
		if got := trace.SpanContextFromContext(carried); got.SpanID() != span.SpanContext().SpanID() {
			t.Error("span not carried")
		}
	}))
	req := httptest.NewRequest("GET", "/", nil)
	req = req.WithContext(logx.WithRequestIDs(logx.WithRequestID(req.Context(), "rid"), "lid", "aid"))
	h.ServeHTTP(httptest.NewRecorder(), req)
	l, a := logx.RequestIDs(carried)
	if logx.RequestID(carried) != "rid" || l != "lid" || a != "aid" {
		t.Errorf("ids: %q %q %q", logx.RequestID(carried), l, a)
	}
	if carried.Value(probeKey{}) != nil || carried.Err() != nil {
		t.Error("carried another value or the cancellation")
	}
}
