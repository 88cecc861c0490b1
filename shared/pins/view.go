package pins

import (
	"time"

	"github.com/agentpack/gateway/shared/db"
)

// PinView is one chat pin as the APIs return it (openapi.json #/components/schemas/Pin):
// the pin (chat_mcp_pins) with what a client needs to show it, the pinned connection's
// name, scope (global, workspace or project) and state. Usable reports whether resolution
// uses the pin (enabled ∧ global or the chat's workspace ∧ not project-scoped;
// docs/DESIGN.md §7). The pins REST routes and the gateway's pin built-ins
// (agentpack_pins_list, agentpack_pin_add, agentpack_pin_remove) show this view; Service
// and the Pin* functions answer it.
type PinView struct {
	ID             string    `json:"id" format:"uuid"`
	ChatID         string    `json:"chatId" format:"uuid"`
	ConnectionID   string    `json:"connectionId" format:"uuid"`
	ConnectionName string    `json:"connectionName"`
	Scope          string    `json:"scope" enum:"global,workspace,project"`
	Enabled        bool      `json:"enabled"`
	Usable         bool      `json:"usable"`
	CreatedBy      string    `json:"createdBy"`
	CreatedAt      time.Time `json:"createdAt"`
}

// NewPinView is the view of stored pin r: its connection's scope and whether resolution
// uses it.
func NewPinView(r *db.ChatPin) PinView {
	c := db.Connection{WorkspaceID: r.ConnectionWorkspaceID, ProjectID: r.ConnectionProjectID}
	return PinView{ID: r.ID, ChatID: r.ChatID, ConnectionID: r.ConnectionID, ConnectionName: r.ConnectionName,
		Scope: c.Scope(), Enabled: r.Enabled, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt,
		Usable: r.Enabled && inScope(r.ChatWorkspaceID, Conn{WorkspaceID: r.ConnectionWorkspaceID, ProjectID: r.ConnectionProjectID})}
}

// ChatView is a chat as the pins REST routes return it (openapi.json
// #/components/schemas/Chat): id, workspace, title (may be empty) and, when the query
// that read the chat read it, the creation time (RFC 3339; omitted otherwise).
type ChatView struct {
	ID          string     `json:"id" format:"uuid"`
	WorkspaceID string     `json:"workspaceId" format:"uuid"`
	Title       string     `json:"title" maxLength:"200"`
	CreatedAt   *time.Time `json:"createdAt,omitempty"`
}

// NewChatView is the view of chat row c.
func NewChatView(c *db.Chat) ChatView {
	return ChatView{ID: c.ID, WorkspaceID: c.WorkspaceID, Title: c.Title, CreatedAt: c.CreatedAt}
}
