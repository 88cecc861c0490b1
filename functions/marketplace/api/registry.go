package api

import (
	"net/http"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/registry"
)

// catalogRegistryImport is POST /api/mcp-marketplace/registry-import (superuser):
// {url} imports a registry through its v0.1 list API, {documents, name?} the documents of
// a file. 200 with the report; a document refused is in the report, never a failure.
func (a *API) catalogRegistryImport(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireCatalogWriter(p); err != nil {
		return err
	}
	var in registryImportInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	var rep *registry.Report
	var err error
	switch {
	case (in.URL == "") == (len(in.Documents) == 0):
		return apperr.New(apperr.Validation, "give url or documents, one of them").WithDetails(map[string]string{"field": "url"})
	case in.URL != "":
		rep, err = a.Registry.FromURL(r.Context(), p, in.URL)
	default:
		name := strings.TrimSpace(in.Name)
		if name == "" {
			name = "upload"
		}
		if len(name) > 200 {
			return apperr.New(apperr.Validation, "name is longer than 200 bytes").WithDetails(map[string]string{"field": "name"})
		}
		rep, err = a.Registry.FromFile(r.Context(), p, "file:"+name, in.Documents)
	}
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, rep)
	return nil
}

// catalogEntryTier is PUT /api/mcp-marketplace/{id}/tier (superuser): promote (or demote)
// an entry's verification tier.
func (a *API) catalogEntryTier(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireCatalogWriter(p); err != nil {
		return err
	}
	var in tierInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	switch in.VerificationTier {
	case "official", "verified_community", "unverified":
	default:
		return apperr.New(apperr.Validation, "verificationTier must be official, verified_community or unverified").
			WithDetails(map[string]string{"field": "verificationTier"})
	}
	e, err := a.Entries.SetTier(r.Context(), p, r.PathValue("id"), in.VerificationTier)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, catalog.NewEntryView(e, true))
	return nil
}

// sourceFilter is the ?source= of the catalog list: "", curated, admin or registry.
func sourceFilter(v string) (string, error) {
	switch v {
	case "", "curated", "admin", "registry":
		return v, nil
	}
	return "", apperr.New(apperr.Validation, "source must be curated, admin or registry")
}
