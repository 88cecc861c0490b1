package db_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BenchmarkStatementMode is the cost per statement of the query mode (make bench's
// "StatementMode" rows; docs/DATABASE.md): the same two statements of the proxied call's
// path — the rate-limit statement for a workspace with no limit (a CTE over three tables)
// and a connection read by id — on one connection, in pgx's default mode (cached named
// prepared statements: Bind/Execute of a statement parsed once) and in db.QueryExecMode
// (cache-describe: Parse/Bind/Execute of the unnamed statement every time, no named one).
// Both are one round trip; the difference is the server's parse and plan per statement.
func BenchmarkStatementMode(b *testing.B) {
	_, u := dbtest.Fresh(b)
	ctx := context.Background()
	for _, m := range []struct {
		name string
		mode pgx.QueryExecMode
	}{{"named-prepared", pgx.QueryExecModeCacheStatement}, {"cache-describe", db.QueryExecMode}} {
		b.Run(m.name, func(b *testing.B) {
			cfg, err := pgxpool.ParseConfig(u)
			if err != nil {
				b.Fatal(err)
			}
			cfg.MaxConns = 1
			cfg.ConnConfig.DefaultQueryExecMode = m.mode
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer pool.Close()
			ws := "bbbbbbbb-0000-4000-8000-000000000001"
			if err := db.WorkspaceUpsert(ctx, pool, ws, "bench"); err != nil {
				b.Fatal(err)
			}
			conn := "cccccccc-0000-4000-8000-000000000001"
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				if i%2 == 0 {
					if _, err := db.RateLimitTake(ctx, pool, ws, conn, "mcp_x_echo", "member"); err != nil {
						b.Fatal(err)
					}
				} else if _, err := db.ConnectionGet(ctx, pool, conn); err == nil {
					b.Fatal("a connection that does not exist was found")
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100]), "p99-ns")
		})
	}
}
