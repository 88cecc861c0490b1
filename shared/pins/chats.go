package pins

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
)

// ActionChatCreated is the event_log action of a chat creation (entity_type "chat").
const ActionChatCreated = "chat.created"

// MaxChatTitle is the longest chat title accepted, in characters.
const MaxChatTitle = 200

// Workspace picks the workspace a request acts in: ws when given (it must be one of p's,
// else NOT_FOUND so that ids do not leak), or p's only workspace when p names exactly one.
// Errors: VALIDATION_ERROR (ws empty and p names none or several), NOT_FOUND.
func Workspace(p *auth.Principal, ws string) (string, error) {
	if ws == "" {
		if len(p.Workspaces) == 1 {
			return p.Workspaces[0], nil
		}
		return "", apperr.New(apperr.Validation, "workspaceId is required").
			WithHint("the token names no single workspace; pass workspaceId")
	}
	if !db.IsUUID(ws) || !p.InWorkspace(ws) {
		return "", apperr.New(apperr.NotFound, "workspace not found")
	}
	return ws, nil
}

// Chats lists the chats of workspace ws (see Workspace for the default), newest first, at
// most limit of them, and whether there are more. Any member of ws may list.
// Errors: VALIDATION_ERROR, NOT_FOUND, UNAVAILABLE.
func (s *Service) Chats(ctx context.Context, p *auth.Principal, ws string, limit int) (_ []db.Chat, _ bool, err error) {
	defer derrors.Wrap(&err, "pins: chats %s", ws)
	ws, err = Workspace(p, ws)
	if err != nil {
		return nil, false, err
	}
	chats, more, err := db.ChatList(ctx, s.Pool, ws, limit)
	if chats == nil && err == nil {
		chats = []db.Chat{}
	}
	return chats, more, err
}

// CreateChat creates a chat titled title (trimmed, at most MaxChatTitle characters; may
// be empty) in workspace ws and logs "chat.created", in one transaction. It needs admin,
// like every other write of the workspace (docs/DESIGN.md §8).
// Errors: VALIDATION_ERROR, NOT_FOUND (workspace), FORBIDDEN (not admin), UNAVAILABLE.
func (s *Service) CreateChat(ctx context.Context, p *auth.Principal, ws, title string) (_ *db.Chat, err error) {
	defer derrors.Wrap(&err, "pins: create chat in workspace %q", ws)
	ws, err = Workspace(p, ws)
	if err != nil {
		return nil, err
	}
	if !p.IsAdmin() {
		return nil, apperr.New(apperr.Forbidden, "creating a chat requires the admin role")
	}
	title = strings.TrimSpace(title)
	if utf8.RuneCountInString(title) > MaxChatTitle || !utf8.ValidString(title) || strings.ContainsRune(title, 0) {
		return nil, apperr.New(apperr.Validation, "title must be valid text of at most 200 characters")
	}
	if _, err := db.WorkspaceGet(ctx, s.Pool, ws); err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return nil, apperr.New(apperr.NotFound, "workspace not found")
		}
		return nil, err
	}
	var chat *db.Chat
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if chat, err = db.ChatCreate(ctx, tx, ws, title); err != nil {
			return err
		}
		return db.EventInsert(ctx, tx, &db.Event{EntityType: "chat", EntityID: chat.ID, Action: ActionChatCreated,
			Actor: p.Subject, WorkspaceID: &ws, Payload: map[string]any{"title": title}})
	})
	if err != nil {
		return nil, err
	}
	s.log().InfoContext(ctx, "chat created", "chat_id", chat.ID, "workspace_id", ws)
	return chat, nil
}
