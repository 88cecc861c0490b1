package api

import (
	"net/http"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/grants"
	"github.com/agentpack/gateway/shared/httpapi"
)

// connectedClientList is GET /api/connected-clients[?workspaceId=…] (shared/grants).
func (a *API) connectedClientList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if a.AuthServer == nil {
		return apperr.New(apperr.NotFound, "this gateway's authorization server is not configured")
	}
	var items []grants.View
	var err error
	if ws := r.URL.Query().Get("workspaceId"); ws != "" {
		items, err = a.Grants.InWorkspace(r.Context(), p, ws)
	} else {
		items, err = a.Grants.Mine(r.Context(), p)
	}
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, connectedClientList{Items: items})
	return nil
}

// connectedClientRevoke is DELETE /api/connected-clients/{id} (shared/grants).
func (a *API) connectedClientRevoke(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if a.AuthServer == nil {
		return apperr.New(apperr.NotFound, "this gateway's authorization server is not configured")
	}
	if err := a.Grants.Revoke(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// mcpTokenList is GET /api/mcp-tokens (shared/grants, tokens.go).
func (a *API) mcpTokenList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if a.AuthServer == nil {
		return apperr.New(apperr.NotFound, "this gateway's authorization server is not configured")
	}
	items, err := a.Grants.Tokens(r.Context(), p, httpapi.BaseURL(a.Console.PublicBaseURL, r))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, mcpTokenList{Items: items})
	return nil
}

// mcpTokenCreate is POST /api/mcp-tokens: the token is in this answer only (Cache-Control
// no-store, as the token endpoint's, RFC 6749 §5.1).
func (a *API) mcpTokenCreate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if a.AuthServer == nil {
		return apperr.New(apperr.NotFound, "this gateway's authorization server is not configured")
	}
	var in grants.TokenInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	out, err := a.Grants.CreateToken(r.Context(), p, httpapi.BaseURL(a.Console.PublicBaseURL, r), in)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.JSON(w, http.StatusCreated, out)
	return nil
}

// mcpTokenRevoke is DELETE /api/mcp-tokens/{id}.
func (a *API) mcpTokenRevoke(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if a.AuthServer == nil {
		return apperr.New(apperr.NotFound, "this gateway's authorization server is not configured")
	}
	if err := a.Grants.RevokeToken(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
