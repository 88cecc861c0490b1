package api

import (
	"net/http"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/httpapi"
)

// catalogEntryAuth is PUT /api/mcp-marketplace/{id}/auth (superuser): the entry's default
// auth mode and pre-registered OAuth client; the secret is stored sealed and never answered.
// catalogEntryAuthGet is GET /api/mcp-marketplace/{id}/auth (superuser): what PUT wrote,
// without secrets.
func (a *API) catalogEntryAuthGet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireCatalogWriter(p); err != nil {
		return err
	}
	out, err := a.Connections.EntryAuth(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, out)
	return nil
}

func (a *API) catalogEntryAuth(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireCatalogWriter(p); err != nil {
		return err
	}
	var in connections.EntryAuthInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	out, err := a.Connections.SetEntryAuth(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, out)
	return nil
}

// connectionAuthorize is POST /api/mcp-connections/{id}/authorize {returnTo?}: (re-)start
// the upstream consent; answers {status, authorizationUrl?, reason?}.
func (a *API) connectionAuthorize(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in authorizeInput
	if r.ContentLength != 0 {
		if err := httpapi.Decode(w, r, &in); err != nil {
			return err
		}
	}
	out, err := a.Connections.Authorize(r.Context(), p, r.PathValue("id"), in.ReturnTo)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, out)
	return nil
}

// oauthConsent is POST /api/oauth/consent {link}: the consent page, signed in, continues the
// authorization its link names. Only the caller the link was made for gets through: 200
// {authorizationUrl} with the HttpOnly binding cookie the callback requires; another user,
// another workspace or a member for a shared grant is 403 and nothing is stored.
func (a *API) oauthConsent(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in consentInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	if in.Link == "" || len(in.Link) > 256 {
		return apperr.New(apperr.Validation, "link is required (the id at the end of the authorization link)")
	}
	start, err := a.Connections.Consent(r.Context(), p, in.Link)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	http.SetCookie(w, start.Cookie)
	httpapi.JSON(w, http.StatusOK, consentAnswer{AuthorizationURL: start.AuthURL, ConnectionID: start.Key.ConnectionID})
	return nil
}

// connectionOAuthSettings is GET /api/mcp-connections/{id}/oauth-settings (admin):
// {oauth, effective}.
func (a *API) connectionOAuthSettings(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	own, eff, err := a.Connections.ConnectionOAuthSettings(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, oauthSettingsAnswer{OAuth: own, Effective: eff})
	return nil
}

// connectionOAuthSettingsSet is PUT /api/mcp-connections/{id}/oauth-settings (admin): the
// body is the connection's OAuth settings; answers {oauth, effective}.
func (a *API) connectionOAuthSettingsSet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in connections.OAuthSettings
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	own, eff, err := a.Connections.SetConnectionOAuthSettings(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, oauthSettingsAnswer{OAuth: own, Effective: eff})
	return nil
}
