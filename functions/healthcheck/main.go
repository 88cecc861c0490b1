// Command healthcheck is the scheduled health-check Lambda function (DESIGN §2, §9a): the
// target of the EventBridge rule rate(30 minutes). Under Lambda each invocation runs one
// pass (health.Checker.Handle); run outside Lambda it performs one pass and exits.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agentpack/gateway/functions/healthcheck/health"
	"github.com/agentpack/gateway/shared/config"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/lambdaapp"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "healthcheck:", err)
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
	c := health.New(health.Options{Pool: d.Pool, Pinger: d.Upstreams, Logger: d.Logger, Metrics: os.Stdout,
		Refresh: func(ctx context.Context, conn *db.Connection) error {
			_, err := d.Connections.RefreshAndPublish(ctx, "healthcheck", conn)
			return err
		}})
	if lambdaapp.InLambda() {
		lambdaapp.StartEvent(c.Handle)
		return nil
	}
	_, err = c.Run(ctx)
	return err
}
