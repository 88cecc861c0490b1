package db

import (
	"context"
	"encoding/json"
)

// ConnectionSkillsSet replaces connection id's stored skills summary (a JSON array written
// by the refresh; migrations/00041). nil stores NULL: nothing listed.
func ConnectionSkillsSet(ctx context.Context, q Querier, id string, summary json.RawMessage) error {
	var arg any
	if summary != nil {
		arg = string(summary)
	}
	_, err := q.Exec(ctx, `UPDATE mcp_connections SET skills = $2::json WHERE id = $1`, id, arg)
	return Interpret(err)
}

// ConnectionSkillsGet returns connection id's stored skills summary (nil: none listed).
// NOT_FOUND when the connection does not exist.
func ConnectionSkillsGet(ctx context.Context, q Querier, id string) (json.RawMessage, error) {
	var raw *string
	if err := q.QueryRow(ctx, `SELECT skills::text FROM mcp_connections WHERE id = $1`, id).Scan(&raw); err != nil {
		return nil, Interpret(err)
	}
	if raw == nil {
		return nil, nil
	}
	return json.RawMessage(*raw), nil
}
