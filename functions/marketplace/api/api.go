// Package api is the marketplace REST function (DESIGN §2, seed mcp-marketplace): the
// curated catalog under /api/mcp-marketplace (browse for any valid token, writes for
// admins), installs, and connections CRUD under /api/mcp-connections (admin).
//
// Errors are {"error": {"code", "message", "hint"?, "errorId"?, "details"?}} with the
// status of their code (shared/httpapi).
package api

import (
	"log/slog"
	"net/http"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/httpapi"
)

// API serves the marketplace routes.
type API struct {
	Pool        *db.Pool
	Connections *connections.Service
	Verifier    *auth.Verifier
	Logger      *slog.Logger
}

// handlerFunc is a REST handler that returns its error for the edge to map.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p *auth.Principal) error

// Handler returns the routes, each behind bearer authentication.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	route := func(pattern string, h handlerFunc) {
		mux.Handle(pattern, httpapi.Authenticate(a.Verifier, a.Logger, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r, auth.FromContext(r.Context())); err != nil {
				httpapi.Error(w, r, a.Logger, err)
			}
		})))
	}
	route("GET /api/mcp-marketplace", a.catalogList)
	route("GET /api/mcp-marketplace/{id}", a.catalogGet)
	route("POST /api/mcp-marketplace/{id}/install", a.install)
	route("GET /api/mcp-connections", a.connectionList)
	route("POST /api/mcp-connections", a.connectionCreate)
	route("GET /api/mcp-connections/{id}", a.connectionGet)
	return httpapi.Recover(a.Logger, httpapi.RequestID(mux))
}

func (a *API) catalogList(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	q := r.URL.Query()
	entries, err := db.CatalogEntryList(r.Context(), a.Pool, db.CatalogFilter{Search: q.Get("search"), Category: q.Get("category")})
	if err != nil {
		return err
	}
	for i := range entries {
		entries[i].Headers = headers.Redact(entries[i].Headers)
	}
	httpapi.JSON(w, http.StatusOK, map[string]any{"entries": entries})
	return nil
}

func (a *API) catalogGet(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	e, err := db.CatalogEntryGet(r.Context(), a.Pool, r.PathValue("id"))
	if err != nil {
		return err
	}
	e.Headers = headers.Redact(e.Headers)
	httpapi.JSON(w, http.StatusOK, e)
	return nil
}

func (a *API) install(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in connections.InstallInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	out, err := a.Connections.Install(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusCreated, connectionView(out.Connection, out.Connect))
	return nil
}

func (a *API) connectionList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if !p.IsAdmin() {
		return apperr.New(apperr.Forbidden, "this action requires the admin role")
	}
	rows, err := a.Connections.List(r.Context(), p, r.URL.Query().Get("workspaceId"))
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(rows))
	for i := range rows {
		out = append(out, connectionView(&rows[i], nil))
	}
	httpapi.JSON(w, http.StatusOK, map[string]any{"connections": out})
	return nil
}

func (a *API) connectionCreate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in connections.CreateInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	out, err := a.Connections.Create(r.Context(), p, in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusCreated, connectionView(out.Connection, out.Connect))
	return nil
}

func (a *API) connectionGet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if !p.IsAdmin() {
		return apperr.New(apperr.Forbidden, "this action requires the admin role")
	}
	c, err := a.Connections.Get(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, connectionView(c, nil))
	return nil
}

// connectionView is a connection as REST returns it: header values redacted, scope
// spelled out, and the first connect's outcome when there was one.
func connectionView(c *db.Connection, connect *connections.RefreshResult) map[string]any {
	v := map[string]any{
		"id": c.ID, "name": c.Name, "handle": c.Handle, "url": c.URL, "transportType": c.TransportType,
		"workingTransport": c.WorkingTransport, "headers": headers.Redact(c.Headers), "enabled": c.Enabled,
		"source": c.Source, "catalogEntryId": c.CatalogEntryID, "workspaceId": c.WorkspaceID,
		"projectId": c.ProjectID, "scope": c.Scope(), "lastConnectedAt": c.LastConnectedAt,
		"lastError": c.LastError, "createdBy": c.CreatedBy, "createdAt": c.CreatedAt, "updatedAt": c.UpdatedAt,
	}
	if connect != nil {
		v["connect"] = connect
	}
	return v
}
