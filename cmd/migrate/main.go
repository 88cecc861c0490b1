// Command migrate is the migration function (docs/DEPLOY.md): the Lambda function behind
// the stack's CloudFormation custom resource DatabaseMigration, which every serving
// function depends on. On Create and Update it migrates the database with the embedded
// migrations, loads the curated catalog and bootstraps the first workspace and the first
// admin (shared/bootstrap); on Delete it touches nothing. It answers CloudFormation through
// the presigned response URL (cfn.LambdaWrap).
//
// It is a binary of its own, not a mode of a serving function: it is the only function
// that reaches the database directly rather than through RDS Proxy (its own security
// group), it needs none of the serving functions' permissions, and none of them can be
// made to run a migration. `make build` builds it into bin/migrate/bootstrap.
package main

import (
	"os"

	"github.com/agentpack/gateway/migrations"
	"github.com/agentpack/gateway/shared/bootstrap"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	log := logx.New(os.Stdout, os.Getenv("LOG_LEVEL"))
	lambda.Start(cfn.LambdaWrap(bootstrap.Handler(migrations.FS, bootstrap.OpenFromEnv, log)))
}
