// Command healthcheck is the scheduled health-check Lambda function (docs/DESIGN.md §2, §9a): the
// target of the EventBridge rule rate(30 minutes). Under Lambda each invocation runs one
// pass (health.Checker.Handle); run outside Lambda it performs one pass and exits. It is
// also the target of the optional registry sync schedule (docs/REGISTRY.md): an invocation
// whose input is {"action": "registry-sync"} imports REGISTRY_SYNC_URL instead
// (registrysync.Handler).
package main

import (
	"context"
	"os"

	"github.com/agentpack/gateway/functions/healthcheck/health"
	"github.com/agentpack/gateway/functions/healthcheck/registrysync"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/mcpclient"
)

func main() {
	deps.Main("healthcheck", func(ctx context.Context, d *deps.Deps) error {
		conc, err := health.ParseConcurrency(os.Getenv("HEALTH_CONCURRENCY"))
		if err != nil {
			return err
		}
		c := health.New(health.Options{Pool: d.Pool, Pinger: d.Upstreams, Logger: d.Logger, Metrics: os.Stdout,
			Concurrency: conc,
			Target: func(ctx context.Context, conn *db.Connection) mcpclient.Target {
				return d.Connections.TargetFor(ctx, conn, conn.CreatedBy)
			},
			Refresh: func(ctx context.Context, conn *db.Connection) error {
				_, err := d.Connections.RefreshAndPublish(ctx, connections.HealthCheckActor, conn)
				return err
			},
			Reconcile: func(ctx context.Context) error { return catalog.Rebuild(ctx, d.Pool, d.Store, nil) },
		})
		sync := &registrysync.Syncer{URL: os.Getenv("REGISTRY_SYNC_URL"), Logger: d.Logger,
			Importer: d.Registry}
		if lambdaapp.InLambda() {
			lambdaapp.StartEvent("healthcheck pass", registrysync.Handler(sync, c.Handle))
			return nil
		}
		_, err = c.Run(ctx)
		return err
	})
}
