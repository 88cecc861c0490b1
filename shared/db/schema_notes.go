package db

import (
	"context"
	"encoding/json"
)

// Schema note actions (ToolSchemaNote.Action).
const (
	SchemaNormalized = "normalized" // the tool is served with the normalised inputSchema
	SchemaDropped    = "dropped"    // the tool is not served
)

// ToolSchemaNote says what the last successful listing did to one upstream tool's schema
// (mcp_connections.tool_schema_notes, migration 00004).
type ToolSchemaNote struct {
	Name   string `json:"name"`   // the upstream's tool name ("" when it sent none)
	Action string `json:"action"` // SchemaNormalized or SchemaDropped
	Reason string `json:"reason"` // e.g. `inputSchema is {}; set to {"type":"object"}`
}

// ConnectionSchemaNotesSet replaces connection id's schema notes with notes (nil clears
// them). A missing connection is not an error (nothing is written).
func ConnectionSchemaNotesSet(ctx context.Context, q Querier, id string, notes []ToolSchemaNote) error {
	if notes == nil {
		notes = []ToolSchemaNote{}
	}
	b, err := json.Marshal(notes)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `UPDATE mcp_connections SET tool_schema_notes = $2::jsonb WHERE id = $1`, id, string(b))
	return Interpret(err)
}

// ConnectionSchemaNotesGet returns connection id's schema notes in listing order (empty,
// not nil, when there are none). Errors: NOT_FOUND for an unknown id, UNAVAILABLE.
func ConnectionSchemaNotesGet(ctx context.Context, q Querier, id string) ([]ToolSchemaNote, error) {
	var raw []byte
	if err := q.QueryRow(ctx, `SELECT tool_schema_notes FROM mcp_connections WHERE id = $1`, id).Scan(&raw); err != nil {
		return nil, Interpret(err)
	}
	notes := []ToolSchemaNote{}
	if err := json.Unmarshal(raw, &notes); err != nil {
		return nil, err
	}
	return notes, nil
}
