// Command mcp is the MCP gateway Lambda function (docs/DESIGN.md §4): API Gateway routes /mcp,
// /mcp/{workspaceId}, /mcp/{workspaceId}/servers/{connection}, /.well-known/* and /health.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agentpack/gateway/functions/mcp/gateway"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/config"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/lambdaapp"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "mcp:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	gateway.TuneRuntime()
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	// Under Lambda an instance serves one request at a time (plus a task's self-invocation):
	// 2 connections. Run as a plain HTTP server (the bench, a container) it serves many at
	// once, so it gets make run's 8. DATABASE_POOL_SIZE overrides either.
	pool := 8
	if lambdaapp.InLambda() {
		pool = 2
	}
	d, err := deps.Build(ctx, cfg, int32(cfg.PoolSize(pool)))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.RequireVerifier(); err != nil {
		return err
	}
	o := gatewayOptions(d)
	if lambdaapp.InLambda() {
		// Tasks run in an asynchronous invocation of this function (tasks.go in this directory; the tasks themselves are package gateway/tasks).
		if o.StartTask, err = selfInvoker(ctx); err != nil {
			return err
		}
	}
	g, err := gateway.New(o)
	if err != nil {
		return err
	}
	// Audit rows are written after the answer: under Lambda an extension keeps the execution
	// environment from freezing until each invocation's rows are committed
	// (lambdaapp.RegisterDrain); on SIGTERM and local shutdown they are flushed.
	lambdaapp.RegisterDrain(func(ctx context.Context) { _ = g.DrainAudit(ctx) })
	// Sessions the gateway opened upstream are ended (DELETE) when the process stops; under
	// Lambda that needs the SIGTERM of a registered extension (see lambdaapp.Start).
	return lambdaapp.StartWithEvents(ctx, g.Handler(), "127.0.0.1:"+cfg.Port, d.Logger, taskEventKey, runTaskEvent(g),
		d.EndUpstreamSessions, g.CloseAudit)
}

// gatewayOptions wires the gateway to the process's dependencies (this is the function's
// composition root; cmd/local/stack is the local one). EMF metrics go to stdout, where
// Lambda's log capture extracts them.
func gatewayOptions(d *deps.Deps) gateway.Options {
	o := gateway.Options{
		Pool: d.Pool, Catalog: d.CatalogCache(), Upstreams: d.Upstreams, Verifier: d.Verifier,
		Services: d.Services, Logger: d.Logger, Metrics: os.Stdout,
		PublicBaseURL: d.Config.PublicBaseURL, AuthServerURL: d.Config.AuthServerURL,
		AllowedOrigins: d.Config.AllowedOrigins,
	}
	if d.SigningKey != nil {
		// The marketplace function runs the authorization server on this origin
		// (docs/AUTH.md); its tokens are accepted while their grant stands (d.Grants).
		o.OwnAuthServer = true
	}
	if d.Config.UnauthenticatedLocal && !d.Config.Deployed() {
		o.UnauthenticatedPrincipal = &auth.Principal{Subject: "local-unauthenticated", Role: auth.RoleAdmin}
	}
	return o
}
