// Command mcp is the MCP gateway Lambda function (docs/DESIGN.md §4): API Gateway routes /mcp,
// /mcp/{workspaceId}, /mcp/{workspaceId}/servers/{connection}, /.well-known/* and /health.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agentpack/gateway/functions/mcp/gateway"
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
	d, err := deps.Build(ctx, cfg, 2)
	if err != nil {
		return err
	}
	defer d.Close()
	o := gateway.FromDeps(d, os.Stdout)
	if lambdaapp.InLambda() {
		// Tasks run in an asynchronous invocation of this function (tasks.go).
		if o.StartTask, err = selfInvoker(ctx); err != nil {
			return err
		}
	}
	g, err := gateway.New(o)
	if err != nil {
		return err
	}
	// Sessions the gateway opened upstream are ended (DELETE) when the process stops; under
	// Lambda that needs the SIGTERM of a registered extension (see lambdaapp.Start).
	return lambdaapp.StartWithEvents(ctx, g.Handler(), "127.0.0.1:"+cfg.Port, d.Logger, taskEventKey, runTaskEvent(g),
		d.EndUpstreamSessions)
}
