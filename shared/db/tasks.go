package db

import (
	"context"
	"encoding/json"
	"time"
)

// Task statuses (MCP 2025-11-25 "Tasks").
const (
	TaskWorking   = "working"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// Task is one mcp_tasks row (see migrations/00005_tasks.sql).
type Task struct {
	ID             string          `db:"id"`
	WorkspaceID    string          `db:"workspace_id"`
	Principal      string          `db:"principal"`
	ConnectionID   *string         `db:"connection_id"`
	Tool           string          `db:"tool"`
	UpstreamTaskID *string         `db:"upstream_task_id"`
	Status         string          `db:"status"`
	StatusMessage  *string         `db:"status_message"`
	Result         json.RawMessage `db:"result"`
	Error          json.RawMessage `db:"error"`
	TTLMS          int64           `db:"ttl_ms"`
	// TTLUnlimited: the upstream of a routed task gave it ttl null (unlimited); TTLMS
	// still bounds the row's life, the wire shows null (migrations/00040).
	TTLUnlimited   bool      `db:"ttl_unlimited"`
	PollIntervalMS int       `db:"poll_interval_ms"`
	CreatedAt      time.Time `db:"created_at"`
	LastUpdatedAt  time.Time `db:"last_updated_at"`
	ExpiresAt      time.Time `db:"expires_at"`
}

// Terminal reports whether the task's status is final.
func (t *Task) Terminal() bool {
	return t.Status == TaskCompleted || t.Status == TaskFailed || t.Status == TaskCancelled
}

const taskCols = `id, workspace_id, principal, connection_id, tool, upstream_task_id, status, status_message,
	result, error, ttl_ms, ttl_unlimited, poll_interval_ms, created_at, last_updated_at, expires_at`

// TaskInsert writes a new task (status working unless t.Status says otherwise) expiring
// ttl after now, and returns the row.
func TaskInsert(ctx context.Context, q Querier, t *Task) (*Task, error) {
	status := t.Status
	if status == "" {
		status = TaskWorking
	}
	return one[Task](ctx, q, `INSERT INTO mcp_tasks (id, workspace_id, principal, connection_id, tool,
		upstream_task_id, status, status_message, result, error, ttl_ms, poll_interval_ms, expires_at, ttl_unlimited)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::json, $10::json, $11, $12, now() + $13::bigint * interval '1 millisecond', $14)
		RETURNING `+taskCols,
		t.ID, t.WorkspaceID, t.Principal, t.ConnectionID, t.Tool, t.UpstreamTaskID, status, t.StatusMessage,
		nullText(t.Result), nullText(t.Error), t.TTLMS, t.PollIntervalMS, t.TTLMS, t.TTLUnlimited)
}

// TaskGet returns task id when it belongs to workspace ws and principal; NOT_FOUND
// otherwise — another owner's task and an unknown id are indistinguishable.
func TaskGet(ctx context.Context, q Querier, id, ws, principal string) (*Task, error) {
	if !IsUUID(ws) {
		return nil, notFound()
	}
	return one[Task](ctx, q, `SELECT `+taskCols+` FROM mcp_tasks
		WHERE id = $1 AND workspace_id = $2 AND principal = $3 AND expires_at > now()`, id, ws, principal)
}

// TaskList returns the owner's live tasks, newest first, at most limit, starting after
// the task createdBefore/idBefore (keyset pagination; zero values: from the newest).
func TaskList(ctx context.Context, q Querier, ws, principal string, limit int, createdBefore time.Time, idBefore string) ([]Task, error) {
	if createdBefore.IsZero() {
		return collect[Task](ctx, q, `SELECT `+taskCols+` FROM mcp_tasks
			WHERE workspace_id = $1 AND principal = $2 AND expires_at > now()
			ORDER BY created_at DESC, id DESC LIMIT $3`, ws, principal, limit)
	}
	return collect[Task](ctx, q, `SELECT `+taskCols+` FROM mcp_tasks
		WHERE workspace_id = $1 AND principal = $2 AND expires_at > now() AND (created_at, id) < ($4, $5)
		ORDER BY created_at DESC, id DESC LIMIT $3`, ws, principal, limit, createdBefore, idBefore)
}

// TaskFinish records a working task's outcome (completed with result, or failed with a
// JSON-RPC error object or a failed result) and returns the row; a task no longer working
// (cancelled meanwhile) is left as it is and returned unchanged. NOT_FOUND when absent.
func TaskFinish(ctx context.Context, q Querier, id, status string, result, rpcError json.RawMessage, message string) (*Task, error) {
	return one[Task](ctx, q, `UPDATE mcp_tasks SET
		status = CASE WHEN status = 'working' THEN $2 ELSE status END,
		result = CASE WHEN status = 'working' THEN $3::json ELSE result END,
		error = CASE WHEN status = 'working' THEN $4::json ELSE error END,
		status_message = CASE WHEN status = 'working' THEN NULLIF($5, '') ELSE status_message END,
		last_updated_at = CASE WHEN status = 'working' THEN now() ELSE last_updated_at END
		WHERE id = $1 RETURNING `+taskCols, id, status, nullText(result), nullText(rpcError), message)
}

// TaskSetStatus records the status an upstream reported for its own task (a routed task)
// unless the row is already terminal, and returns the row.
func TaskSetStatus(ctx context.Context, q Querier, id, status, message string) (*Task, error) {
	return one[Task](ctx, q, `UPDATE mcp_tasks SET
		status = CASE WHEN status IN ('working', 'input_required') THEN $2 ELSE status END,
		status_message = CASE WHEN status IN ('working', 'input_required') THEN NULLIF($3, '') ELSE status_message END,
		last_updated_at = CASE WHEN status IN ('working', 'input_required') AND status <> $2 THEN now() ELSE last_updated_at END
		WHERE id = $1 RETURNING `+taskCols, id, status, message)
}

// TaskKeepResult stores a routed task's result the first time it is fetched and reports
// whether this call stored it (false: it was stored before).
func TaskKeepResult(ctx context.Context, q Querier, id string, result json.RawMessage) (bool, error) {
	tag, err := q.Exec(ctx, `UPDATE mcp_tasks SET result = $2::json,
		status = CASE WHEN status IN ('working', 'input_required') THEN 'completed' ELSE status END,
		last_updated_at = now() WHERE id = $1 AND result IS NULL`, id, nullText(result))
	if err != nil {
		return false, Interpret(err)
	}
	return tag.RowsAffected() == 1, nil
}

// TaskKeepError stores the JSON-RPC error a routed task's upstream answered for its
// result, the first time (no result or error stored yet): the task becomes failed unless
// it was cancelled.
func TaskKeepError(ctx context.Context, q Querier, id string, rpcError json.RawMessage, message string) error {
	_, err := q.Exec(ctx, `UPDATE mcp_tasks SET error = $2::json,
		status = CASE WHEN status = 'cancelled' THEN status ELSE 'failed' END,
		status_message = COALESCE(NULLIF($3, ''), status_message),
		last_updated_at = now() WHERE id = $1 AND result IS NULL AND error IS NULL`, id, nullText(rpcError), message)
	return Interpret(err)
}

// TaskCancel marks the owner's working task cancelled and returns the row (a terminal
// task is returned unchanged); NOT_FOUND for an unknown or foreign id.
func TaskCancel(ctx context.Context, q Querier, id, ws, principal string) (*Task, error) {
	if !IsUUID(ws) {
		return nil, notFound()
	}
	return one[Task](ctx, q, `UPDATE mcp_tasks SET
		status = CASE WHEN status = 'working' THEN 'cancelled' ELSE status END,
		status_message = CASE WHEN status = 'working' THEN 'cancelled by the client' ELSE status_message END,
		last_updated_at = CASE WHEN status = 'working' THEN now() ELSE last_updated_at END
		WHERE id = $1 AND workspace_id = $2 AND principal = $3 AND expires_at > now()
		RETURNING `+taskCols, id, ws, principal)
}

// TaskClaim marks a working task as taken by a worker and reports whether this call took
// it (false: another worker did, or the task is no longer working).
func TaskClaim(ctx context.Context, q Querier, id string) (bool, error) {
	tag, err := q.Exec(ctx, `UPDATE mcp_tasks SET claimed_at = now()
		WHERE id = $1 AND status = 'working' AND claimed_at IS NULL`, id)
	if err != nil {
		return false, Interpret(err)
	}
	return tag.RowsAffected() == 1, nil
}

// TaskStatusOf returns task id's status ("" when the row is gone).
func TaskStatusOf(ctx context.Context, q Querier, id string) (string, error) {
	rows, err := collect[struct {
		Status string `db:"status"`
	}](ctx, q, `SELECT status FROM mcp_tasks WHERE id = $1`, id)
	if err != nil || len(rows) == 0 {
		return "", err
	}
	return rows[0].Status, nil
}

// TasksDeleteExpired deletes the tasks past their expiry and returns how many.
func TasksDeleteExpired(ctx context.Context, q Querier) (int64, error) {
	tag, err := q.Exec(ctx, `DELETE FROM mcp_tasks WHERE expires_at <= now()`)
	if err != nil {
		return 0, Interpret(err)
	}
	return tag.RowsAffected(), nil
}
