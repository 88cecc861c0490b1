package db_test

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
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
// computed over the written audit_events rows with 00045's bucket expression (the writer's
// db.usageBucket agrees with it off the edges: TestUsageBucketMatchesSQL).
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

// TestUsageBucketMatchesSQL: the latency bucket the writer computes (db.UsageBucket) is the
// bucket's definition decided exactly (q = d/0.1 in float64, the largest k with q² ≥ 2^k, in
// math/big) for every bucket edge and the float64s around it, the extremes, and random
// durations; and it is the bucket migrations/00045's SQL gives, except within 1e-12 of an
// edge, where the SQL's cast of the quotient to numeric (15 significant digits) moves it
// onto the edge (0.19999999999999998 ms: SQL 3, exactly 2).
func TestUsageBucketMatchesSQL(t *testing.T) {
	t.Parallel()
	pool := dbtest.Tx(t) // a query of constants: nothing to write
	ds := []float64{0, -1, 0.05, 0.1, math.Nextafter(0.1, 0), 1e9, 1e300, 52428.8}
	for k := 0; k <= 42; k++ {
		e := 0.1 * math.Pow(math.Sqrt2, float64(k))
		for _, d := range []float64{e, math.Nextafter(e, 0), math.Nextafter(e, math.Inf(1))} {
			ds = append(ds, d, math.Nextafter(d, 0), math.Nextafter(d, math.Inf(1)))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		ds = append(ds, math.Exp(r.Float64()*14-3))
	}
	rows, err := pool.Query(t.Context(), `SELECT d, CASE WHEN d < 0.1 THEN 0 ELSE least(39, floor(2 * log(2.0, (d / 0.1)::numeric))::int + 1) END
		FROM unnest($1::float8[]) AS d`, ds)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var d float64
		var want int
		if err := rows.Scan(&d, &want); err != nil {
			t.Fatal(err)
		}
		n++
		got := db.UsageBucket(d)
		if exact := exactUsageBucket(d); got != exact {
			t.Errorf("duration %v ms (%x): bucket %d, exactly %d", d, math.Float64bits(d), got, exact)
		}
		if got != want && !nearUsageEdge(d) {
			t.Errorf("duration %v ms (%x): bucket %d, SQL says %d", d, math.Float64bits(d), got, want)
		}
	}
	if err := rows.Err(); err != nil || n != len(ds) {
		t.Fatalf("%d of %d durations compared: %v", n, len(ds), err)
	}
}

// exactUsageBucket is usage_rollup's bucket of d ms by its definition, in math/big: 0 under
// 0.1 ms, else min(39, k+1) for the largest k with (d/0.1)² ≥ 2^k.
func exactUsageBucket(d float64) int {
	if d < 0.1 {
		return 0
	}
	q := new(big.Float).SetPrec(256).SetFloat64(d / 0.1)
	q2 := new(big.Float).SetPrec(256).Mul(q, q)
	k := 0
	for k < 40 && q2.Cmp(new(big.Float).SetMantExp(big.NewFloat(1), k+1)) >= 0 {
		k++
	}
	return min(k+1, db.UsageLatencyBuckets-1)
}

// nearUsageEdge reports whether d is within 1e-12 (relative) of a bucket edge 0.1·√2^k.
func nearUsageEdge(d float64) bool {
	for k := 0; k <= 40; k++ {
		if e := 0.1 * math.Pow(math.Sqrt2, float64(k)); math.Abs(d-e) <= 1e-12*e {
			return true
		}
	}
	return false
}
