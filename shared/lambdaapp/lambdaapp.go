// Package lambdaapp runs an http.Handler the same way in AWS Lambda and locally
// (docs/DESIGN.md §2): when AWS_LAMBDA_RUNTIME_API is set the handler is wrapped with
// aws-lambda-go-api-proxy for API Gateway HTTP API payload v2 and served by lambda.Start;
// otherwise it listens on addr with net/http. Either way the handler runs inside Wrap:
// forged proxy headers stripped, the Lambda and API Gateway request ids in the context,
// one access log line and (when configured) one trace span per request.
package lambdaapp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"go.opentelemetry.io/otel/attribute"
)

// InLambda reports whether the process runs under a Lambda runtime (or the emulator).
func InLambda() bool { return os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" }

// LambdaShutdownBudget bounds the shutdown hooks under Lambda: after SIGTERM the platform
// sends SIGKILL about 500 ms later (aws-lambda-go WithEnableSIGTERM), so the hooks get 400 ms
// and whatever they have not finished by then is abandoned.
const LambdaShutdownBudget = 400 * time.Millisecond

// localShutdownBudget bounds the shutdown hooks of a local server (after its graceful
// HTTP shutdown).
const localShutdownBudget = 5 * time.Second

// Start serves h until the process is stopped: under Lambda through the HTTP API v2
// adapter, locally on addr (e.g. "127.0.0.1:8080") with graceful shutdown on SIGINT or
// SIGTERM. It returns only on a listen error or after shutdown.
//
// onShutdown hooks run, concurrently, when the process is told to stop: locally after the
// HTTP server has shut down (bounded by 5 s), under Lambda on the SIGTERM that precedes
// the execution environment's end (bounded by LambdaShutdownBudget). Lambda sends that
// SIGTERM only to a function that registered an extension, so with hooks Start registers
// aws-lambda-go's internal no-op extension (lambda.WithEnableSIGTERM); without hooks it
// does not, and the environment is ended with SIGKILL as before. The gateway uses a hook to
// end its upstream MCP sessions (HTTP DELETE, mcpclient.Pool.Close).
func Start(ctx context.Context, h http.Handler, addr string, logger *slog.Logger, onShutdown ...func(context.Context)) error {
	h = Wrap(h, logger)
	if InLambda() {
		adapter := httpadapter.NewV2(h)
		startDrainExtension(logger)
		lambda.StartWithOptions(func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			defer invocationDone(ctx)
			resp, err := adapter.ProxyWithContext(ctx, ev)
			telemetry.Flush(ctx) // before the environment may freeze
			return resp, err
		}, lambdaOptions(ctx, logger, onShutdown)...)
		return nil
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	logger.Info("listening", "addr", addr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		runHooks(context.WithoutCancel(ctx), localShutdownBudget, onShutdown, logger)
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// lambdaOptions are the lambda.Start options of a function with onShutdown hooks (see
// Start).
func lambdaOptions(ctx context.Context, logger *slog.Logger, onShutdown []func(context.Context)) []lambda.Option {
	opts := []lambda.Option{lambda.WithContext(ctx)}
	if len(onShutdown) > 0 {
		opts = append(opts, lambda.WithEnableSIGTERM(func() {
			runHooks(context.WithoutCancel(ctx), LambdaShutdownBudget, onShutdown, logger)
		}))
	}
	return opts
}

// runHooks runs hooks concurrently with a context ending after budget and returns when
// all are done or the budget is spent (a hook still running is then abandoned: the
// process is about to end).
func runHooks(ctx context.Context, budget time.Duration, hooks []func(context.Context), logger *slog.Logger) {
	if len(hooks) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, h := range hooks {
			wg.Go(func() { h(ctx) })
		}
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		logger.WarnContext(ctx, "shutdown hooks did not finish within their budget", "budget_ms", budget.Milliseconds())
	}
}

// StartEvent runs an event handler under Lambda (e.g. the EventBridge scheduled event of
// the health check). With tracing on, each invocation is one span named name (attribute
// faas.invocation_id, failed when the handler returns an error) whose spans are flushed
// before the invocation returns. Log lines of the invocation carry its Lambda request id
// (logx reads it from the Lambda context).
func StartEvent[E, R any](name string, handler func(context.Context, E) (R, error)) {
	lambda.Start(func(ctx context.Context, ev E) (R, error) {
		defer telemetry.Flush(ctx)
		return InvokeEvent(ctx, name, handler, ev)
	})
}

// InvokeEvent calls handler with ev inside the invocation's span (see StartEvent).
func InvokeEvent[E, R any](ctx context.Context, name string, handler func(context.Context, E) (R, error), ev E) (R, error) {
	var attrs []attribute.KeyValue
	if lambdaID, _ := logx.RequestIDs(ctx); lambdaID != "" {
		attrs = append(attrs, attribute.String("faas.invocation_id", lambdaID))
	}
	ctx, span := telemetry.Start(ctx, name, attrs...)
	defer span.End()
	r, err := handler(ctx, ev)
	if err != nil {
		telemetry.Fail(span, "invocation failed", err)
	}
	return r, err
}

// Wrap is the middleware every HTTP function runs in (Start applies it; the local stack
// and tests apply it to a composed mux), outermost first: StripProxyHeaders; the
// invocation's ids (WithPlatformIDs); logx.AccessLog (one access line per request);
// telemetry.Middleware (the request span, when tracing is on).
func Wrap(h http.Handler, logger *slog.Logger) http.Handler {
	return StripProxyHeaders(WithPlatformIDs(logx.AccessLog(logger, telemetry.Middleware(h))))
}

// WithPlatformIDs puts into the request context the invocation's Lambda request id (from
// the Lambda context, lambdacontext) and the API Gateway request id and routeKey (from
// the HTTP API v2 request context, core.GetAPIGatewayV2ContextFromContext — never from
// a header): logx.RequestIDs returns them, every *Context log line carries them, and the
// Lambda request id becomes the request id (request_id, X-Request-Id). Outside Lambda the
// request passes through unchanged.
func WithPlatformIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		var lambdaID, apigwID string
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			lambdaID = lc.AwsRequestID
		}
		rc, ok := core.GetAPIGatewayV2ContextFromContext(ctx)
		if ok {
			apigwID = rc.RequestID
		}
		if lambdaID == "" && apigwID == "" {
			next.ServeHTTP(w, r)
			return
		}
		ctx = logx.WithRequestIDs(ctx, lambdaID, apigwID)
		if ok {
			ctx = logx.WithRouteKey(ctx, rc.RouteKey)
		}
		if lambdaID != "" && logx.RequestID(ctx) == "" {
			ctx = logx.WithRequestID(ctx, lambdaID)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// StripProxyHeaders removes inbound X-GoLambdaProxy-* headers, which the Lambda adapter
// uses to pass the API Gateway context and which a client could forge (docs/DESIGN.md §13). Read
// that context only through core.GetAPIGatewayV2ContextFromContext.
func StripProxyHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k := range r.Header {
			if strings.HasPrefix(strings.ToLower(k), "x-golambdaproxy-") {
				r.Header.Del(k)
			}
		}
		h.ServeHTTP(w, r)
	})
}
