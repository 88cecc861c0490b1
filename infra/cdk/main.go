// Command cdk is the Go CDK app of the Agentpack MCP gateway: the same stack as the
// repository's template.yaml (docs/DESIGN.md §10), reading the bootstrap binaries that
// `make lambda-build` puts under bin/<function>/bootstrap.
//
// Synthesise without the cdk CLI (node is needed for jsii, nothing is downloaded):
//
//	CDK_OUTDIR=cdk.out go run .            # or: make cdk-synth
//
// Context keys (cdk -c key=value) or environment variables: environment /
// AGENTPACK_ENV, assetDir / AGENTPACK_ASSET_DIR, databaseUrl / AGENTPACK_DATABASE_URL.
package main

import (
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// StackName is the id of the stack and the name of its template in cdk.out.
const StackName = "AgentpackGateway"

func main() {
	defer jsii.Close()

	outdir := os.Getenv("CDK_OUTDIR")
	if outdir == "" {
		outdir = "cdk.out"
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(outdir)})
	cfg := ConfigFromApp(app)
	NewGatewayStack(app, StackName, &awscdk.StackProps{
		Description: jsii.String("Agentpack MCP Gateway (docs/DESIGN.md §10); same stack as template.yaml"),
	}, cfg)
	app.Synth(nil)
}
