package db

import (
	"context"
	"encoding/json"

	"github.com/agentpack/gateway/shared/apperr"
)

// ConnectionToolsActive returns connection id's active tools ordered by exposed name: the
// tools its catalog part lists (the one-connection half of ConnectionToolsVisible, same
// order and collation).
func ConnectionToolsActive(ctx context.Context, q Querier, id string) ([]ConnectionTool, error) {
	return collect[ConnectionTool](ctx, q, `SELECT `+toolCols+` FROM mcp_connection_tools
		WHERE connection_id = $1 AND status = 'active' ORDER BY exposed_name`, id)
}

// ConnectionUIResources returns connection id's listed MCP Apps views, as
// ConnectionUIResourcesVisible returns them for one connection (nil: none listed, or a
// value that is not a non-empty JSON array).
func ConnectionUIResources(ctx context.Context, q Querier, id string) ([]json.RawMessage, error) {
	var raw *string
	if err := q.QueryRow(ctx, `SELECT ui_resources::text FROM mcp_connections WHERE id = $1`, id).Scan(&raw); err != nil {
		if err := Interpret(err); apperr.CodeOf(err) != apperr.NotFound {
			return nil, err
		}
		return nil, nil
	}
	if raw == nil {
		return nil, nil
	}
	var defs []json.RawMessage
	if json.Unmarshal([]byte(*raw), &defs) != nil || len(defs) == 0 {
		return nil, nil
	}
	return defs, nil
}

// ConnectionIDsVisible returns the ids of the enabled connections visible in workspace ws
// (the rows ConnectionListVisible returns, ids only): what an incremental catalog update
// checks its index against.
func ConnectionIDsVisible(ctx context.Context, q Querier, ws string) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT id::text FROM mcp_connections
		WHERE enabled AND (workspace_id IS NULL OR workspace_id = $1)`, ws)
	if err != nil {
		return nil, Interpret(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, Interpret(err)
		}
		ids = append(ids, id)
	}
	return ids, Interpret(rows.Err())
}
