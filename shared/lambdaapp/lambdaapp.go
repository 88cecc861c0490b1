// Package lambdaapp runs an http.Handler the same way in AWS Lambda and locally
// (DESIGN §2): when AWS_LAMBDA_RUNTIME_API is set the handler is wrapped with
// aws-lambda-go-api-proxy for API Gateway HTTP API payload v2 and served by lambda.Start;
// otherwise it listens on addr with net/http.
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

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
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
	h = StripProxyHeaders(h)
	if InLambda() {
		opts := []lambda.Option{lambda.WithContext(ctx)}
		if len(onShutdown) > 0 {
			opts = append(opts, lambda.WithEnableSIGTERM(func() {
				runHooks(context.WithoutCancel(ctx), LambdaShutdownBudget, onShutdown, logger)
			}))
		}
		lambda.StartWithOptions(httpadapter.NewV2(h).ProxyWithContext, opts...)
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
// the health check).
func StartEvent(handler any) { lambda.Start(handler) }

// StripProxyHeaders removes inbound X-GoLambdaProxy-* headers, which the Lambda adapter
// uses to pass the API Gateway context and which a client could forge (NOTES.md). Read
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
