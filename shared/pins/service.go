package pins

import (
	"context"
	"log/slog"
	"sort"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/logx"
)

// Event actions written to event_log for pin changes. The entity is the pinned
// connection (entity_type "mcp_connection"), so that filtering on that type gives the
// complete audit trail of a connection's pins.
const (
	ActionPinned   = "mcp.pinned"
	ActionUnpinned = "mcp.unpinned"
)

// Service holds the pin flows shared by the pins REST function and the gateway's pin
// built-ins. Authorization (docs/DESIGN.md §7, §8): only principals of the chat's workspace see a
// chat — any other chat is NOT_FOUND, never FORBIDDEN, so ids do not leak — and adding or
// removing a pin is a write, which needs admin (or superuser): FORBIDDEN otherwise.
type Service struct {
	Pool   *db.Pool
	Logger *slog.Logger // nil: discard
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// Chat returns chat chatID if p may see it (a member of its workspace, or a superuser);
// NOT_FOUND otherwise, also for a malformed id.
func (s *Service) Chat(ctx context.Context, p *auth.Principal, chatID string) (_ *db.Chat, err error) {
	defer derrors.Wrap(&err, "pins: chat %s", chatID)
	c, err := db.ChatGet(ctx, s.Pool, chatID)
	if apperr.CodeOf(err) == apperr.NotFound || (err == nil && !p.InWorkspace(c.WorkspaceID)) {
		return nil, apperr.New(apperr.NotFound, "no such chat")
	}
	if err == nil {
		logx.Annotate(ctx, logx.FieldWorkspace, c.WorkspaceID)
	}
	return c, err
}

// List returns chat chatID's pins, oldest first. Errors: NOT_FOUND (chat), UNAVAILABLE.
func (s *Service) List(ctx context.Context, p *auth.Principal, chatID string) (_ []PinView, err error) {
	defer derrors.Wrap(&err, "pins: list %s", chatID)
	if _, err := s.Chat(ctx, p, chatID); err != nil {
		return nil, err
	}
	return PinList(ctx, s.Pool, chatID)
}

// Add pins connectionID to chat chatID and logs the event "mcp.pinned", in one
// transaction. The connection must exist and be usable by the chat: global, or
// workspace-scoped in the chat's workspace (docs/DESIGN.md §7). A disabled connection may be
// pinned (resolution ignores it until it is enabled again).
//
// Errors: VALIDATION_ERROR (connectionId not a UUID), NOT_FOUND (chat, or a connection p
// cannot see), FORBIDDEN (not admin), INVALID_REFERENCE (a connection of another
// workspace, or project-scoped: nothing is written), CONFLICT (already pinned).
func (s *Service) Add(ctx context.Context, p *auth.Principal, chatID, connectionID string) (_ *PinView, err error) {
	defer derrors.Wrap(&err, "pins: pin %s to chat %s", connectionID, chatID)
	chat, err := s.Chat(ctx, p, chatID)
	if err != nil {
		return nil, err
	}
	if !p.IsAdmin() {
		return nil, apperr.New(apperr.Forbidden, "pinning requires the admin role")
	}
	if !db.IsUUID(connectionID) {
		return nil, apperr.New(apperr.Validation, "connectionId must be a UUID")
	}
	conn, err := db.ConnectionGet(ctx, s.Pool, connectionID)
	if apperr.CodeOf(err) == apperr.NotFound || (err == nil && conn.WorkspaceID != nil && !p.InWorkspace(*conn.WorkspaceID)) {
		return nil, apperr.New(apperr.NotFound, "no such connection")
	}
	if err != nil {
		return nil, err
	}
	switch {
	case conn.WorkspaceID != nil && *conn.WorkspaceID != chat.WorkspaceID:
		return nil, apperr.New(apperr.InvalidReference, "the connection belongs to another workspace").
			WithHint("pin a global connection or one of the chat's workspace")
	case conn.ProjectID != nil:
		return nil, apperr.New(apperr.InvalidReference, "project-scoped connections cannot be pinned to a chat").
			WithHint("chats use global and workspace-scoped connections only")
	}
	var pin *PinView
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if pin, err = PinCreate(ctx, tx, chat.ID, conn.ID, p.Subject); err != nil {
			return err
		}
		return logEvent(ctx, tx, p, ActionPinned, chat, pin)
	})
	if err != nil {
		return nil, err
	}
	s.log().InfoContext(ctx, "pin added", "chat_id", chat.ID, "connection_id", conn.ID, "pin_id", pin.ID)
	return pin, nil
}

// Remove hard-deletes pin pinID of chat chatID and logs "mcp.unpinned", in one
// transaction, returning the pin as it was. Errors: NOT_FOUND (chat or pin), FORBIDDEN
// (not admin), UNAVAILABLE.
func (s *Service) Remove(ctx context.Context, p *auth.Principal, chatID, pinID string) (_ *PinView, err error) {
	defer derrors.Wrap(&err, "pins: remove pin %s of chat %s", pinID, chatID)
	chat, err := s.Chat(ctx, p, chatID)
	if err != nil {
		return nil, err
	}
	if !p.IsAdmin() {
		return nil, apperr.New(apperr.Forbidden, "unpinning requires the admin role")
	}
	var pin *PinView
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if pin, err = PinDelete(ctx, tx, chat.ID, pinID); err != nil {
			return err
		}
		return logEvent(ctx, tx, p, ActionUnpinned, chat, pin)
	})
	if err != nil {
		return nil, err
	}
	s.log().InfoContext(ctx, "pin removed", "chat_id", chat.ID, "connection_id", pin.ConnectionID, "pin_id", pin.ID)
	return pin, nil
}

func logEvent(ctx context.Context, q db.Querier, p *auth.Principal, action string, chat *db.Chat, pin *PinView) error {
	ws := chat.WorkspaceID
	return db.EventInsert(ctx, q, &db.Event{
		EntityType: "mcp_connection", EntityID: pin.ConnectionID, Action: action, Actor: p.Subject,
		WorkspaceID: &ws, Payload: map[string]any{"chatId": chat.ID, "pinId": pin.ID, "connectionName": pin.ConnectionName},
	})
}

// ResolveChat resolves chat's tool set against snap, the chat workspace's catalog
// snapshot (the enabled connections visible there), and the chat's pins read from q (one
// indexed query). It applies Resolve and logs a warning when
// every pin is unusable and the workspace default applies.
func ResolveChat(ctx context.Context, q db.Querier, log *slog.Logger, snap *catalog.Snapshot, chat *db.Chat) (Resolution, error) {
	pinned, err := PinnedConnections(ctx, q, chat.ID)
	if err != nil {
		return Resolution{}, err
	}
	res := Resolve(chat.WorkspaceID, Available(snap, chat.WorkspaceID), pinned)
	if res.FellBack && log != nil {
		log.WarnContext(ctx, "every pinned connection is disabled or out of scope; using the workspace default",
			"chat_id", chat.ID, "workspace_id", chat.WorkspaceID)
	}
	return res, nil
}

// ChatAllowed returns the ids of the connections chat chatID may use (docs/DESIGN.md §7),
// resolved against snap, the catalog snapshot of workspace ws. A chat that does not exist
// or belongs to another workspace is apperr.NotFound "no such chat" (the same answer, so
// chat ids of other workspaces cannot be probed); a store failure is returned as it is.
func ChatAllowed(ctx context.Context, q db.Querier, log *slog.Logger, snap *catalog.Snapshot, ws, chatID string) (map[string]bool, error) {
	chat, err := db.ChatGet(ctx, q, chatID)
	if err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return nil, apperr.New(apperr.NotFound, "no such chat")
		}
		return nil, err
	}
	if chat.WorkspaceID != ws {
		return nil, apperr.New(apperr.NotFound, "no such chat")
	}
	res, err := ResolveChat(ctx, q, log, snap, chat)
	if err != nil {
		return nil, err
	}
	return res.Allowed, nil
}

// Available lists the connections of workspace ws's snapshot (every one is enabled) as
// Resolve's input.
func Available(snap *catalog.Snapshot, ws string) []Conn {
	out := make([]Conn, 0, len(snap.Doc.Connections))
	for i := range snap.Doc.Connections {
		c := &snap.Doc.Connections[i]
		pc := Conn{ID: c.ID, Enabled: true}
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

// Tool is one tool of a chat's resolved set, named as clients see it, with its source:
// "agentpack" for built-ins, the connection's human-readable name for proxied tools
// (mcpSources naming, see ResolveMcpSourceName).
type Tool struct {
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	Kind         string `json:"kind"` // builtin | proxied
	Source       string `json:"source"`
	ConnectionID string `json:"connectionId,omitempty"`
}

// ConnectionRef names one connection of a resolved set.
type ConnectionRef struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Scope  string `json:"scope"`
	Pinned bool   `json:"pinned"`
}

// ToolSet is a chat's resolved tool set (docs/DESIGN.md §7).
type ToolSet struct {
	ChatID      string          `json:"chatId" format:"uuid"`
	WorkspaceID string          `json:"workspaceId" format:"uuid"`
	Pinned      bool            `json:"pinned"`   // the chat has usable pins
	FellBack    bool            `json:"fellBack"` // pins exist but none is usable
	Connections []ConnectionRef `json:"connections"`
	Tools       []Tool          `json:"tools"`
}

// ProxiedTools builds chat's tool set from its resolution: the snapshot's connections in
// res.Allowed and their tools, sorted by name. Built-ins are the caller's to add (the
// gateway knows them; they are always part of the set).
func ProxiedTools(snap *catalog.Snapshot, chat *db.Chat, res Resolution) *ToolSet {
	pinned := map[string]bool{}
	for _, id := range res.Pinned {
		pinned[id] = true
	}
	ts := &ToolSet{ChatID: chat.ID, WorkspaceID: chat.WorkspaceID, Pinned: len(res.Pinned) > 0, FellBack: res.FellBack,
		Connections: []ConnectionRef{}, Tools: []Tool{}}
	for i := range snap.Doc.Connections {
		c := &snap.Doc.Connections[i]
		if !res.Allowed[c.ID] {
			continue
		}
		ts.Connections = append(ts.Connections, ConnectionRef{ID: c.ID, Name: c.Name, Scope: c.Scope, Pinned: pinned[c.ID]})
		for _, t := range c.Tools {
			ts.Tools = append(ts.Tools, Tool{Name: t.ExposedName, Description: t.Description, Kind: "proxied",
				Source: c.Name, ConnectionID: c.ID})
		}
	}
	SortTools(ts.Tools)
	return ts
}

// SortTools orders tools by name (tools/list order).
func SortTools(ts []Tool) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
}

// ResolveMcpSourceName maps an exposed tool name
// (mcp_<handle>_<tool>, possibly hash-shortened; docs/DESIGN.md §4) back to the human-readable
// name of the connection that provides it, using the workspace's catalog snapshot. ok is
// false for built-ins and unknown names. Exposed names are frozen, so the mapping is
// stable for the life of the connection.
func ResolveMcpSourceName(snap *catalog.Snapshot, tool string) (name string, ok bool) {
	if snap == nil {
		return "", false
	}
	ref, ok := snap.Lookup(tool)
	if !ok {
		return "", false
	}
	return ref.Conn.Name, true
}

// SourceNames returns the distinct connection names behind tools, in first-use order:
// the mcpSources list (names of the MCP connections whose tools were
// invoked). Built-ins and unknown names are skipped.
func SourceNames(snap *catalog.Snapshot, tools []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, t := range tools {
		if n, ok := ResolveMcpSourceName(snap, t); ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// SourceNameDB is SourceName without a snapshot: it reads the connection name behind the
// exposed tool name from Postgres (db.ConnectionNameByExposedTool). NOT_FOUND for unknown
// names.
func SourceNameDB(ctx context.Context, q db.Querier, tool string) (string, error) {
	return db.ConnectionNameByExposedTool(ctx, q, tool)
}
