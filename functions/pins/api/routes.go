package api

import (
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/pins"
	"github.com/agentpack/gateway/shared/restdoc"
)

// route is one route of Handler: its handler and its operation in the product's OpenAPI
// document (Op.Pattern is the http.ServeMux pattern; shared/restdoc).
type route struct {
	handler func(a *API) handlerFunc
	Op      restdoc.Op
}

// The answers of the routes that have no type of their own in shared/pins.
type (
	workspaceRef struct {
		ID   string `json:"id" format:"uuid"`
		Name string `json:"name"`
	}
	chatPage struct {
		Chats     []pins.ChatView `json:"chats"`
		HasMore   bool            `json:"hasMore"`
		Workspace *workspaceRef   `json:"workspace,omitempty" doc:"The listed workspace: its id and display name."`
	}
	pinList struct {
		Pins []pins.PinView `json:"pins"`
	}
	chatToolSet struct {
		*pins.ToolSet
		BuiltinsIncluded bool `json:"builtinsIncluded" doc:"Always true: the gateway's built-in tools are part of every chat's set on top of these."`
	}
	chatQuery struct {
		WorkspaceID string `json:"workspaceId" format:"uuid" doc:"Workspace id; may be left out when the token names exactly one workspace."`
		Limit       int    `json:"limit" minimum:"1" maximum:"500" doc:"Page size, 1 to 500 (default 100)."`
	}
)

// workspaceErrors are the error words of the routes that take a workspace.
var workspaceErrors = map[apperr.Code]string{
	apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR), including a missing workspaceId when the token names several workspaces; nothing written.",
	apperr.NotFound:   "Unknown workspace, or one the caller is not a member of (NOT_FOUND).",
}

var routes = []route{
	{func(a *API) handlerFunc { return a.chatList }, restdoc.Op{
		Pattern: "GET /api/chats", ID: "chatList", Tag: "chats",
		Summary: "List a workspace's chats", Description: "Members of the workspace. Newest first.",
		Query:     chatQuery{},
		Responses: []restdoc.Response{{Status: 200, Description: "Chats.", Body: chatPage{}}},
		Errors:    []apperr.Code{apperr.Validation, apperr.NotFound}, ErrorText: workspaceErrors,
	}},
	{func(a *API) handlerFunc { return a.chatCreate }, restdoc.Op{
		Pattern: "POST /api/chats", ID: "chatCreate", Tag: "chats",
		Summary: "Create a chat (admin)", Description: "Logs chat.created in event_log.",
		Body:      chatInput{},
		Responses: []restdoc.Response{{Status: 201, Description: "Created.", Body: pins.ChatView{}}},
		Errors:    []apperr.Code{apperr.Forbidden, apperr.NotFound}, ErrorText: workspaceErrors,
	}},
	{func(a *API) handlerFunc { return a.list }, restdoc.Op{
		Pattern: "GET /api/chats/{chatId}/pins", ID: "pinList", Tag: "pins",
		Summary: "List a chat's pins", Description: "Members of the chat's workspace.",
		Responses: []restdoc.Response{{Status: 200, Description: "Pins.", Body: pinList{}}},
		Errors:    []apperr.Code{apperr.NotFound},
	}},
	{func(a *API) handlerFunc { return a.add }, restdoc.Op{
		Pattern: "POST /api/chats/{chatId}/pins", ID: "pinAdd", Tag: "pins",
		Summary:     "Pin a connection to a chat (admin)",
		Description: "The connection must be in the chat's workspace or global; a project-scoped one or another workspace's is refused with 422.",
		Body:        addInput{},
		Responses:   []restdoc.Response{{Status: 201, Description: "Pinned.", Body: pins.PinView{}}},
		Errors:      []apperr.Code{apperr.Forbidden, apperr.NotFound, apperr.Conflict, apperr.InvalidReference},
	}},
	{func(a *API) handlerFunc { return a.remove }, restdoc.Op{
		Pattern: "DELETE /api/chats/{chatId}/pins/{pinId}", ID: "pinRemove", Tag: "pins",
		Summary: "Unpin (admin)", Description: "Hard delete.",
		Responses: []restdoc.Response{{Status: 204, Description: "Removed."}},
		Errors:    []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{func(a *API) handlerFunc { return a.tools }, restdoc.Op{
		Pattern: "GET /api/chats/{chatId}/tools", ID: "chatTools", Tag: "pins",
		Summary:     "The chat's resolved tool set",
		Description: "docs/DESIGN.md §7: no pins → every enabled workspace connection; pins → pinned ∪ workspace-scoped; all pins unusable → fallback (fellBack=true). Built-in tools are always included on top.",
		Responses:   []restdoc.Response{{Status: 200, Description: "The tool set.", Body: chatToolSet{}}},
		Errors:      []apperr.Code{apperr.NotFound},
	}},
}

// Ops are the operations of Handler's routes, for the product's OpenAPI document
// (functions/marketplace/api serves it).
func Ops() []restdoc.Op {
	out := make([]restdoc.Op, len(routes))
	for i, r := range routes {
		out[i] = r.Op
	}
	return out
}
