// Command migrate-failing is cmd/migrate with one more migration that fails, for
// TestMigrationFunctionUnderEmulator only: the embedded migrations plus
// 99999_failing.sql, which creates a table and then divides by zero.
package main

import (
	"embed"
	"io/fs"
	"os"
	"testing/fstest"

	"github.com/agentpack/gateway/migrations"
	"github.com/agentpack/gateway/shared/bootstrap"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/lambda"
)

//go:embed 99999_failing.sql
var failing embed.FS

func main() {
	set := fstest.MapFS{}
	for _, src := range []fs.FS{migrations.FS, failing} {
		names, err := fs.Glob(src, "*.sql")
		if err != nil {
			panic(err)
		}
		for _, n := range names {
			b, err := fs.ReadFile(src, n)
			if err != nil {
				panic(err)
			}
			set[n] = &fstest.MapFile{Data: b}
		}
	}
	log := logx.New(os.Stdout, "info")
	lambda.Start(cfn.LambdaWrap(bootstrap.Handler(set, bootstrap.OpenFromEnv, log)))
}
