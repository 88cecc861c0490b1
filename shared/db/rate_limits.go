package db

import (
	"context"
	"time"
)

// RateLimit is one limit of a workspace (rate_limits, docs/RATE-LIMITS.md). ConnectionID
// or Tool (an exposed tool name) narrow it to one connection or tool, at most one of them;
// Principal nil shares one bucket across the workspace, "*" gives each member a bucket,
// any other value limits that member (token subject) only. PerMinute and PerDay are calls
// per UTC fixed window; at least one is set.
type RateLimit struct {
	ID           string    `db:"id"`
	WorkspaceID  string    `db:"workspace_id"`
	ConnectionID *string   `db:"connection_id"`
	Tool         *string   `db:"tool"`
	Principal    *string   `db:"principal"`
	PerMinute    *int      `db:"per_minute"`
	PerDay       *int      `db:"per_day"`
	CreatedBy    string    `db:"created_by"`
	CreatedAt    time.Time `db:"created_at"`
	UpdatedAt    time.Time `db:"updated_at"`
	// Inserted is set by RateLimitUpsert: true when the scope had no limit before.
	Inserted bool `db:"inserted"`
}

const rateLimitCols = `id, workspace_id, connection_id, tool, principal, per_minute, per_day, created_by, created_at, updated_at`

// RateLimitUpsert sets the limit of l's scope (workspace, connection, tool, principal):
// a new row, or the per-minute and per-day values of the existing one. It returns the
// row with Inserted telling which. A connection that does not exist is
// INVALID_REFERENCE.
func RateLimitUpsert(ctx context.Context, q Querier, l *RateLimit) (*RateLimit, error) {
	return one[RateLimit](ctx, q, `INSERT INTO rate_limits (workspace_id, connection_id, tool, principal, per_minute, per_day, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT ON CONSTRAINT rate_limits_scope_uq DO UPDATE SET per_minute = EXCLUDED.per_minute,
			per_day = EXCLUDED.per_day, updated_at = now()
		RETURNING `+rateLimitCols+`, (xmax = 0) AS inserted`,
		l.WorkspaceID, l.ConnectionID, l.Tool, l.Principal, l.PerMinute, l.PerDay, l.CreatedBy)
}

// RateLimitList returns workspace ws's limits, oldest first.
func RateLimitList(ctx context.Context, q Querier, ws string) ([]RateLimit, error) {
	if !IsUUID(ws) {
		return nil, notFound()
	}
	return collect[RateLimit](ctx, q, `SELECT `+rateLimitCols+` FROM rate_limits WHERE workspace_id = $1 ORDER BY created_at, id`, ws)
}

// RateLimitDelete deletes limit id of workspace ws (its counters go with it); NOT_FOUND
// when ws has no such limit.
func RateLimitDelete(ctx context.Context, q Querier, ws, id string) (*RateLimit, error) {
	if !IsUUID(ws) || !IsUUID(id) {
		return nil, notFound()
	}
	return one[RateLimit](ctx, q, `DELETE FROM rate_limits WHERE workspace_id = $1 AND id = $2 RETURNING `+rateLimitCols, ws, id)
}

// RateWindow is one fixed window a call was counted in (or refused by): the limit, the
// window ("minute" or "day"), its start, the limit's value and the count after the call.
// Taken is false when the window was full: the call was not counted there.
type RateWindow struct {
	LimitID     string    `db:"limit_id"`
	Subject     string    `db:"subject"`
	Kind        string    `db:"window_kind"`
	WindowStart time.Time `db:"window_start"`
	Max         int       `db:"max"`
	Count       int       `db:"count"`
	Taken       bool      `db:"taken"`
	Now         time.Time `db:"now"`
}

// RateLimitTake counts one call of principal on connection conn and exposed tool tool in
// workspace ws against every limit that applies, in one statement: for each limit and each
// of its windows (UTC minute, UTC day: date_bin from the epoch) the counter row is
// inserted with 1 or incremented — unless it already holds the limit, in which case it is
// left alone (Taken false). Concurrent calls serialise on the counter rows, so no window
// ever counts more than its limit. No matching limit: no rows. When some window is full
// and others were incremented, the caller gives the increments back (RateLimitGiveBack).
func RateLimitTake(ctx context.Context, q Querier, ws, conn, tool, principal string) ([]RateWindow, error) {
	return collect[RateWindow](ctx, q, `WITH lim AS (
			SELECT id, per_minute, per_day, CASE WHEN principal IS NULL THEN '' ELSE $4 END AS subject
			FROM rate_limits
			WHERE workspace_id = $1 AND (connection_id IS NULL OR connection_id = $2::uuid)
			  AND (tool IS NULL OR tool = $3) AND (principal IS NULL OR principal = '*' OR principal = $4)
		), win AS (
			SELECT id, subject, 'minute' AS kind, date_bin('1 minute', now(), timestamptz 'epoch') AS start, per_minute AS max
			FROM lim WHERE per_minute IS NOT NULL
			UNION ALL
			SELECT id, subject, 'day', date_bin('1 day', now(), timestamptz 'epoch'), per_day
			FROM lim WHERE per_day IS NOT NULL
		), up AS (
			INSERT INTO rate_limit_counters AS c (limit_id, subject, window_kind, window_start, count, max)
			SELECT id, subject, kind, start, 1, max FROM win ORDER BY id, kind
			ON CONFLICT (limit_id, subject, window_kind, window_start)
			DO UPDATE SET count = c.count + 1, max = EXCLUDED.max WHERE c.count < EXCLUDED.max
			RETURNING limit_id, window_kind, count
		)
		SELECT win.id::text AS limit_id, win.subject, win.kind AS window_kind, win.start AS window_start, win.max,
			COALESCE(up.count, win.max) AS count, up.count IS NOT NULL AS taken, now() AS now
		FROM win LEFT JOIN up ON up.limit_id = win.id AND up.window_kind = win.kind
		ORDER BY win.id, win.kind`, ws, nullUUID(conn), tool, principal)
}

// RateLimitGiveBack takes back one count from each window of ws (the windows of a call
// that was refused by another of its windows).
func RateLimitGiveBack(ctx context.Context, q Querier, ws []RateWindow) error {
	for _, w := range ws {
		if _, err := q.Exec(ctx, `UPDATE rate_limit_counters SET count = GREATEST(count - 1, 0)
			WHERE limit_id = $1 AND subject = $2 AND window_kind = $3 AND window_start = $4`,
			w.LimitID, w.Subject, w.Kind, w.WindowStart); err != nil {
			return Interpret(err)
		}
	}
	return nil
}

// RateUsage is the count of one limit's current window for one subject (” when shared).
type RateUsage struct {
	LimitID     string    `db:"limit_id"`
	Subject     string    `db:"subject"`
	Kind        string    `db:"window_kind"`
	WindowStart time.Time `db:"window_start"`
	Count       int       `db:"count"`
}

// RateLimitUsage returns the current minute's and day's counts of workspace ws's limits,
// ordered by limit, window and count (highest first); per-member limits have one row per
// member who called in the window.
func RateLimitUsage(ctx context.Context, q Querier, ws string) ([]RateUsage, error) {
	if !IsUUID(ws) {
		return nil, notFound()
	}
	return collect[RateUsage](ctx, q, `SELECT c.limit_id::text AS limit_id, c.subject, c.window_kind, c.window_start, c.count
		FROM rate_limit_counters c JOIN rate_limits l ON l.id = c.limit_id
		WHERE l.workspace_id = $1 AND c.count > 0 AND (
			(c.window_kind = 'minute' AND c.window_start = date_bin('1 minute', now(), timestamptz 'epoch')) OR
			(c.window_kind = 'day' AND c.window_start = date_bin('1 day', now(), timestamptz 'epoch')))
		ORDER BY c.limit_id, c.window_kind, c.count DESC, c.subject`, ws)
}

// RateCounterSweep deletes counters whose window ended before now minus a day (kept that
// long for inspection) and returns how many.
func RateCounterSweep(ctx context.Context, q Querier) (int64, error) {
	tag, err := q.Exec(ctx, `DELETE FROM rate_limit_counters WHERE window_start < now() - interval '2 days'`)
	return tag.RowsAffected(), Interpret(err)
}

// nullUUID is s, or nil for "" (a uuid parameter that matches nothing).
func nullUUID(s string) any {
	if s == "" || !IsUUID(s) {
		return nil
	}
	return s
}
