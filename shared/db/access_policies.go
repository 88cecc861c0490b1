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
	Key    string   `db:"key" json:"key"`
	Calls  int64    `db:"calls" json:"calls"`
	Errors int64    `db:"errors" json:"errors"`
	P50MS  *float64 `db:"p50_ms" json:"p50Ms"`
	P95MS  *float64 `db:"p95_ms" json:"p95Ms"`
}

// usageKeys are the groupings UsageByKey accepts, as SQL over audit_events.
var usageKeys = map[string]string{
	"tool":       `tool`,
	"connection": `coalesce(connection_id::text, 'builtin')`,
	"principal":  `principal`,
	"chat":       `coalesce(chat_id::text, 'none')`,
}

// UsageByKey aggregates workspace ws's audit rows since since, grouped by by ("tool",
// "connection": the connection id or "builtin", "principal", "chat": the chat id or "none"
// for calls whose request named no chat): the calls (every row), the
// errors among them (rows of calls refused by an access policy, kind 'denied'), and the
// median and 95th percentile of the others' durations (ms; nil when none). At most 500
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
	return collect[UsageRow](ctx, q, `SELECT `+key+` AS key, count(*) AS calls,
		count(*) FILTER (WHERE kind = 'denied') AS errors,
		percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE kind <> 'denied') AS p50_ms,
		percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE kind <> 'denied') AS p95_ms
		FROM audit_events WHERE workspace_id = $1 AND occurred_at >= $2
		GROUP BY 1 ORDER BY calls DESC, key LIMIT 500`, ws, since)
}
