package api

import (
	"net/http"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/idp"
)

// The trusted identity providers of Enterprise-Managed Authorization (shared/idp,
// docs/AUTH.md "The enterprise path"): superusers only.

type trustedIDPList struct {
	Items []idp.Provider `json:"items"`
}

type trustedIDPQuery struct {
	Issuer string `json:"issuer" doc:"The issuer of the identity provider to delete (required)."`
}

// trustedIDPList is GET /api/trusted-idps.
func (a *API) trustedIDPList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	ps, err := a.IDPs.List(r.Context(), p)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, trustedIDPList{Items: ps})
	return nil
}

// trustedIDPPut is PUT /api/trusted-idps: creates or replaces the provider of the body's issuer.
func (a *API) trustedIDPPut(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in idp.Input
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	out, err := a.IDPs.Put(r.Context(), p, in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, out)
	return nil
}

// trustedIDPDelete is DELETE /api/trusted-idps?issuer=.
func (a *API) trustedIDPDelete(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	iss := r.URL.Query().Get("issuer")
	if iss == "" {
		return apperr.New(apperr.Validation, "issuer is required")
	}
	if err := a.IDPs.Delete(r.Context(), p, iss); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
