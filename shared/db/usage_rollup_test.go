package db_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/migrations"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/google/uuid"
)

// usageBucketWidth is the width (ms) of the usage latency bucket that holds v
// (migrations/00045_usage_rollup.sql: under 0.1 ms, then [0.1·√2^(i−1), 0.1·√2^i)).
func usageBucketWidth(v float64) float64 {
	if v < 0.1 {
		return 0.1
	}
	i := math.Floor(2*math.Log2(v/0.1)) + 1
	return 0.1*math.Pow(math.Sqrt2, i) - 0.1*math.Pow(math.Sqrt2, i-1)
}

const wsU, wsV = "aaaaaaaa-0000-4000-8000-0000000000d1", "aaaaaaaa-0000-4000-8000-0000000000d2"

// usageRows creates workspaces wsU and wsV and returns 600 mixed audit rows, nine in ten
// of wsU: tools, built-ins and two connections, three principals, a chat and none, denied
// rows, failed proxied rows (Outcome; written before 00046, as TestUsageRollupBackfill
// does, they have none and count as ok), durations from 0.05 ms to 20 s, times over the last two hours and now (zero).
func usageRows(t *testing.T, pool *db.Pool, now time.Time) []*db.AuditEvent {
	t.Helper()
	ctx := t.Context()
	for _, ws := range []string{wsU, wsV} {
		if err := db.WorkspaceUpsert(ctx, pool, ws, ws); err != nil {
			t.Fatal(err)
		}
	}
	conn1, conn2 := "bbbbbbbb-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
	chat1 := "cccccccc-0000-4000-8000-000000000001"
	var rows []*db.AuditEvent
	for i := range 600 {
		ws := wsU
		if i%10 == 9 {
			ws = wsV
		}
		e := &db.AuditEvent{RowKey: uuid.NewString(), RequestID: fmt.Sprintf("r%d", i), Principal: fmt.Sprintf("p%d", i%3), WorkspaceID: &ws,
			Tool: fmt.Sprintf("tool_%d", i%4), Kind: "proxied", ArgsDigest: "d",
			DurationMS: 0.05 * math.Pow(400000, float64((i*37)%600)/599)} // 0.05 ms … 20 s, spread
		switch i % 3 {
		case 0:
			e.ConnectionID = &conn1
		case 1:
			e.ConnectionID = &conn2
		default:
			e.Kind = "builtin"
		}
		if i%7 == 0 {
			e.Kind = "denied"
		}
		if e.Kind == "proxied" && i%4 == 1 { // failed proxied calls, every failure outcome
			e.Outcome = []string{"tool_error", "rpc_error", "timeout", "unavailable", "upstream_error"}[i%5]
		}
		if i%2 == 0 {
			e.ChatID = &chat1
		}
		if i%5 != 0 { // the rest at now()
			e.OccurredAt = now.Add(-time.Duration(i%120) * time.Minute)
		}
		rows = append(rows, e)
	}
	return rows
}

// TestUsageRollup: for usageRows written in several batches, one batch retried, and a row
// of no workspace, UsageByKey's figures read from the rollup match a direct count over
// audit_events (checkUsage).
func TestUsageRollup(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	now := time.Now().UTC()
	rows := usageRows(t, pool, now)
	none := &db.AuditEvent{Principal: "p0", Tool: "tool_0", Kind: "builtin", ArgsDigest: "d", DurationMS: 3}
	for _, batch := range [][]*db.AuditEvent{rows[:1], rows[1:256], rows[256:], rows[100:300], {none}} { // rows[100:300] again: a retry
		if err := db.AuditEventInsert(ctx, pool, batch...); err != nil {
			t.Fatal(err)
		}
	}
	checkUsage(t, pool, now)
}

// TestUsageRollupBackfill: audit rows written before migration 00045 (inserted here
// without the rollup) are rolled up by the migration's own INSERT, with the same figures.
func TestUsageRollupBackfill(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	now := time.Now().UTC()
	for _, e := range usageRows(t, pool, now) {
		at := e.OccurredAt
		if at.IsZero() {
			at = now
		}
		if _, err := pool.Exec(ctx, `INSERT INTO audit_events (occurred_at, request_id, principal, workspace_id, tool, kind,
			connection_id, duration_ms, args_digest, chat_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			at, e.RequestID, e.Principal, e.WorkspaceID, e.Tool, e.Kind, e.ConnectionID, e.DurationMS, e.ArgsDigest, e.ChatID); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := migrations.FS.ReadFile("00045_usage_rollup.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, _, _ := strings.Cut(string(raw), "-- +goose Down")
	stmt := up[strings.Index(up, "INSERT INTO usage_rollup"):]
	if _, err := pool.Exec(ctx, stmt); err != nil {
		t.Fatalf("the migration's backfill: %v", err)
	}
	checkUsage(t, pool, now)
}

// checkUsage: UsageByKey over usageRows' workspace equals a direct count over audit_events
// for every grouping, over 3 h and over 30 min (whole 5-minute buckets): calls and errors
// exactly, p50/p95 within one bucket's width of percentile_cont over the rows.
func checkUsage(t *testing.T, pool *db.Pool, now time.Time) {
	t.Helper()
	// An error: every outcome but ok; a row without one (written before 00046) is denied
	// by its kind, else ok.
	const errSQL = `coalesce(outcome, CASE WHEN kind = 'denied' THEN 'denied' ELSE 'ok' END) <> 'ok'`
	ctx := t.Context()

	direct := map[string]string{"tool": `tool`, "connection": `coalesce(connection_id::text, 'builtin')`,
		"principal": `principal`, "chat": `coalesce(chat_id::text, 'none')`}
	for _, since := range []time.Duration{3 * time.Hour, 30 * time.Minute} {
		from := now.Add(-since)
		bucketStart := from.Truncate(5 * time.Minute) // date_bin from the epoch
		for by, key := range direct {
			got, err := db.UsageByKey(ctx, pool, wsU, by, from)
			if err != nil {
				t.Fatal(err)
			}
			type want struct {
				calls, errors int64
				p50, p95      *float64
			}
			wants := map[string]want{}
			q, err := pool.Query(ctx, `SELECT `+key+`, count(*), count(*) FILTER (WHERE `+errSQL+`),
				percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE NOT `+errSQL+`),
				percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE NOT `+errSQL+`)
				FROM audit_events WHERE workspace_id = $1 AND occurred_at >= $2 GROUP BY 1`, wsU, bucketStart)
			if err != nil {
				t.Fatal(err)
			}
			for q.Next() {
				var k string
				var w want
				if err := q.Scan(&k, &w.calls, &w.errors, &w.p50, &w.p95); err != nil {
					t.Fatal(err)
				}
				wants[k] = w
			}
			q.Close()
			if len(got) != len(wants) || len(got) == 0 {
				t.Fatalf("by %s since %v: %d groups, direct count %d", by, since, len(got), len(wants))
			}
			for _, g := range got {
				w := wants[g.Key]
				if g.Calls != w.calls || g.Errors != w.errors {
					t.Errorf("by %s since %v, %s: calls %d errors %d; audit_events %d, %d", by, since, g.Key, g.Calls, g.Errors, w.calls, w.errors)
				}
				for _, pc := range []struct {
					name      string
					got, want *float64
				}{{"p50", g.P50MS, w.p50}, {"p95", g.P95MS, w.p95}} {
					if (pc.got == nil) != (pc.want == nil) {
						t.Errorf("by %s, %s: %s %v, want %v", by, g.Key, pc.name, pc.got, pc.want)
						continue
					}
					if pc.got != nil && math.Abs(*pc.got-*pc.want) > usageBucketWidth(*pc.want) {
						t.Errorf("by %s since %v, %s: %s %.3f ms, exact %.3f ms (bucket width %.3f)", by, since, g.Key, pc.name, *pc.got, *pc.want, usageBucketWidth(*pc.want))
					}
				}
			}
		}
	}
}

// TestUsageRollupHistogramExact: the latency histogram the audit statement adds to
// usage_rollup (one array_agg of each row's bucket, counted into 40 slots) equals, slot for
// slot and group for group, the 40 count(*) FILTER (WHERE NOT err AND li = i) it replaced,
// computed over the written audit_events rows with the same bucket expression.
func TestUsageRollupHistogramExact(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	rows := usageRows(t, pool, time.Now().UTC())
	for _, batch := range [][]*db.AuditEvent{rows[:1], rows[1:256], rows[256:]} {
		if err := db.AuditEventInsert(ctx, pool, batch...); err != nil {
			t.Fatal(err)
		}
	}
	var hist []string
	for i := range db.UsageLatencyBuckets {
		hist = append(hist, fmt.Sprintf("count(*) FILTER (WHERE NOT err AND li = %d)", i))
	}
	var groups, differ int
	err := pool.QueryRow(ctx, `WITH r AS (
			SELECT workspace_id AS w, date_bin('5 minutes', occurred_at, timestamptz 'epoch') AS bk, tool AS tl,
				coalesce(connection_id::text, 'builtin') AS conn, principal AS p, coalesce(chat_id::text, 'none') AS chat,
				outcome <> 'ok' AS err, CASE WHEN d < 0.1 THEN 0 ELSE least(39, floor(2 * log(2.0, (d / 0.1)::numeric))::int + 1) END AS li
			FROM audit_events, LATERAL (SELECT duration_ms AS d) AS dd WHERE workspace_id IS NOT NULL
		), want AS (
			SELECT w, bk, tl, conn, p, chat, count(*) AS calls, count(*) FILTER (WHERE err) AS errors, ARRAY[`+strings.Join(hist, ", ")+`] AS latency
			FROM r GROUP BY w, bk, tl, conn, p, chat
		)
		SELECT count(*), count(*) FILTER (WHERE u.latency IS DISTINCT FROM want.latency OR u.calls <> want.calls OR u.errors <> want.errors)
		FROM want LEFT JOIN usage_rollup u ON (u.workspace_id, u.bucket, u.tool, u.connection, u.principal, u.chat) = (want.w, want.bk, want.tl, want.conn, want.p, want.chat)`).
		Scan(&groups, &differ)
	if err != nil {
		t.Fatal(err)
	}
	var stored int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM usage_rollup`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if groups < 50 || differ != 0 || stored != groups {
		t.Fatalf("%d groups (%d stored in usage_rollup), %d differ from the 40-FILTER histogram", groups, stored, differ)
	}
}
