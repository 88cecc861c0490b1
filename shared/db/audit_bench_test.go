package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/google/uuid"
)

// BenchmarkAuditEventInsert is the audit writer's statement (db.AuditEventInsert: the rows
// and their usage_rollup upsert in one call of migrations/00047's audit_insert, whose plan
// the server keeps per connection) in the functions' query mode (db.QueryExecMode: the
// statement text is parsed and planned on every execution), by batch size: the
// Postgres-side cost of one proxied call's audit row is a batch's time ÷ its rows
// ("ns/row").
func BenchmarkAuditEventInsert(b *testing.B) {
	pool, _ := dbtest.Fresh(b)
	ctx := context.Background()
	ws, conn := "bbbbbbbb-0000-4000-8000-000000000002", "cccccccc-0000-4000-8000-000000000002"
	if err := db.WorkspaceUpsert(ctx, pool, ws, "bench"); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			evs := make([]*db.AuditEvent, n)
			for b.Loop() {
				for i := range evs {
					evs[i] = &db.AuditEvent{RowKey: uuid.NewString(), OccurredAt: time.Now(), RequestID: "r", Principal: "bench",
						WorkspaceID: &ws, Tool: "mcp_x_echo", Kind: "proxied", ConnectionID: &conn,
						DurationMS: float64(i%40) * 0.37, ArgsDigest: "sha256:00", Outcome: "ok"}
				}
				if err := db.AuditEventInsert(ctx, pool, evs...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}
