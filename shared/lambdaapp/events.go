package lambdaapp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/agentpack/gateway/shared/telemetry"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// StartWithEvents is Start for a function that also receives events of its own: under
// Lambda, an invocation whose payload is a JSON object with the member key (e.g.
// {"agentpackTask": {...}}, the asynchronous invocation the MCP gateway sends itself to run
// a task) goes to onEvent with that member's value; every other payload is an API Gateway
// HTTP API v2 request served by h as in Start. Locally it is Start (events are handled in
// process by the caller).
//
// onShutdown hooks run as in Start.
func StartWithEvents(ctx context.Context, h http.Handler, addr string, logger *slog.Logger,
	key string, onEvent func(ctx context.Context, payload json.RawMessage) error, onShutdown ...func(context.Context)) error {
	if !InLambda() {
		return Start(ctx, h, addr, logger, onShutdown...)
	}
	adapter := httpadapter.NewV2(Wrap(h, logger))
	marker := []byte(`"` + key + `"`)
	handler := func(ctx context.Context, raw json.RawMessage) (any, error) {
		defer invocationDone(ctx)
		if bytes.Contains(raw, marker) {
			var m map[string]json.RawMessage
			if json.Unmarshal(raw, &m) == nil && m[key] != nil {
				return map[string]bool{"ok": true}, onEvent(ctx, m[key])
			}
		}
		var req events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, err
		}
		resp, err := adapter.ProxyWithContext(ctx, req)
		telemetry.Flush(ctx) // before the environment may freeze
		return resp, err
	}
	startDrainExtension(logger)
	lambda.StartWithOptions(handler, lambdaOptions(ctx, logger, onShutdown)...)
	return nil
}
