package pins

import (
	"context"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
)

// errNoPin is the NOT_FOUND of a pin the chat does not have.
func errNoPin(err error) error {
	return apperr.Wrap(err, apperr.NotFound, "no such pin")
}

// PinList returns the pins of chat chatID, oldest first (db.ChatPinList). A chat without
// pins (or an unknown chat) gives an empty list.
func PinList(ctx context.Context, q db.Querier, chatID string) ([]PinView, error) {
	rows, err := db.ChatPinList(ctx, q, chatID)
	if err != nil {
		return nil, err
	}
	out := make([]PinView, 0, len(rows))
	for i := range rows {
		out = append(out, NewPinView(&rows[i]))
	}
	return out, nil
}

// PinCreate pins connectionID to chatID and returns the pin. A second pin of the same
// connection to the same chat is CONFLICT (unique (chat_id, connection_id)); an unknown
// chat or connection is INVALID_REFERENCE. Scope checks are the caller's (Service.Add).
func PinCreate(ctx context.Context, q db.Querier, chatID, connectionID, createdBy string) (*PinView, error) {
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
func PinGet(ctx context.Context, q db.Querier, chatID, pinID string) (*PinView, error) {
	r, err := db.ChatPinGet(ctx, q, chatID, pinID)
	if err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return nil, errNoPin(err)
		}
		return nil, err
	}
	v := NewPinView(r)
	return &v, nil
}

// PinDelete hard-deletes pin pinID of chat chatID (a hard delete: no soft-unpin state is kept) and
// returns it as it was; NOT_FOUND "no such pin" when the chat has no such pin.
func PinDelete(ctx context.Context, q db.Querier, chatID, pinID string) (*PinView, error) {
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
