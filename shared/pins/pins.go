package pins

import (
	"context"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/jackc/pgx/v5"
)

// Pin is one chat pin (chat_mcp_pins) with what a client needs to show it: the pinned
// connection's name, scope and state. Usable reports whether resolution uses the pin
// (enabled ∧ global or the chat's workspace ∧ not project-scoped; docs/DESIGN.md §7).
type Pin struct {
	ID             string    `json:"id"`
	ChatID         string    `json:"chatId"`
	ConnectionID   string    `json:"connectionId"`
	ConnectionName string    `json:"connectionName"`
	Scope          string    `json:"scope"` // global | workspace | project
	Enabled        bool      `json:"enabled"`
	Usable         bool      `json:"usable"`
	CreatedBy      string    `json:"createdBy"`
	CreatedAt      time.Time `json:"createdAt"`
}

const pinCols = `p.id, p.chat_id, p.connection_id, c.name, c.workspace_id, c.project_id, c.enabled,
	p.created_by, p.created_at, ch.workspace_id`

const pinFrom = ` FROM chat_mcp_pins p JOIN mcp_connections c ON c.id = p.connection_id
	JOIN chats ch ON ch.id = p.chat_id `

// scanPin is the one scan helper for pin rows (pinCols).
func scanPin(row pgx.Row) (*Pin, error) {
	var p Pin
	var cw, cp *string
	var chatWS string
	if err := row.Scan(&p.ID, &p.ChatID, &p.ConnectionID, &p.ConnectionName, &cw, &cp, &p.Enabled,
		&p.CreatedBy, &p.CreatedAt, &chatWS); err != nil {
		return nil, err
	}
	c := db.Connection{WorkspaceID: cw, ProjectID: cp}
	p.Scope = c.Scope()
	p.Usable = p.Enabled && inScope(chatWS, Conn{WorkspaceID: cw, ProjectID: cp})
	return &p, nil
}

// PinList returns the pins of chat chatID, oldest first. A chat without pins (or an
// unknown chat) gives an empty list.
func PinList(ctx context.Context, q db.Querier, chatID string) ([]Pin, error) {
	if !db.IsUUID(chatID) {
		return []Pin{}, nil
	}
	rows, err := q.Query(ctx, `SELECT `+pinCols+pinFrom+`WHERE p.chat_id = $1 ORDER BY p.created_at, p.id`, chatID)
	if err != nil {
		return nil, db.Interpret(err)
	}
	defer rows.Close()
	out := []Pin{}
	for rows.Next() {
		p, err := scanPin(rows)
		if err != nil {
			return nil, db.Interpret(err)
		}
		out = append(out, *p)
	}
	return out, db.Interpret(rows.Err())
}

// PinCreate pins connectionID to chatID and returns the pin. A second pin of the same
// connection to the same chat is CONFLICT (unique (chat_id, connection_id)); an unknown
// chat or connection is INVALID_REFERENCE. Scope checks are the caller's (Service.Add).
func PinCreate(ctx context.Context, q db.Querier, chatID, connectionID, createdBy string) (*Pin, error) {
	var id string
	err := q.QueryRow(ctx, `INSERT INTO chat_mcp_pins (chat_id, connection_id, created_by)
		VALUES ($1, $2, $3) RETURNING id`, chatID, connectionID, createdBy).Scan(&id)
	if err != nil {
		if apperr.CodeOf(db.Interpret(err)) == apperr.Conflict {
			return nil, apperr.Wrap(err, apperr.Conflict, "this connection is already pinned to this chat")
		}
		return nil, db.Interpret(err)
	}
	return PinGet(ctx, q, chatID, id)
}

// PinGet returns pin pinID of chat chatID, or NOT_FOUND (also for malformed ids or a pin
// of another chat).
func PinGet(ctx context.Context, q db.Querier, chatID, pinID string) (*Pin, error) {
	if !db.IsUUID(chatID) || !db.IsUUID(pinID) {
		return nil, apperr.New(apperr.NotFound, "no such pin")
	}
	p, err := scanPin(q.QueryRow(ctx, `SELECT `+pinCols+pinFrom+`WHERE p.id = $1 AND p.chat_id = $2`, pinID, chatID))
	if err != nil {
		if apperr.CodeOf(db.Interpret(err)) == apperr.NotFound {
			return nil, apperr.New(apperr.NotFound, "no such pin")
		}
		return nil, db.Interpret(err)
	}
	return p, nil
}

// PinDelete hard-deletes pin pinID of chat chatID (seed: "Hard-deleted no unpin") and
// returns it as it was; NOT_FOUND when the chat has no such pin.
func PinDelete(ctx context.Context, q db.Querier, chatID, pinID string) (*Pin, error) {
	p, err := PinGet(ctx, q, chatID, pinID)
	if err != nil {
		return nil, err
	}
	tag, err := q.Exec(ctx, `DELETE FROM chat_mcp_pins WHERE id = $1 AND chat_id = $2`, pinID, chatID)
	if err != nil {
		return nil, db.Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return nil, apperr.New(apperr.NotFound, "no such pin")
	}
	return p, nil
}
