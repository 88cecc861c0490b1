package db

import (
	"context"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
)

// AccessPolicy is one stored Cedar policy document (access_policies, docs/POLICIES.md):
// a workspace's (WorkspaceID set) or the global one (WorkspaceID nil).
type AccessPolicy struct {
	WorkspaceID *string   `db:"workspace_id"`
	Text        string    `db:"policy_text"`
	UpdatedBy   string    `db:"updated_by"`
	UpdatedAt   time.Time `db:"updated_at"`
}

const accessPolicyCols = `workspace_id, policy_text, updated_by, updated_at`

// AccessPolicyGet returns the policy document of workspace ws (nil: the global one), or
// NOT_FOUND when none was saved (or ws is not a UUID).
func AccessPolicyGet(ctx context.Context, q Querier, ws *string) (*AccessPolicy, error) {
	if ws == nil {
		return one[AccessPolicy](ctx, q, `SELECT `+accessPolicyCols+` FROM access_policies WHERE workspace_id IS NULL`)
	}
	if !IsUUID(*ws) {
		return nil, notFound()
	}
	return one[AccessPolicy](ctx, q, `SELECT `+accessPolicyCols+` FROM access_policies WHERE workspace_id = $1`, *ws)
}

// AccessPolicyTexts returns the texts of workspace ws's document and of the global one ("" for
// a document never saved) in one round trip: what the catalog build copies into the index.
func AccessPolicyTexts(ctx context.Context, q Querier, ws string) (workspace, global string, err error) {
	var wsArg any
	if IsUUID(ws) {
		wsArg = ws
	}
	rows, err := q.Query(ctx, `SELECT workspace_id IS NULL, policy_text FROM access_policies
		WHERE workspace_id IS NULL OR workspace_id = $1`, wsArg)
	if err != nil {
		return "", "", Interpret(err)
	}
	defer rows.Close()
	for rows.Next() {
		var isGlobal bool
		var text string
		if err := rows.Scan(&isGlobal, &text); err != nil {
			return "", "", Interpret(err)
		}
		if isGlobal {
			global = text
		} else {
			workspace = text
		}
	}
	return workspace, global, Interpret(rows.Err())
}

// AccessPolicyPut stores text as the document of workspace ws (nil: global), replacing the
// one before, and returns the row. A missing workspace is INVALID_REFERENCE; a text over
// 64 KiB VALIDATION_ERROR.
func AccessPolicyPut(ctx context.Context, q Querier, ws *string, text, actor string) (*AccessPolicy, error) {
	if ws != nil && !IsUUID(*ws) {
		return nil, notFound()
	}
	// Delete and insert: the unique index is on an expression, which ON CONFLICT cannot name
	// as a constraint; the caller's transaction makes the pair atomic.
	if ws == nil {
		if _, err := q.Exec(ctx, `DELETE FROM access_policies WHERE workspace_id IS NULL`); err != nil {
			return nil, Interpret(err)
		}
	} else if _, err := q.Exec(ctx, `DELETE FROM access_policies WHERE workspace_id = $1`, *ws); err != nil {
		return nil, Interpret(err)
	}
	return one[AccessPolicy](ctx, q, `INSERT INTO access_policies (workspace_id, policy_text, updated_by)
		VALUES ($1, $2, $3) RETURNING `+accessPolicyCols, ws, text, actor)
}

// UsageRow is one group of a workspace's audited calls (UsageByKey).
type UsageRow struct {
	Key string `db:"key" json:"key"`
	// Label names a principal key's person (email, else name) when the gateway knows them
	// (people, joined in the same statement); absent otherwise and for other groupings.
	Label  string   `db:"label" json:"label,omitempty" doc:"For by=principal: the person's email (else name) when the gateway knows them; absent otherwise."`
	Calls  int64    `db:"calls" json:"calls"`
	Errors int64    `db:"errors" json:"errors"`
	P50MS  *float64 `db:"p50_ms" json:"p50Ms"`
	P95MS  *float64 `db:"p95_ms" json:"p95Ms"`
}

// usageKeys are the groupings UsageByKey accepts, as columns of usage_rollup.
var usageKeys = map[string]string{
	"tool":       `tool`,
	"connection": `connection`,
	"principal":  `principal`,
	"chat":       `chat`,
}

// UsageByKey aggregates workspace ws's usage since since (from the 5-minute bucket that
// holds since: the window is whole buckets), grouped by by ("tool", "connection": the
// connection id or "builtin", "principal", "chat": the chat id or "none" for calls whose
// request named no chat): the calls (every audit row), the errors among them (isError),
// and the median and 95th percentile of the others' durations (ms; nil when none), read
// from usage_rollup's latency histogram — linear within the bucket that holds the rank, so
// within one bucket's width (41 % of its lower bound) of the exact figure. At most 500
// groups, the busiest first. An unknown by is VALIDATION_ERROR.
func UsageByKey(ctx context.Context, q Querier, ws, by string, since time.Time) ([]UsageRow, error) {
	key, ok := usageKeys[by]
	if !ok {
		return nil, apperr.New(apperr.Validation, "unknown grouping %q (tool, connection, principal or chat)", by).
			WithDetails(map[string]string{"field": "by"})
	}
	if !IsUUID(ws) {
		return nil, notFound()
	}
	type group struct {
		Key     string  `db:"key"`
		Calls   int64   `db:"calls"`
		Errors  int64   `db:"errors"`
		Latency []int64 `db:"latency"`
		Label   *string `db:"label"`
	}
	label, join := `NULL::text AS label`, ``
	if by == "principal" {
		label, join = `pl.label`, personLabelJoin("t.key")
	}
	groups, err := collect[group](ctx, q, `WITH r AS (
			SELECT `+key+` AS key, calls, errors, latency FROM usage_rollup
			WHERE workspace_id = $1 AND bucket >= date_bin('5 minutes', $2::timestamptz, timestamptz 'epoch')
		), t AS (
			SELECT key, sum(calls)::bigint AS calls, sum(errors)::bigint AS errors FROM r GROUP BY key
			ORDER BY calls DESC, key LIMIT 500
		), h AS (
			SELECT r.key, o, sum(n)::bigint AS n FROM r JOIN t ON t.key = r.key, unnest(r.latency) WITH ORDINALITY AS u(n, o)
			GROUP BY r.key, o
		)
		SELECT t.key, t.calls, t.errors, ARRAY(SELECT h.n FROM h WHERE h.key = t.key ORDER BY h.o) AS latency, `+label+`
		FROM t`+join+` ORDER BY t.calls DESC, t.key`, ws, since)
	if err != nil {
		return nil, err
	}
	out := make([]UsageRow, 0, len(groups))
	for _, g := range groups {
		u := UsageRow{Key: g.Key, Calls: g.Calls, Errors: g.Errors,
			P50MS: histogramQuantile(g.Latency, 0.5), P95MS: histogramQuantile(g.Latency, 0.95)}
		if g.Label != nil {
			u.Label = *g.Label
		}
		out = append(out, u)
	}
	return out, nil
}

// histogramQuantile reads quantile p (0–1) from a usage latency histogram (counts by
// bucket, UsageLatencyBuckets of them): the bucket that holds rank p·(n−1) (the rank
// percentile_cont interpolates at), linearly within its bounds. Nil for an empty
// histogram.
func histogramQuantile(h []int64, p float64) *float64 {
	var n int64
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return nil
	}
	rank := p * float64(n-1) // 0-based, as percentile_cont
	var below int64
	for i, c := range h {
		if c == 0 || float64(below+c) <= rank {
			below += c
			continue
		}
		lo, hi := usageBucketBounds(i)
		v := lo + (hi-lo)*(rank-float64(below)+0.5)/float64(c)
		return &v
	}
	lo, _ := usageBucketBounds(len(h) - 1)
	return &lo
}
