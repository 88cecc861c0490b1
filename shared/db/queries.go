package db

import (
	"context"
	"encoding/json"
	"math"
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
	durs, errs, buckets := make([]float64, n), make([]bool, n), make([]int32, n)
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
		buckets[i] = int32(usageBucket(e.DurationMS))
	}
	_, err := q.Exec(ctx, auditInsertSQL, keys, at, reqs, principals, wss, tools, versions, kinds, conns, durs, digests, chats, errs, outcomes, buckets)
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

// usageBucket is the latency bucket of a duration of d ms in usage_rollup's histogram
// (UsageLatencyBuckets): 0 under 0.1 ms, else min(39, ⌊2·log2(d/0.1)⌋ + 1) — the definition
// of migrations/00045's backfill. Here q = d/0.1 is the float64 quotient and the floor is
// decided exactly on it: k is the largest integer with q² ≥ 2^k, compared through
// q² = hi + lo (math.FMA). The backfill's SQL casts the quotient to numeric (15 significant
// digits) before its log, so the two differ only within about 1e-15 of an edge, never on one;
// the writer's durations are whole microseconds (TestUsageBucketMatchesSQL). NaN is bucket 0
// and +Inf bucket 39 (the SQL failed its whole batch on NaN).
func usageBucket(d float64) int {
	if math.IsNaN(d) || d < 0.1 {
		return 0
	}
	q := d / 0.1
	if q >= 1<<19 { // q² ≥ 2^38: bucket 39 and above
		return UsageLatencyBuckets - 1
	}
	atLeast := func(k int) bool { // q² ≥ 2^k, exactly
		hi := q * q
		lo := math.FMA(q, q, -hi)
		p := math.Ldexp(1, k)
		return hi > p || (hi == p && lo >= 0)
	}
	k := int(math.Floor(2 * math.Log2(q)))
	for k > 0 && !atLeast(k) {
		k--
	}
	for k < 2*19 && atLeast(k+1) {
		k++
	}
	return min(k+1, UsageLatencyBuckets-1)
}

// auditInsertSQL writes a batch of audit rows and adds the rows it wrote to usage_rollup in
// the same statement: migrations/00047's audit_insert, whose plan the server keeps per
// connection (this text is the only thing parsed and planned per execution). Its parameters
// are one array per column ($1 row keys … $14 outcomes, AuditEventInsert's order) and $15
// each row's latency bucket (usageBucket). The uuid columns go as text[], cast by the server:
// pgx has no binary encoding of a Go string as a uuid, and built an error on every
// execution before it fell back to text.
const auditInsertSQL = `SELECT audit_insert($1::text[]::uuid[], $2, $3, $4, $5::text[]::uuid[], $6, $7, $8, $9::text[]::uuid[],
	$10, $11, $12::text[]::uuid[], $13, $14, $15)`

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
