// Package pins resolves the tool set of a chat from its pins (docs/DESIGN.md §7) and holds the pin and chat
// flows shared by the pins function and the gateway; the queries are shared/db's
// (ChatPin*, ChatPinnedConnections).
package pins

import (
	"context"

	"github.com/agentpack/gateway/shared/db"
)

// Conn is what resolution needs of a connection.
type Conn struct {
	ID          string
	Enabled     bool
	WorkspaceID *string // nil = global
	ProjectID   *string // non-nil = project-scoped
}

// Resolution is the outcome for one chat.
type Resolution struct {
	// Allowed holds the ids of the connections whose tools the chat gets (built-ins are
	// always added on top).
	Allowed map[string]bool
	// Pinned lists the usable pinned connection ids (pinned ∧ enabled ∧ in scope).
	Pinned []string
	// FellBack is true when pins exist but none is usable, so the workspace default
	// applies (the caller logs a warning).
	FellBack bool
}

// Resolve applies the pin rules of docs/DESIGN.md §7 for a chat of workspace ws. available is every
// enabled connection visible in ws (global and ws's own); pinned are the chat's pinned
// connections as stored (any state).
//
//   - no pins → every enabled connection of the workspace scope (global + workspace;
//     project-scoped excluded);
//   - pins present → usable pins are pinned ∧ enabled ∧ same workspace (globals
//     included, project-scoped excluded);
//   - no usable pin → fall back to the workspace default (FellBack);
//   - the result is the usable pins ∪ every enabled workspace-scoped connection: pins
//     only add, never remove (docs/DESIGN.md §7).
func Resolve(ws string, available []Conn, pinned []Conn) Resolution {
	def := map[string]bool{}
	for _, c := range available {
		if c.Enabled && inScope(ws, c) {
			def[c.ID] = true
		}
	}
	if len(pinned) == 0 {
		return Resolution{Allowed: def}
	}
	var usable []string
	for _, c := range pinned {
		if c.Enabled && inScope(ws, c) {
			usable = append(usable, c.ID)
		}
	}
	if len(usable) == 0 {
		return Resolution{Allowed: def, FellBack: true}
	}
	out := map[string]bool{}
	for _, id := range usable {
		out[id] = true
	}
	for _, c := range available {
		if c.Enabled && c.ProjectID == nil && c.WorkspaceID != nil && *c.WorkspaceID == ws {
			out[c.ID] = true
		}
	}
	return Resolution{Allowed: out, Pinned: usable}
}

// inScope reports whether c is in a scope a chat of workspace ws may use: global or ws's
// own workspace scope; project-scoped connections are excluded (docs/DESIGN.md §7).
func inScope(ws string, c Conn) bool {
	return c.ProjectID == nil && (c.WorkspaceID == nil || *c.WorkspaceID == ws)
}

// PinnedConnections returns the connections pinned to chat id, in any state, oldest pin
// first (db.ChatPinnedConnections). Errors are db's (VALIDATION_ERROR for a malformed id).
func PinnedConnections(ctx context.Context, q db.Querier, chatID string) ([]Conn, error) {
	rows, err := db.ChatPinnedConnections(ctx, q, chatID)
	if err != nil {
		return nil, err
	}
	out := make([]Conn, 0, len(rows))
	for _, r := range rows {
		out = append(out, Conn{ID: r.ID, Enabled: r.Enabled, WorkspaceID: r.WorkspaceID, ProjectID: r.ProjectID})
	}
	return out, nil
}
