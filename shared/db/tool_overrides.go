package db

import (
	"context"
	"encoding/json"
	"time"
)

// ToolOverride is one workspace's override of one upstream tool of a connection
// (tool_overrides, docs/OVERRIDES.md). A nil field is not overridden: ExposedName renames
// the tool on the aggregate endpoint, Title and Description replace the upstream's,
// Annotations (a JSON object) are merged into the upstream's annotations member by member
// (a null member removes it), and Hidden withholds the tool from tools/list and tools/call.
type ToolOverride struct {
	WorkspaceID  string          `db:"workspace_id"`
	ConnectionID string          `db:"connection_id"`
	UpstreamName string          `db:"upstream_name"`
	ExposedName  *string         `db:"exposed_name"`
	Title        *string         `db:"title"`
	Description  *string         `db:"description"`
	Hidden       bool            `db:"hidden"`
	Annotations  json.RawMessage `db:"annotations"`
	CreatedBy    string          `db:"created_by"`
	UpdatedBy    string          `db:"updated_by"`
	CreatedAt    time.Time       `db:"created_at"`
	UpdatedAt    time.Time       `db:"updated_at"`
	// Inserted is set by ToolOverrideUpsert: true when the tool had no override before.
	Inserted bool `db:"inserted"`
}

const toolOverrideCols = `workspace_id, connection_id, upstream_name, exposed_name, title, description, hidden,
	annotations, created_by, updated_by, created_at, updated_at`

// ToolOverrideUpsert writes o (created_by is kept on a replace; updated_by is o.UpdatedBy)
// and returns the row with Inserted. An exposed name another override of the workspace
// holds is CONFLICT (tool_overrides_exposed_uq); a missing workspace or connection is
// INVALID_REFERENCE.
func ToolOverrideUpsert(ctx context.Context, q Querier, o *ToolOverride) (*ToolOverride, error) {
	return one[ToolOverride](ctx, q, `INSERT INTO tool_overrides
		(workspace_id, connection_id, upstream_name, exposed_name, title, description, hidden, annotations, created_by, updated_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
		ON CONFLICT (workspace_id, connection_id, upstream_name) DO UPDATE SET exposed_name = EXCLUDED.exposed_name,
			title = EXCLUDED.title, description = EXCLUDED.description, hidden = EXCLUDED.hidden,
			annotations = EXCLUDED.annotations, updated_by = EXCLUDED.updated_by, updated_at = now()
		RETURNING `+toolOverrideCols+`, (xmax = 0) AS inserted`,
		o.WorkspaceID, o.ConnectionID, o.UpstreamName, o.ExposedName, o.Title, o.Description, o.Hidden,
		nullText(o.Annotations), o.UpdatedBy)
}

// ToolOverrideGet returns workspace ws's override of connection conn's tool upstream, or
// NOT_FOUND.
func ToolOverrideGet(ctx context.Context, q Querier, ws, conn, upstream string) (*ToolOverride, error) {
	if !IsUUID(ws) || !IsUUID(conn) {
		return nil, notFound()
	}
	return one[ToolOverride](ctx, q, `SELECT `+toolOverrideCols+` FROM tool_overrides
		WHERE workspace_id = $1 AND connection_id = $2 AND upstream_name = $3`, ws, conn, upstream)
}

// ToolOverrideByExposed returns workspace ws's override whose exposed name is name, or
// NOT_FOUND.
func ToolOverrideByExposed(ctx context.Context, q Querier, ws, name string) (*ToolOverride, error) {
	if !IsUUID(ws) {
		return nil, notFound()
	}
	return one[ToolOverride](ctx, q, `SELECT `+toolOverrideCols+` FROM tool_overrides
		WHERE workspace_id = $1 AND exposed_name = $2`, ws, name)
}

// ToolOverrideList returns workspace ws's overrides, of connection conn only when conn is
// not "", ordered by connection and upstream name.
func ToolOverrideList(ctx context.Context, q Querier, ws, conn string) ([]ToolOverride, error) {
	if !IsUUID(ws) || (conn != "" && !IsUUID(conn)) {
		return nil, notFound()
	}
	return collect[ToolOverride](ctx, q, `SELECT `+toolOverrideCols+` FROM tool_overrides
		WHERE workspace_id = $1 AND ($2 = '' OR connection_id::text = $2)
		ORDER BY connection_id, upstream_name`, ws, conn)
}

// ToolOverrideDelete deletes workspace ws's override of connection conn's tool upstream
// and returns it; NOT_FOUND when there is none.
func ToolOverrideDelete(ctx context.Context, q Querier, ws, conn, upstream string) (*ToolOverride, error) {
	if !IsUUID(ws) || !IsUUID(conn) {
		return nil, notFound()
	}
	return one[ToolOverride](ctx, q, `DELETE FROM tool_overrides
		WHERE workspace_id = $1 AND connection_id = $2 AND upstream_name = $3 RETURNING `+toolOverrideCols, ws, conn, upstream)
}

// ConnectionToolByExposedVisible returns the tool, of any status, of a connection visible
// in workspace ws (global or ws's own, enabled or not) whose exposed name is name, or
// NOT_FOUND: the generated names an override's rename must not take.
func ConnectionToolByExposedVisible(ctx context.Context, q Querier, ws, name string) (*ConnectionTool, error) {
	if !IsUUID(ws) {
		return nil, notFound()
	}
	return one[ConnectionTool](ctx, q, `SELECT t.connection_id, t.upstream_name, t.exposed_name, t.title,
		t.description, t.input_schema, t.output_schema, t.annotations, t.definition, t.definition_digest, t.approved_digest,
		t.status, t.first_listed_at, t.listed_at
		FROM mcp_connection_tools t JOIN mcp_connections c ON c.id = t.connection_id
		WHERE (c.workspace_id IS NULL OR c.workspace_id = $1) AND t.exposed_name = $2`, ws, name)
}
