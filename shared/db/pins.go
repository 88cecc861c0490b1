package db

import (
	"context"
	"time"
)

// ---- chat pins (chat_mcp_pins; docs/DESIGN.md §7) ----

// ChatPin is one chat_mcp_pins row with what is shown of it: the pinned connection's
// name, scope columns and enabled flag, and the workspace of the pin's chat (to tell
// whether the pin is usable).
type ChatPin struct {
	ID                    string    `db:"id"`
	ChatID                string    `db:"chat_id"`
	ConnectionID          string    `db:"connection_id"`
	ConnectionName        string    `db:"connection_name"`
	ConnectionWorkspaceID *string   `db:"connection_workspace_id"` // nil = global
	ConnectionProjectID   *string   `db:"connection_project_id"`   // non-nil = project-scoped
	Enabled               bool      `db:"enabled"`                 // the connection's
	CreatedBy             string    `db:"created_by"`
	CreatedAt             time.Time `db:"created_at"`
	ChatWorkspaceID       string    `db:"chat_workspace_id"`
}

// PinnedConnection is what pin resolution reads of a connection pinned to a chat.
type PinnedConnection struct {
	ID          string  `db:"id"`
	Enabled     bool    `db:"enabled"`
	WorkspaceID *string `db:"workspace_id"` // nil = global
	ProjectID   *string `db:"project_id"`   // non-nil = project-scoped
}

const chatPinSelect = `SELECT p.id, p.chat_id, p.connection_id, c.name AS connection_name,
	c.workspace_id AS connection_workspace_id, c.project_id AS connection_project_id, c.enabled,
	p.created_by, p.created_at, ch.workspace_id AS chat_workspace_id
	FROM chat_mcp_pins p JOIN mcp_connections c ON c.id = p.connection_id
	JOIN chats ch ON ch.id = p.chat_id `

// ChatPinList returns the pins of chat chatID, oldest first (created_at, then id). A
// chat without pins, an unknown chat and a malformed id all give an empty, non-nil list.
func ChatPinList(ctx context.Context, q Querier, chatID string) ([]ChatPin, error) {
	if !IsUUID(chatID) {
		return []ChatPin{}, nil
	}
	out, err := collect[ChatPin](ctx, q, chatPinSelect+`WHERE p.chat_id = $1 ORDER BY p.created_at, p.id`, chatID)
	if out == nil && err == nil {
		out = []ChatPin{}
	}
	return out, err
}

// ChatPinGet returns pin pinID of chat chatID; NOT_FOUND when the chat has no such pin
// (also for malformed ids).
func ChatPinGet(ctx context.Context, q Querier, chatID, pinID string) (*ChatPin, error) {
	if !IsUUID(chatID) || !IsUUID(pinID) {
		return nil, notFound()
	}
	return one[ChatPin](ctx, q, chatPinSelect+`WHERE p.id = $1 AND p.chat_id = $2`, pinID, chatID)
}

// ChatPinCreate pins connectionID to chatID, recording createdBy (a principal subject),
// and returns the new pin's id. Errors: CONFLICT (that connection is already pinned to
// that chat: unique (chat_id, connection_id)), INVALID_REFERENCE (unknown chat or
// connection), VALIDATION_ERROR (malformed id). Scope rules are the caller's.
func ChatPinCreate(ctx context.Context, q Querier, chatID, connectionID, createdBy string) (string, error) {
	var id string
	err := q.QueryRow(ctx, `INSERT INTO chat_mcp_pins (chat_id, connection_id, created_by)
		VALUES ($1, $2, $3) RETURNING id`, chatID, connectionID, createdBy).Scan(&id)
	return id, Interpret(err)
}

// ChatPinDelete hard-deletes pin pinID of chat chatID; NOT_FOUND when the chat has no
// such pin (also for malformed ids).
func ChatPinDelete(ctx context.Context, q Querier, chatID, pinID string) error {
	if !IsUUID(chatID) || !IsUUID(pinID) {
		return notFound()
	}
	tag, err := q.Exec(ctx, `DELETE FROM chat_mcp_pins WHERE id = $1 AND chat_id = $2`, pinID, chatID)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// ChatPinnedConnections returns the connections pinned to chat chatID, in any state, in
// pin order (oldest first): one indexed query, run on every tools/list of a chat.
// A malformed id is VALIDATION_ERROR (Postgres rejects it as a uuid).
func ChatPinnedConnections(ctx context.Context, q Querier, chatID string) ([]PinnedConnection, error) {
	return collect[PinnedConnection](ctx, q, `SELECT c.id, c.enabled, c.workspace_id, c.project_id
		FROM chat_mcp_pins p JOIN mcp_connections c ON c.id = p.connection_id
		WHERE p.chat_id = $1 ORDER BY p.created_at, p.id`, chatID)
}

// ConnectionNameByExposedTool returns the name of the connection that exposes tool (an
// exposed name, mcp_connection_tools.exposed_name); NOT_FOUND for an unknown name.
func ConnectionNameByExposedTool(ctx context.Context, q Querier, tool string) (string, error) {
	var name string
	err := q.QueryRow(ctx, `SELECT c.name FROM mcp_connection_tools t
		JOIN mcp_connections c ON c.id = t.connection_id WHERE t.exposed_name = $1`, tool).Scan(&name)
	if err != nil {
		return "", Interpret(err)
	}
	return name, nil
}
