package db

import (
	"context"
	"encoding/json"
)

// ConnectionUIResourcesSet replaces connection id's listed MCP Apps views (the upstream's
// ui:// resource objects as listed; migrations/00017). nil stores NULL: nothing listed.
func ConnectionUIResourcesSet(ctx context.Context, q Querier, id string, defs []json.RawMessage) error {
	var arg any
	if defs != nil {
		b, err := json.Marshal(defs)
		if err != nil {
			return err
		}
		arg = string(b)
	}
	_, err := q.Exec(ctx, `UPDATE mcp_connections SET ui_resources = $2::json WHERE id = $1`, id, arg)
	return Interpret(err)
}

// ConnectionUIResourcesVisible returns the listed MCP Apps views of the connections
// ConnectionListVisible returns for workspace ws, by connection id (connections without
// any are absent).
func ConnectionUIResourcesVisible(ctx context.Context, q Querier, ws string) (map[string][]json.RawMessage, error) {
	rows, err := q.Query(ctx, `SELECT id, ui_resources::text FROM mcp_connections
		WHERE enabled AND (workspace_id IS NULL OR workspace_id = $1) AND ui_resources IS NOT NULL`, ws)
	if err != nil {
		return nil, Interpret(err)
	}
	defer rows.Close()
	out := map[string][]json.RawMessage{}
	for rows.Next() {
		var id, raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, Interpret(err)
		}
		var defs []json.RawMessage
		if json.Unmarshal([]byte(raw), &defs) == nil && len(defs) > 0 {
			out[id] = defs
		}
	}
	return out, Interpret(rows.Err())
}
