package db

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// collect runs sql and scans every row into a T by column name.
func collect[T any](ctx context.Context, q Querier, sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, Interpret(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[T])
	if err != nil {
		return nil, Interpret(err)
	}
	return out, nil
}

// one runs sql and scans exactly one row into a T; no row is NOT_FOUND.
func one[T any](ctx context.Context, q Querier, sql string, args ...any) (*T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, Interpret(err)
	}
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByNameLax[T])
	if err != nil {
		return nil, Interpret(err)
	}
	return v, nil
}

// ---- workspaces, projects, chats ----

// WorkspaceGet returns the workspace id, or NOT_FOUND (also for a malformed id).
func WorkspaceGet(ctx context.Context, q Querier, id string) (*Workspace, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	return one[Workspace](ctx, q, `SELECT id, name, default_project_id FROM workspaces WHERE id = $1`, id)
}

// WorkspaceList returns every workspace ordered by id.
func WorkspaceList(ctx context.Context, q Querier) ([]Workspace, error) {
	return collect[Workspace](ctx, q, `SELECT id, name, default_project_id FROM workspaces ORDER BY id`)
}

// WorkspaceUpsert creates or renames workspace id (dev seed and tests).
func WorkspaceUpsert(ctx context.Context, q Querier, id, name string) error {
	_, err := q.Exec(ctx, `INSERT INTO workspaces (id, name) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name`, id, name)
	return Interpret(err)
}

// WorkspaceSetDefaultProject makes project the default project of workspace ws
// (workspaces.default_project_id). Errors: NOT_FOUND (no workspace ws, or a malformed
// id), INVALID_REFERENCE (no project of that id).
func WorkspaceSetDefaultProject(ctx context.Context, q Querier, ws, project string) error {
	if !IsUUID(ws) {
		return notFound()
	}
	tag, err := q.Exec(ctx, `UPDATE workspaces SET default_project_id = $2 WHERE id = $1`, ws, project)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// WorkspaceDiscoveryThreshold returns workspace ws's tool discovery threshold
// (workspaces.tool_discovery_threshold; nil = the gateway's default), or NOT_FOUND.
func WorkspaceDiscoveryThreshold(ctx context.Context, q Querier, ws string) (*int, error) {
	if !IsUUID(ws) {
		return nil, notFound()
	}
	var t *int
	if err := q.QueryRow(ctx, `SELECT tool_discovery_threshold FROM workspaces WHERE id = $1`, ws).Scan(&t); err != nil {
		return nil, Interpret(err)
	}
	return t, nil
}

// WorkspaceSetDiscoveryThreshold sets workspace ws's tool discovery threshold (nil: back
// to the gateway's default). The caller rebuilds the workspace's catalog document, which
// carries it. Errors: NOT_FOUND (no workspace ws), VALIDATION_ERROR (a negative value).
func WorkspaceSetDiscoveryThreshold(ctx context.Context, q Querier, ws string, t *int) error {
	if !IsUUID(ws) {
		return notFound()
	}
	tag, err := q.Exec(ctx, `UPDATE workspaces SET tool_discovery_threshold = $2 WHERE id = $1`, ws, t)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// ProjectEnsure creates project id named name in workspace ws unless a project id exists
// already (then nothing changes: dev seed and tests). Errors: INVALID_REFERENCE (no
// workspace ws), VALIDATION_ERROR (malformed id).
func ProjectEnsure(ctx context.Context, q Querier, id, ws, name string) error {
	_, err := q.Exec(ctx, `INSERT INTO projects (id, workspace_id, name) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO NOTHING`, id, ws, name)
	return Interpret(err)
}

// ProjectGet returns project id, or NOT_FOUND.
func ProjectGet(ctx context.Context, q Querier, id string) (*Project, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	return one[Project](ctx, q, `SELECT id, workspace_id, name FROM projects WHERE id = $1`, id)
}

// ChatGet returns chat id, or NOT_FOUND.
func ChatGet(ctx context.Context, q Querier, id string) (*Chat, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	return one[Chat](ctx, q, `SELECT id, workspace_id, title FROM chats WHERE id = $1`, id)
}

// ChatList returns the chats of workspace ws, newest first, at most limit (1–500; other
// values mean 100) of them, and whether more exist beyond the page.
func ChatList(ctx context.Context, q Querier, ws string, limit int) ([]Chat, bool, error) {
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	out, err := collect[Chat](ctx, q, `SELECT id, workspace_id, title, created_at FROM chats
		WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, ws, limit+1)
	if err != nil {
		return nil, false, err
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

// ChatEnsure creates chat id titled title in workspace ws unless a chat id exists already
// (then nothing changes: dev seed and tests). Errors: INVALID_REFERENCE (no workspace
// ws), VALIDATION_ERROR (malformed id).
func ChatEnsure(ctx context.Context, q Querier, id, ws, title string) error {
	_, err := q.Exec(ctx, `INSERT INTO chats (id, workspace_id, title) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO NOTHING`, id, ws, title)
	return Interpret(err)
}

// ChatCreate inserts a chat titled title in workspace ws and returns it.
func ChatCreate(ctx context.Context, q Querier, ws, title string) (*Chat, error) {
	return one[Chat](ctx, q, `INSERT INTO chats (workspace_id, title) VALUES ($1, $2)
		RETURNING id, workspace_id, title, created_at`, ws, title)
}

// EventFilter narrows EventList. Empty fields match everything. BeforeID pages backwards:
// only rows with a smaller id (the id of the last row of the previous page).
type EventFilter struct {
	WorkspaceID string
	EntityType  string
	Action      string
	BeforeID    int64
	Limit       int // 1–200; other values mean 50
}

// EventList returns event_log rows of f.WorkspaceID (required), newest first, and whether
// more exist beyond the page.
func EventList(ctx context.Context, q Querier, f EventFilter) ([]Event, bool, error) {
	if f.Limit <= 0 || f.Limit > 200 {
		f.Limit = 50
	}
	out, err := collect[Event](ctx, q, `SELECT id, occurred_at, entity_type, entity_id, action, actor, workspace_id, payload
		FROM event_log
		WHERE workspace_id = $1 AND ($2 = '' OR entity_type = $2) AND ($3 = '' OR action = $3)
		  AND ($4::bigint = 0 OR id < $4)
		ORDER BY id DESC LIMIT $5`, f.WorkspaceID, f.EntityType, f.Action, f.BeforeID, f.Limit+1)
	if err != nil {
		return nil, false, err
	}
	if len(out) > f.Limit {
		return out[:f.Limit], true, nil
	}
	return out, false, nil
}

// ---- audit ----

// AuditEventBatchMax is the most rows one AuditEventInsert takes (one statement; the
// writer batches far fewer).
const AuditEventBatchMax = 10000

// AuditEventInsert appends gateway audit rows in one statement of fixed text (arrays
// unnested, so the statement is described once per connection whatever the batch size).
// Either every row is written or none (a constraint violation by one row fails the
// statement). A row with a RowKey that is already in the table is skipped, so retrying a
// batch whose commit was not seen writes nothing twice (a row without a RowKey gets a fresh
// one). The same statement adds the rows it wrote (those of a workspace) to usage_rollup,
// the Usage page's 5-minute rollup (auditInsertSQL, UsageByKey), so the rollup never
// disagrees with the rows. A zero OccurredAt is now(). No rows
// is a no-op. Errors: VALIDATION_ERROR (more than AuditEventBatchMax rows, a RowKey that is
// not a UUID, or a row the table's constraints refuse), else Interpret's.
func AuditEventInsert(ctx context.Context, q Querier, evs ...*AuditEvent) error {
	switch {
	case len(evs) == 0:
		return nil
	case len(evs) > AuditEventBatchMax:
		return apperr.New(apperr.Validation, "%d audit rows in one statement, at most %d", len(evs), AuditEventBatchMax)
	}
	n := len(evs)
	keys, at := make([]string, n), make([]*time.Time, n)
	reqs, principals, tools, versions, kinds, digests, outcomes := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	wss, conns, chats := make([]*string, n), make([]*string, n), make([]*string, n)
	durs, errs := make([]float64, n), make([]bool, n)
	for i, e := range evs {
		switch {
		case e.RowKey == "":
			keys[i] = uuid.NewString() // every row gets a key: the rollup joins on it
		case !IsUUID(e.RowKey):
			return apperr.New(apperr.Validation, "audit row key %q is not a UUID", e.RowKey)
		default:
			keys[i] = e.RowKey
		}
		if !e.OccurredAt.IsZero() {
			at[i] = &e.OccurredAt
		}
		reqs[i], principals[i], tools[i], versions[i], kinds[i], digests[i] = e.RequestID, e.Principal, e.Tool, e.Version, e.Kind, e.ArgsDigest
		wss[i], conns[i], chats[i], durs[i], errs[i] = e.WorkspaceID, e.ConnectionID, e.ChatID, e.DurationMS, isError(e)
		outcomes[i] = auditOutcome(e)
	}
	_, err := q.Exec(ctx, auditInsertSQL, keys, at, reqs, principals, wss, tools, versions, kinds, conns, durs, digests, chats, errs, outcomes)
	return Interpret(err)
}

// isError reports whether an audit row counts as an error on the Usage page (usage_rollup's
// errors; its duration stays out of the latency histogram): every outcome but "ok" — a
// failed proxied call (tool_error, rpc_error, timeout, unavailable, upstream_error) and a
// call refused by an access policy (kind "denied").
func isError(e *AuditEvent) bool { return auditOutcome(e) != "ok" }

// auditOutcome is the outcome e is written with: e.Outcome, or when empty "denied" for kind
// "denied" and "ok" otherwise (the rows audited before failed calls were).
func auditOutcome(e *AuditEvent) string {
	switch {
	case e.Outcome != "":
		return e.Outcome
	case e.Kind == "denied":
		return "denied"
	}
	return "ok"
}

// auditOutcomeSQL reads audit_events.outcome, NULL on rows older than the column
// (migrations/00046_audit_outcome.sql), as auditOutcome would have written it.
const auditOutcomeSQL = `coalesce(outcome, CASE WHEN kind = 'denied' THEN 'denied' ELSE 'ok' END) AS outcome`

// UsageLatencyBuckets is the number of buckets of usage_rollup's latency histogram
// (migrations/00045_usage_rollup.sql): bucket 0 is under 0.1 ms, bucket i in 1..38 is
// [0.1·√2^(i−1), 0.1·√2^i) ms, bucket 39 is 0.1·√2^38 ms (about 52 s) and above.
const UsageLatencyBuckets = 40

// usageBucketBounds returns bucket i's lower and upper bound in ms (the last bucket's upper
// bound is its lower bound: a duration there reads back as that).
func usageBucketBounds(i int) (lo, hi float64) {
	edge := func(j int) float64 { return 0.1 * math.Pow(math.Sqrt2, float64(j)) }
	switch {
	case i <= 0:
		return 0, 0.1
	case i >= UsageLatencyBuckets-1:
		return edge(UsageLatencyBuckets - 2), edge(UsageLatencyBuckets - 2)
	}
	return edge(i - 1), edge(i)
}

// usageBucketSQL is a duration's bucket (d in ms), as the migration's backfill computes it.
const usageBucketSQL = `CASE WHEN d < 0.1 THEN 0 ELSE least(39, floor(2 * log(2.0, (d / 0.1)::numeric))::int + 1) END`

// auditInsertSQL writes a batch of audit rows ($1…$12, one array each; a key already
// written is skipped) and, in the same statement, adds the rows it wrote to usage_rollup:
// per workspace, 5-minute bucket, tool, connection, principal and chat, the calls, the
// errors ($13: isError of each row) and the latency histogram of the others. The groups go
// in key order, so that concurrent batches lock the rollup rows they share in one order.
// r is MATERIALIZED so that each row's latency bucket (a numeric log) is computed once, and
// the histogram is one array_agg of the buckets counted into UsageLatencyBuckets slots:
// written as 40 count(*) FILTER (WHERE … li = i) aggregates over an inlined r, Postgres
// computed the numeric log in each of the 40 (about 0.9 ms per row), and planned 40
// aggregates on every execution (the functions' query mode plans each statement:
// BenchmarkAuditEventInsert).
var auditInsertSQL = `WITH x AS (
		SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::uuid[], $6::text[], $7::text[],
			$8::text[], $9::uuid[], $10::float8[], $11::text[], $12::uuid[], $13::bool[], $14::text[]) AS x(k, t, r, p, w, tl, v, kd, c, d, g, ch, err, oc)
	), ins AS (
		INSERT INTO audit_events
		(row_key, occurred_at, request_id, principal, workspace_id, tool, version, kind, connection_id, duration_ms, args_digest, chat_id, outcome)
		SELECT k, COALESCE(t, now()), r, p, w, tl, v, kd, c, d, g, ch, oc FROM x
		ON CONFLICT (row_key) WHERE row_key IS NOT NULL DO NOTHING
		RETURNING row_key, occurred_at
	), r AS MATERIALIZED (
		SELECT x.w, date_bin('5 minutes', ins.occurred_at, timestamptz 'epoch') AS bk, x.tl, coalesce(x.c::text, 'builtin') AS conn,
			x.p, coalesce(x.ch::text, 'none') AS chat, x.err, ` + usageBucketSQL + ` AS li
		FROM ins JOIN x ON x.k = ins.row_key WHERE x.w IS NOT NULL
	), g AS (
		SELECT w, bk, tl, conn, p, chat, count(*) AS calls, count(*) FILTER (WHERE err) AS errors,
			array_agg(li) FILTER (WHERE NOT err) AS lis
		FROM r GROUP BY w, bk, tl, conn, p, chat
	)
	INSERT INTO usage_rollup AS u (workspace_id, bucket, tool, connection, principal, chat, calls, errors, latency)
	SELECT w, bk, tl, conn, p, chat, calls, errors,
		ARRAY(SELECT count(l) FROM generate_series(0, ` + strconv.Itoa(UsageLatencyBuckets-1) + `) AS b(i) LEFT JOIN unnest(lis) AS l ON l = b.i GROUP BY b.i ORDER BY b.i)
	FROM g ORDER BY w, bk, tl, conn, p, chat
	ON CONFLICT (workspace_id, bucket, tool, connection, principal, chat) DO UPDATE SET
		calls = u.calls + EXCLUDED.calls, errors = u.errors + EXCLUDED.errors,
		latency = ARRAY(SELECT a + b FROM unnest(u.latency, EXCLUDED.latency) WITH ORDINALITY AS h(a, b, o) ORDER BY o)`

// AuditEventList returns the newest limit (1–200) audit rows of workspace ws.
func AuditEventList(ctx context.Context, q Querier, ws string, limit int) ([]AuditEvent, error) {
	if limit <= 0 || limit > 200 {
		limit = 50
	}
	return collect[AuditEvent](ctx, q, `SELECT id, occurred_at, request_id, principal, workspace_id, tool,
		version, kind, connection_id, duration_ms, args_digest, chat_id, `+auditOutcomeSQL+`
		FROM audit_events WHERE workspace_id = $1 ORDER BY occurred_at DESC, id DESC LIMIT $2`, ws, limit)
}

// EventInsert appends one event_log row. payload must already be
// redacted by the caller.
func EventInsert(ctx context.Context, q Querier, e *Event) error {
	p, err := json.Marshal(e.Payload)
	if err != nil {
		return err
	}
	if e.Payload == nil {
		p = []byte("{}")
	}
	_, err = q.Exec(ctx, `INSERT INTO event_log (entity_type, entity_id, action, actor, workspace_id, payload)
		VALUES ($1, $2, $3, $4, $5, $6)`, e.EntityType, e.EntityID, e.Action, e.Actor, e.WorkspaceID, p)
	return Interpret(err)
}
