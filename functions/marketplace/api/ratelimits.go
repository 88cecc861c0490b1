package api

import (
	"net/http"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/ratelimit"
)

// rateLimitList is GET /api/rate-limits?workspaceId= (admin): the workspace's limits, each
// with its current usage. workspaceId may be left out when the token names one workspace.
func (a *API) rateLimitList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	ws := connections.DefaultWorkspace(p, r.URL.Query().Get("workspaceId"))
	out, err := a.RateLimits.List(r.Context(), p, ws)
	if err != nil {
		return err
	}
	logx.Annotate(r.Context(), logx.FieldWorkspace, ws) // checked by List
	httpapi.JSON(w, http.StatusOK, rateLimitList{Limits: out})
	return nil
}

// rateLimitSet is POST /api/rate-limits (admin): creates (201) or replaces (200) the limit
// of the body's scope.
func (a *API) rateLimitSet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in ratelimit.Input
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	in.WorkspaceID = connections.DefaultWorkspace(p, in.WorkspaceID)
	v, created, err := a.RateLimits.Set(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeSaved(w, v, created)
	return nil
}

// rateLimitDelete is DELETE /api/rate-limits/{id}?workspaceId= (admin): 204.
func (a *API) rateLimitDelete(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	ws := connections.DefaultWorkspace(p, r.URL.Query().Get("workspaceId"))
	if err := a.RateLimits.Delete(r.Context(), p, ws, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// writeSaved answers an upsert (PUT/POST that creates or replaces): 201 with v when it
// created the resource, 200 when it replaced one.
func writeSaved(w http.ResponseWriter, v any, created bool) {
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpapi.JSON(w, status, v)
}
