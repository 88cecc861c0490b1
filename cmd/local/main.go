// Command local is the local entry point (DESIGN §2, §12): it serves every function's HTTP
// handler on one port, runs migrations and the seed, prints development tokens, and runs
// the health check on demand. `make run` uses it; nothing here runs in Lambda.
//
// Usage:
//
//	local migrate            apply migrations (idempotent)
//	local seed               load the curated catalog and the demo workspace (idempotent)
//	local token              print a member and an admin token for the demo workspace
//	local serve              serve everything on 127.0.0.1:$PORT (default 8080) with the demo upstream
//	local healthcheck        run one health-check pass
//	local demo-upstream      serve only the demo upstream MCP server (benchmarks)
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: local migrate|seed|token|serve|healthcheck")
		os.Exit(2)
	}
	ctx := context.Background()
	var err error
	switch os.Args[1] {
	case "migrate":
		err = cmdMigrate(ctx)
	case "seed":
		err = cmdSeed(ctx)
	case "token":
		err = cmdToken(os.Stdout)
	case "serve":
		err = cmdServe(ctx)
	case "healthcheck":
		err = cmdHealthcheck(ctx)
	case "demo-upstream":
		err = cmdDemoUpstream(ctx)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(1)
	}
}
