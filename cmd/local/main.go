// Command local is the local entry point (docs/DESIGN.md §2, §12): it serves every function's HTTP
// handler on one port, runs migrations and the seed, prints development tokens, and runs
// the health check on demand. `make run` uses it; nothing here runs in Lambda.
//
// Usage:
//
//	local migrate            apply migrations (idempotent)
//	local seed               load the curated catalog and the demo workspace (idempotent)
//	local token              print a member, an admin and a superuser token for the demo workspace
//	local serve              serve everything on 127.0.0.1:$PORT (default 8080) with the demo upstream
//	                         (on $DEMO_UPSTREAM_PORT, default 8090), the OAuth demo upstream (on
//	                         $OAUTH_DEMO_PORT, default 8091) and print the console sign-in link
//	local help               print this list
//	local healthcheck        run one health-check pass
//	local demo-upstream      serve only the demo upstream MCP server (benchmarks)
package main

import (
	"context"
	"fmt"
	"os"
)

// usage is what `local help` prints.
const usage = `usage: local COMMAND

  migrate         apply migrations (idempotent)
  seed            load the curated catalog and the demo workspace (idempotent)
  token           print a member, an admin and a superuser token for the demo workspace
  serve           serve every function on 127.0.0.1:$PORT (default 8080) with the demo upstream
                  on 127.0.0.1:$DEMO_UPSTREAM_PORT (default 8090) and the OAuth demo upstream
                  (authorization server + protected MCP server) on 127.0.0.1:$OAUTH_DEMO_PORT
                  (default 8091), and unless IDP_ISSUER is set the demo identity provider
                  (mockoidc) on 127.0.0.1:$IDP_DEMO_PORT (default 8092); prints the console
                  sign-in link
  healthcheck     run one health-check pass
  import-registry URL|FILE
                  import an MCP registry (v0.1 API base URL) or a file of its server documents
                  into the catalog (docs/REGISTRY.md); prints the report
  demo-upstream   serve only the demo upstream MCP server (benchmarks)
  help            print this text

Environment: DATABASE_URL (required by all but token, help, demo-upstream), PORT,
DEMO_UPSTREAM_PORT, OAUTH_DEMO_PORT, IDP_DEMO_PORT, JWT_SECRET, APP_ENV; see README.md "Configuration"
and docs/AUTH.md.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
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
	case "import-registry":
		err = cmdImportRegistry(ctx, os.Args[2:])
	case "demo-upstream":
		err = cmdDemoUpstream(ctx)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprint(os.Stderr, usage)
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(1)
	}
}
