package api

import (
	"net/http"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/overrides"
)

// toolOverrideGet is GET /api/mcp-connections/{id}/tools/{name}/override?workspaceId=
// (admin): the workspace's override of the upstream tool {name}, with the upstream's
// original (null when dormant).
func (a *API) toolOverrideGet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	svc, conn := a.Overrides, r.PathValue("id")
	ws := svc.Workspace(r.Context(), p, r.URL.Query().Get("workspaceId"), conn)
	v, err := svc.Get(r.Context(), p, ws, conn, r.PathValue("name"))
	if err != nil {
		return err
	}
	logx.Annotate(r.Context(), logx.FieldWorkspace, ws) // checked by Get
	httpapi.JSON(w, http.StatusOK, v)
	return nil
}

// toolOverrideSet is PUT /api/mcp-connections/{id}/tools/{name}/override (admin): creates
// (201) or replaces (200) the workspace's override of the upstream tool {name}.
func (a *API) toolOverrideSet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in overrides.Input
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	svc := a.Overrides
	in.ConnectionID, in.Tool = r.PathValue("id"), r.PathValue("name")
	in.WorkspaceID = svc.Workspace(r.Context(), p, in.WorkspaceID, in.ConnectionID)
	v, created, err := svc.Set(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeSaved(w, v, created)
	return nil
}

// toolOverrideDelete is DELETE /api/mcp-connections/{id}/tools/{name}/override?workspaceId=
// (admin): 204; the tool is the upstream's again.
func (a *API) toolOverrideDelete(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	svc, conn := a.Overrides, r.PathValue("id")
	ws := svc.Workspace(r.Context(), p, r.URL.Query().Get("workspaceId"), conn)
	if _, err := svc.Delete(r.Context(), p, ws, conn, r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// toolOverrideList is GET /api/mcp-connections/{id}/overrides?workspaceId= (admin): the
// workspace's overrides of the connection's tools, dormant ones included.
func (a *API) toolOverrideList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	svc, conn := a.Overrides, r.PathValue("id")
	ws := svc.Workspace(r.Context(), p, r.URL.Query().Get("workspaceId"), conn)
	out, err := svc.List(r.Context(), p, ws, conn)
	if err != nil {
		return err
	}
	logx.Annotate(r.Context(), logx.FieldWorkspace, ws) // checked by List
	httpapi.JSON(w, http.StatusOK, overrideList{Overrides: out})
	return nil
}
