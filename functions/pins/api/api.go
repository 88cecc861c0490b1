// Package api is the pins REST function (docs/DESIGN.md §7):
//
//	GET    /api/chats?workspaceId=&limit=    200 {"chats": [...], "hasMore"}
//	POST   /api/chats                        201 chat  body {"workspaceId"?, "title"?}
//	GET    /api/chats/{chatId}/pins          200 {"pins": [...]}
//	POST   /api/chats/{chatId}/pins          201 pin   body {"connectionId": uuid}
//	DELETE /api/chats/{chatId}/pins/{pinId}  204 (hard delete)
//	GET    /api/chats/{chatId}/tools         200 the chat's resolved tool set
//
// Every route needs a bearer token of a member of the chat's workspace (any other chat or
// workspace is 404); POST and DELETE need admin (403). workspaceId may be left out when
// the token names exactly one workspace (else 400). A malformed body is 400, a duplicate pin 409, an
// unknown chat, connection or pin 404, a connection of another workspace or a
// project-scoped one 422 (nothing written). Errors use the REST body of shared/httpapi.
package api

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/pins"
)

// API serves the pins routes. Pins, Catalog, Verifier are required.
type API struct {
	Pins     *pins.Service
	Catalog  *catalog.Cache // the workspaces' catalog snapshots, for /tools
	Verifier *auth.Verifier
	Logger   *slog.Logger
	// Console, when its Grants is set, also admits the console's access tokens of the
	// gateway's authorization server (httpapi.Bearer; its Verifier is Verifier).
	Console httpapi.Bearer
}

type handlerFunc func(w http.ResponseWriter, r *http.Request, p *auth.Principal) error

// Handler returns the routes, each behind bearer authentication, with request ids and
// panic recovery.
func (a *API) Handler() http.Handler {
	log := a.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	bearer := a.Console
	bearer.Verifier = a.Verifier
	for _, rt := range routes {
		h := rt.handler(a)
		mux.Handle(rt.Op.Pattern, bearer.Authenticate(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r, auth.FromContext(r.Context())); err != nil {
				httpapi.Error(w, r, log, err)
			}
		})))
	}
	return httpapi.Recover(log, httpapi.RequestID(httpapi.Routes(mux)))
}

func (a *API) chatList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	q := r.URL.Query()
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return apperr.New(apperr.Validation, "limit must be an integer from 1 to 500")
		}
		limit = n
	}
	chats, more, err := a.Pins.Chats(r.Context(), p, q.Get("workspaceId"), limit)
	if err != nil {
		return err
	}
	views := make([]pins.ChatView, 0, len(chats))
	for i := range chats {
		views = append(views, pins.NewChatView(&chats[i]))
	}
	out := chatPage{Chats: views, HasMore: more}
	// The workspace itself (id and name), so that the console names it. Chats
	// has checked that p may read it; the id is the one it listed.
	ws := q.Get("workspaceId")
	if ws == "" && len(p.Workspaces) == 1 {
		ws = p.Workspaces[0]
	}
	if wsRow, err := db.WorkspaceGet(r.Context(), a.Pins.Pool, ws); err == nil {
		out.Workspace = &workspaceRef{ID: wsRow.ID, Name: wsRow.Name}
	}
	httpapi.JSON(w, http.StatusOK, out)
	return nil
}

// chatInput is the body of POST /api/chats.
// Title, when present, must not be empty or blank (a client that sent "" meant to name
// the chat and lost the name); leave it out for an untitled chat.
type chatInput struct {
	WorkspaceID string  `json:"workspaceId" optional:"true" format:"uuid" doc:"May be left out when the token names exactly one workspace."`
	Title       *string `json:"title" optional:"true" minLength:"1" maxLength:"200" pattern:"\\S" doc:"Leave it out for an untitled chat; an empty or blank title is refused (400)."`
}

func (a *API) chatCreate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in chatInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	title := ""
	if in.Title != nil {
		if title = strings.TrimSpace(*in.Title); title == "" {
			return apperr.New(apperr.Validation, "title must not be empty").
				WithHint("give the chat a title, or leave title out for an untitled chat")
		}
	}
	chat, err := a.Pins.CreateChat(r.Context(), p, in.WorkspaceID, title)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusCreated, pins.NewChatView(chat))
	return nil
}

func (a *API) list(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	ps, err := a.Pins.List(r.Context(), p, r.PathValue("chatId"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, pinList{Pins: ps})
	return nil
}

// addInput is the body of POST /api/chats/{chatId}/pins.
type addInput struct {
	ConnectionID string `json:"connectionId" format:"uuid"`
}

func (a *API) add(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	// Authorise before reading the body, so a stranger learns nothing from validation.
	if _, err := a.Pins.Chat(r.Context(), p, r.PathValue("chatId")); err != nil {
		return err
	}
	var in addInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	if in.ConnectionID == "" {
		return apperr.New(apperr.Validation, "connectionId is required")
	}
	pin, err := a.Pins.Add(r.Context(), p, r.PathValue("chatId"), in.ConnectionID)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusCreated, pin)
	return nil
}

func (a *API) remove(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if _, err := a.Pins.Remove(r.Context(), p, r.PathValue("chatId"), r.PathValue("pinId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// tools answers the chat's resolved set of proxied tools (docs/DESIGN.md §7), each with its
// source connection's name. Built-in tools are always part of a chat's set on top of
// these; the gateway's agentpack_pins_list built-in lists them too.
func (a *API) tools(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	ctx := r.Context()
	chat, err := a.Pins.Chat(ctx, p, r.PathValue("chatId"))
	if err != nil {
		return err
	}
	snap, err := a.Catalog.Get(ctx, chat.WorkspaceID)
	if err != nil {
		return apperr.Wrap(err, apperr.Unavailable, "catalog unavailable").WithHint("retry shortly")
	}
	res, err := pins.ResolveChat(ctx, a.Pins.Pool, a.Logger, snap, chat)
	if err != nil {
		return err
	}
	ts := pins.ProxiedTools(snap, chat, res)
	httpapi.JSON(w, http.StatusOK, chatToolSet{ToolSet: ts, BuiltinsIncluded: true})
	return nil
}
