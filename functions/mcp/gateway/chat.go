package gateway

import (
	"context"
	"log/slog"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/pins"
)

// ResolveChatConnections returns the connection ids whose tools chat may use (docs/DESIGN.md §7,
// pins.ResolveChat): the catalog snapshot gives the enabled connections of the chat's
// workspace, Postgres gives the chat's pins (one indexed query per request; pins are not
// in the catalog).
func ResolveChatConnections(ctx context.Context, q db.Querier, log *slog.Logger, snap *catalog.Snapshot, chat *db.Chat) (map[string]bool, error) {
	res, err := pins.ResolveChat(ctx, q, log, snap, chat)
	if err != nil {
		return nil, err
	}
	return res.Allowed, nil
}
