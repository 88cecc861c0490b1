package pins

import (
	"context"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
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

// pinView turns a stored pin into a Pin: its scope and whether resolution uses it.
func pinView(r *db.ChatPin) *Pin {
	c := db.Connection{WorkspaceID: r.ConnectionWorkspaceID, ProjectID: r.ConnectionProjectID}
	return &Pin{ID: r.ID, ChatID: r.ChatID, ConnectionID: r.ConnectionID, ConnectionName: r.ConnectionName,
		Scope: c.Scope(), Enabled: r.Enabled, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt,
		Usable: r.Enabled && inScope(r.ChatWorkspaceID, Conn{WorkspaceID: r.ConnectionWorkspaceID, ProjectID: r.ConnectionProjectID})}
}

// errNoPin is the NOT_FOUND of a pin the chat does not have.
func errNoPin(err error) error {
	return apperr.Wrap(err, apperr.NotFound, "no such pin")
}

// PinList returns the pins of chat chatID, oldest first (db.ChatPinList). A chat without
// pins (or an unknown chat) gives an empty list.
func PinList(ctx context.Context, q db.Querier, chatID string) ([]Pin, error) {
	rows, err := db.ChatPinList(ctx, q, chatID)
	if err != nil {
		return nil, err
	}
	out := make([]Pin, 0, len(rows))
	for i := range rows {
		out = append(out, *pinView(&rows[i]))
	}
	return out, nil
}

// PinCreate pins connectionID to chatID and returns the pin. A second pin of the same
// connection to the same chat is CONFLICT (unique (chat_id, connection_id)); an unknown
// chat or connection is INVALID_REFERENCE. Scope checks are the caller's (Service.Add).
func PinCreate(ctx context.Context, q db.Querier, chatID, connectionID, createdBy string) (*Pin, error) {
	id, err := db.ChatPinCreate(ctx, q, chatID, connectionID, createdBy)
	if err != nil {
		if apperr.CodeOf(err) == apperr.Conflict {
			return nil, apperr.Wrap(err, apperr.Conflict, "this connection is already pinned to this chat")
		}
		return nil, err
	}
	return PinGet(ctx, q, chatID, id)
}

// PinGet returns pin pinID of chat chatID, or NOT_FOUND "no such pin" (also for malformed
// ids or a pin of another chat).
func PinGet(ctx context.Context, q db.Querier, chatID, pinID string) (*Pin, error) {
	r, err := db.ChatPinGet(ctx, q, chatID, pinID)
	if err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return nil, errNoPin(err)
		}
		return nil, err
	}
	return pinView(r), nil
}

// PinDelete hard-deletes pin pinID of chat chatID (seed: "Hard-deleted no unpin") and
// returns it as it was; NOT_FOUND "no such pin" when the chat has no such pin.
func PinDelete(ctx context.Context, q db.Querier, chatID, pinID string) (*Pin, error) {
	p, err := PinGet(ctx, q, chatID, pinID)
	if err != nil {
		return nil, err
	}
	if err := db.ChatPinDelete(ctx, q, chatID, pinID); err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return nil, errNoPin(err)
		}
		return nil, err
	}
	return p, nil
}
