package lambdaapp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestWrapUnderTheAdapter: through the real HTTP API v2 adapter (as lambdaapp.Start runs
// it), forged X-GoLambdaProxy-* headers never reach the handler, logx.RequestIDs gives the
// invocation's Lambda id and the event's API Gateway request id, the Lambda id is the
// request id, and the access line joins them with the route.
func TestWrapUnderTheAdapter(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	logger := logx.New(&logs, "info")
	var seen http.Header
	var lambdaID, apigwID, reqID string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/chats/{chatId}/pins", func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		lambdaID, apigwID = logx.RequestIDs(r.Context())
		reqID = logx.RequestID(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "ANY /api/chats/{chatId}/pins", RawPath: "/api/chats/c1/pins",
		Headers: map[string]string{"x-golambdaproxy-apigw-context": `{"requestId":"forged"}`,
			"X-GoLambdaProxy-Stage-Vars": "{}", "accept": "application/json"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: "apigw-req-1", RouteKey: "ANY /api/chats/{chatId}/pins",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/api/chats/c1/pins"}},
	}
	ctx := lambdacontext.NewContext(t.Context(), &lambdacontext.LambdaContext{AwsRequestID: "lambda-req-1"})
	resp, err := httpadapter.NewV2(lambdaapp.Wrap(mux, logger)).ProxyWithContext(ctx, ev)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("answer %d %v", resp.StatusCode, err)
	}
	for k := range seen {
		if strings.HasPrefix(strings.ToLower(k), "x-golambdaproxy-") {
			t.Errorf("header %s reached the handler", k)
		}
	}
	if seen.Get("Accept") != "application/json" {
		t.Error("an ordinary header was stripped")
	}
	if lambdaID != "lambda-req-1" || apigwID != "apigw-req-1" || reqID != "lambda-req-1" {
		t.Errorf("ids: lambda %q apigw %q request %q", lambdaID, apigwID, reqID)
	}
	if resp.Headers["X-Request-Id"] != "lambda-req-1" {
		t.Errorf("X-Request-Id %q", resp.Headers["X-Request-Id"])
	}
	var a map[string]any
	if err := json.Unmarshal(logs.Bytes(), &a); err != nil {
		t.Fatalf("access line: %v: %s", err, logs.String())
	}
	if a["msg"] != "access" || a["lambda_request_id"] != "lambda-req-1" || a["apigw_request_id"] != "apigw-req-1" ||
		a["route"] != "GET /api/chats/{chatId}/pins" || a["status"] != 204.0 {
		t.Errorf("access line %v", a)
	}
}

// TestWrapLocally: outside Lambda there are no platform ids; the request id is new and the
// route falls back to "" for an unmatched path.
func TestWrapLocally(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	h := lambdaapp.Wrap(http.NotFoundHandler(), logx.New(&logs, "info"))
	req, _ := http.NewRequest("GET", "http://127.0.0.1/nothing", nil)
	rec := &recorder{h: http.Header{}}
	h.ServeHTTP(rec, req)
	var a map[string]any
	if err := json.Unmarshal(logs.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if _, ok := a["lambda_request_id"]; ok || a["status"] != 404.0 || a["request_id"] != rec.h.Get("X-Request-Id") {
		t.Errorf("access line %v, X-Request-Id %q", a, rec.h.Get("X-Request-Id"))
	}
}

type recorder struct {
	h      http.Header
	status int
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(p []byte) (int, error) { return len(p), nil }
func (r *recorder) WriteHeader(s int)           { r.status = s }

// TestInvokeEventSpan: an event invocation is one span carrying the Lambda request id,
// the parent of the handler's spans, failed when the handler fails.
func TestInvokeEventSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	t.Cleanup(telemetry.Use(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	ctx := lambdacontext.NewContext(t.Context(), &lambdacontext.LambdaContext{AwsRequestID: "inv-1"})
	_, err := lambdaapp.InvokeEvent(ctx, "healthcheck pass", func(ctx context.Context, ev string) (int, error) {
		_, child := telemetry.Start(ctx, "check")
		child.End()
		return 0, errors.New("database down")
	}, "event")
	if err == nil {
		t.Fatal("the handler's error was lost")
	}
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	child, root := spans[0], spans[1]
	if root.Name() != "healthcheck pass" || root.Status().Code != codes.Error || child.Parent().SpanID() != root.SpanContext().SpanID() {
		t.Errorf("root %s %v, child parent %v", root.Name(), root.Status(), child.Parent().SpanID())
	}
	found := false
	for _, kv := range root.Attributes() {
		found = found || (kv.Key == "faas.invocation_id" && kv.Value.AsString() == "inv-1")
	}
	if !found {
		t.Errorf("attributes %v", root.Attributes())
	}
}
