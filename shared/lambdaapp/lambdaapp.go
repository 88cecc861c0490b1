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
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// InLambda reports whether the process runs under a Lambda runtime (or the emulator).
func InLambda() bool { return os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" }

// Start serves h until the process is stopped: under Lambda through the HTTP API v2
// adapter, locally on addr (e.g. "127.0.0.1:8080") with graceful shutdown on SIGINT or
// SIGTERM. It returns only on a listen error or after shutdown.
func Start(ctx context.Context, h http.Handler, addr string, logger *slog.Logger) error {
	h = StripProxyHeaders(h)
	if InLambda() {
		lambda.StartWithOptions(httpadapter.NewV2(h).ProxyWithContext, lambda.WithContext(ctx))
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
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
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
