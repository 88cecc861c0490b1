package gateway

import (
	"context"
	"log/slog"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/pins"
)

// ResolveChatConnections returns the connection ids whose tools chat may use (DESIGN §7):
// the catalog snapshot gives the enabled connections of the chat's workspace, Postgres
// gives the chat's pins (one indexed query per request; pins are not in the catalog).
// A chat whose pins are all unusable falls back to the workspace default with a warning.
func ResolveChatConnections(ctx context.Context, q db.Querier, log *slog.Logger, snap *catalog.Snapshot, chat *db.Chat) (map[string]bool, error) {
	pinned, err := pins.PinnedConnections(ctx, q, chat.ID)
	if err != nil {
		return nil, err
	}
	res := pins.Resolve(chat.WorkspaceID, AvailableConns(snap, chat.WorkspaceID), pinned)
	if res.FellBack {
		log.WarnContext(ctx, "every pinned connection is disabled or out of scope; using the workspace default",
			"chat_id", chat.ID, "workspace_id", chat.WorkspaceID)
	}
	return res.Allowed, nil
}

// AvailableConns lists the snapshot's connections (all enabled) as resolution input.
func AvailableConns(snap *catalog.Snapshot, ws string) []pins.Conn {
	out := make([]pins.Conn, 0, len(snap.Doc.Connections))
	for i := range snap.Doc.Connections {
		c := &snap.Doc.Connections[i]
		pc := pins.Conn{ID: c.ID, Enabled: true}
		switch c.Scope {
		case "workspace":
			pc.WorkspaceID = &ws
		case "project":
			pc.WorkspaceID, pc.ProjectID = &ws, &c.ProjectID
		}
		out = append(out, pc)
	}
	return out
}
