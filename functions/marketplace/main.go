// Command marketplace is the marketplace REST Lambda function (DESIGN §2): the catalog
// under /api/mcp-marketplace and connections under /api/mcp-connections.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agentpack/gateway/functions/marketplace/api"
	"github.com/agentpack/gateway/shared/config"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/lambdaapp"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "marketplace:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	d, err := deps.Build(ctx, cfg, 2)
	if err != nil {
		return err
	}
	defer d.Close()
	a := &api.API{Pool: d.Pool, Connections: d.Connections, Verifier: d.Verifier, Logger: d.Logger}
	return lambdaapp.Start(ctx, a.Handler(), "127.0.0.1:"+cfg.Port, d.Logger)
}
