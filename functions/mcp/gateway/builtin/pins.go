package builtin

import (
	"context"
	gschema "github.com/google/jsonschema-go/jsonschema"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/pins"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolsetPins groups the chat pin built-ins (docs/DESIGN.md §4 "list/add/remove pins", §7).
const toolsetPins = "pins"

func init() {
	toolsetDescriptions[toolsetPins] = "See a chat's pinned servers and resolved tool set; pin and unpin servers (admin)."
}

// pinBuiltins declares the pin built-ins: agentpack_pins_list (read-only),
// agentpack_pin_add and agentpack_pin_remove (admin). chatId defaults to the request's
// chat (X-Chat-Id or ?chat=). They share the pins REST function's rules through
// pins.Service: a chat outside the request's workspace is NOT_FOUND.
func (s *Set) pinDefinitions() []*Builtin {
	return []*Builtin{
		{
			Name: "agentpack_pins_list", Version: "1.0.0", Toolset: toolsetPins,
			Title:       "List a chat's pins and tools",
			Description: "Show a chat's pinned MCP servers and the resolved tool set the chat gets: built-in tools plus the tools of the pinned servers and of every enabled workspace-scoped server (pins only add). With no pins the chat gets every enabled server of the workspace. Each tool names the server it comes from. chatId defaults to the session's chat (X-Chat-Id).",
			Input:       Input{Props: map[string]*gschema.Schema{"chatId": {Format: "uuid"}}},
			Annotations: readOnly,
			Handler:     Typed(s.pinsList),
		},
		{
			Name: "agentpack_pin_add", Version: "1.0.0", Toolset: toolsetPins, AdminOnly: true,
			Title:       "Pin a server to a chat",
			Description: "Pin a connected MCP server (global or of this workspace) to a chat (admin), so the chat gets its tools on top of the workspace-scoped ones. chatId defaults to the session's chat (X-Chat-Id).",
			Input:       Input{Props: map[string]*gschema.Schema{"chatId": {Format: "uuid"}, "connectionId": {Format: "uuid"}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: false, OpenWorldHint: ptr(false)},
			Handler:     Typed(s.pinAdd),
		},
		{
			Name: "agentpack_pin_remove", Version: "1.0.0", Toolset: toolsetPins, AdminOnly: true,
			Title:       "Unpin a server from a chat",
			Description: "Remove a pin from a chat (admin); the pin is deleted. Get pin ids from agentpack_pins_list. chatId defaults to the session's chat (X-Chat-Id).",
			Input:       Input{Props: map[string]*gschema.Schema{"chatId": {Format: "uuid"}, "pinId": {Format: "uuid"}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
			Handler:     Typed(s.pinRemove),
		},
	}
}

// pinChat returns the chat a pin built-in acts on: chatId, else the request's chat; it
// must belong to the request's workspace.
func (s *Set) pinChat(ctx context.Context, c *Call, id string) (*db.Chat, error) {
	if id == "" {
		id = c.Req.ChatID
	}
	if id == "" {
		return nil, apperr.New(apperr.Validation, "chatId is required").
			WithHint("pass chatId, or open the session with the X-Chat-Id header")
	}
	chat, err := s.svc.Pins.Chat(ctx, c.Principal, id)
	if err != nil {
		return nil, err
	}
	if chat.WorkspaceID != c.Workspace {
		return nil, apperr.New(apperr.NotFound, "no such chat")
	}
	return chat, nil
}

type chatArgs struct {
	ChatID string `json:"chatId,omitempty"`
}

type pinAddArgs struct {
	ChatID       string `json:"chatId,omitempty"`
	ConnectionID string `json:"connectionId"`
}

type pinRemoveArgs struct {
	ChatID string `json:"chatId,omitempty"`
	PinID  string `json:"pinId"`
}

// pinsAnswer is agentpack_pins_list's answer: the chat's pins and its resolved tool set.
type pinsAnswer struct {
	Pins    []pins.PinView `json:"pins"`
	ToolSet pins.ToolSet   `json:"toolSet"`
}

func (s *Set) pinsList(ctx context.Context, c *Call, in chatArgs) (pinsAnswer, error) {
	chat, err := s.pinChat(ctx, c, in.ChatID)
	if err != nil {
		return pinsAnswer{}, err
	}
	list, err := s.svc.Pins.List(ctx, c.Principal, chat.ID)
	if err != nil {
		return pinsAnswer{}, err
	}
	res, err := pins.ResolveChat(ctx, s.svc.Pool, s.svc.Logger, c.Req.Snapshot, chat)
	if err != nil {
		return pinsAnswer{}, err
	}
	ts := pins.ProxiedTools(c.Req.Snapshot, chat, res)
	for _, b := range s.all {
		if CanSee(c.Principal, b, c.Req.Toolsets) {
			ts.Tools = append(ts.Tools, pins.Tool{Name: b.Name, Description: b.Title, Kind: "builtin", Source: "agentpack"})
		}
	}
	pins.SortTools(ts.Tools)
	return pinsAnswer{Pins: list, ToolSet: *ts}, nil
}

// pinAddAnswer is agentpack_pin_add's answer: the pin made.
type pinAddAnswer struct {
	Pin pins.PinView `json:"pin"`
}

func (s *Set) pinAdd(ctx context.Context, c *Call, in pinAddArgs) (pinAddAnswer, error) {
	chat, err := s.pinChat(ctx, c, in.ChatID)
	if err != nil {
		return pinAddAnswer{}, err
	}
	pin, err := s.svc.Pins.Add(ctx, c.Principal, chat.ID, in.ConnectionID)
	if err != nil {
		return pinAddAnswer{}, err
	}
	return pinAddAnswer{Pin: *pin}, nil
}

// pinRemoveAnswer is agentpack_pin_remove's answer: the pin deleted.
type pinRemoveAnswer struct {
	Removed pins.PinView `json:"removed"`
}

func (s *Set) pinRemove(ctx context.Context, c *Call, in pinRemoveArgs) (pinRemoveAnswer, error) {
	chat, err := s.pinChat(ctx, c, in.ChatID)
	if err != nil {
		return pinRemoveAnswer{}, err
	}
	pin, err := s.svc.Pins.Remove(ctx, c.Principal, chat.ID, in.PinID)
	if err != nil {
		return pinRemoveAnswer{}, err
	}
	return pinRemoveAnswer{Removed: *pin}, nil
}
