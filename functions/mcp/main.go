// Command mcp is the MCP gateway Lambda function (DESIGN §4): API Gateway routes /mcp,
// /mcp/{workspaceId}, /mcp/{workspaceId}/servers/{connection}, /.well-known/* and /health.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"

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

// gcPercent is the gateway's GOGC unless the environment sets one. go-sdk v1.8.0's JSON
// decoder allocates a 32 KiB buffer per message decoded (segmentio/encoding's
// minBufferSize), ~0.5 MB of short-lived garbage per proxied call, so at the default 100
// the collector runs every few requests on a heap of a few MB. 400 took the in-process
// proxied echo from 1.63 to 1.22 ms p50 (BenchmarkProxiedEcho, GOGC=100 vs 400, same run)
// and keeps peak RSS under the proxied load within the 40 MB target (make bench).
const gcPercent = 400

// memoryLimit is the soft heap limit unless GOMEMLIMIT is set: with GOGC 400 alone the
// gateway's RSS under the proxied load reached 57 MB (make bench); the limit makes the
// collector run earlier once the heap nears it, well under any Lambda memory size.
const memoryLimit = 24 << 20

func run(ctx context.Context) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	d, err := deps.Build(ctx, cfg, 2)
	if err != nil {
		return err
	}
	defer d.Close()
	g, err := gateway.New(gateway.FromDeps(d, os.Stdout))
	if err != nil {
		return err
	}
	// Sessions the gateway opened upstream are ended (DELETE) when the process stops; under
	// Lambda that needs the SIGTERM of a registered extension (see lambdaapp.Start).
	return lambdaapp.Start(ctx, g.Handler(), "127.0.0.1:"+cfg.Port, d.Logger, d.EndUpstreamSessions)
}
