package lambdaapp_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// logLines decodes every JSON line of buf, keyed by msg.
func logLines(t *testing.T, buf *bytes.Buffer) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out[m["msg"].(string)] = m
	}
	return out
}

// TestIDsJoinLogLines: the REST functions' stack (lambdaapp.Wrap around httpapi.RequestID)
// run through the real HTTP API v2 adapter gives a handler's own log line the same
// request_id, lambda_request_id (lambdacontext) and apigw_request_id (the event's
// requestContext.requestId) as the access line, and answers X-Request-Id with the Lambda
// request id — the client's X-Request-Id is ignored. Locally (no Lambda context, no
// event) a new id joins the two lines and is the X-Request-Id.
func TestIDsJoinLogLines(t *testing.T) {
	t.Parallel()
	handler := func(logger *slog.Logger) http.Handler {
		return httpapi.RequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			logger.InfoContext(r.Context(), "handler line")
			w.WriteHeader(http.StatusOK)
		}))
	}

	t.Run("lambda", func(t *testing.T) {
		var logs bytes.Buffer
		logger := logx.New(&logs, "info")
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "$default", RawPath: "/api/x",
			Headers: map[string]string{"x-request-id": "client-forged"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: "apigw-7", RouteKey: "$default",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/api/x"}}}
		ctx := lambdacontext.NewContext(t.Context(), &lambdacontext.LambdaContext{AwsRequestID: "lambda-7"})
		resp, err := httpadapter.NewV2(lambdaapp.Wrap(handler(logger), logger)).ProxyWithContext(ctx, ev)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("answer %d %v", resp.StatusCode, err)
		}
		if resp.Headers["X-Request-Id"] != "lambda-7" {
			t.Errorf("X-Request-Id %q, want the Lambda request id", resp.Headers["X-Request-Id"])
		}
		lines := logLines(t, &logs)
		for _, msg := range []string{"handler line", "access"} {
			l := lines[msg]
			if l["request_id"] != "lambda-7" || l["lambda_request_id"] != "lambda-7" || l["apigw_request_id"] != "apigw-7" {
				t.Errorf("%s: request_id %v lambda_request_id %v apigw_request_id %v", msg,
					l["request_id"], l["lambda_request_id"], l["apigw_request_id"])
			}
		}
	})

	t.Run("local", func(t *testing.T) {
		var logs bytes.Buffer
		logger := logx.New(&logs, "info")
		req, _ := http.NewRequest("GET", "http://127.0.0.1/api/x", nil)
		req.Header.Set("X-Request-Id", "client-forged")
		rec := &recorder{h: http.Header{}}
		lambdaapp.Wrap(handler(logger), logger).ServeHTTP(rec, req)
		id := rec.h.Get("X-Request-Id")
		if len(id) != 16 {
			t.Fatalf("X-Request-Id %q, want a new 16-hex id", id)
		}
		lines := logLines(t, &logs)
		for _, msg := range []string{"handler line", "access"} {
			l := lines[msg]
			if l["request_id"] != id {
				t.Errorf("%s: request_id %v, want %s", msg, l["request_id"], id)
			}
			if _, ok := l["lambda_request_id"]; ok {
				t.Errorf("%s: a Lambda request id outside Lambda: %v", msg, l)
			}
		}
	})
}
