package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
)

// catalogList is GET /api/mcp-marketplace?search=&category=&source=&workspaceId=&limit=&offset=:
// any valid token. Entries carry verificationTier and healthStatus for the badges; with
// workspaceId (one of the caller's) each says whether it is installed there. category
// matches case-insensitively. Without limit every entry comes back; with limit (1–200)
// one page, and nextOffset when more follow. total counts every match.
func (a *API) catalogList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	q := r.URL.Query()
	src, err := sourceFilter(q.Get("source"))
	if err != nil {
		return err
	}
	f := db.CatalogFilter{Search: q.Get("search"), Category: q.Get("category"), Source: src}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			return apperr.New(apperr.Validation, "limit must be an integer from 1 to 200")
		}
		f.Limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return apperr.New(apperr.Validation, "offset must be a non-negative integer")
		}
		f.Offset = n
	}
	var installs map[string]db.Install
	if ws := q.Get("workspaceId"); ws != "" {
		if !db.IsUUID(ws) || !p.InWorkspace(ws) {
			return apperr.New(apperr.NotFound, "workspace not found")
		}
		logx.Annotate(r.Context(), logx.FieldWorkspace, ws)
		var err error
		if installs, err = db.ConnectionInstalls(r.Context(), a.Pool, ws); err != nil {
			return err
		}
	}
	entries, total, err := db.CatalogEntryPage(r.Context(), a.Pool, f)
	if err != nil {
		return err
	}
	out := make([]catalog.EntryView, 0, len(entries))
	for _, e := range entries {
		v := catalog.NewEntryView(&e, false)
		if installs != nil {
			in, ok := installs[e.ID]
			v.Installed = &ok
			if ok {
				v.ConnectionID, v.InstallState = &in.ConnectionID, &in.State
			}
		}
		out = append(out, v)
	}
	resp := catalogPage{Entries: out, Total: total}
	if next := f.Offset + len(out); f.Limit > 0 && next < total {
		resp.NextOffset = next
	}
	httpapi.JSON(w, http.StatusOK, resp)
	return nil
}

// catalogCategories is GET /api/mcp-marketplace/categories: any valid token. The
// catalog's categories with their entry counts, case variants merged.
func (a *API) catalogCategories(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	cats, err := db.CatalogCategories(r.Context(), a.Pool)
	if err != nil {
		return err
	}
	if cats == nil {
		cats = []db.Category{}
	}
	httpapi.JSON(w, http.StatusOK, categoryList{Categories: cats})
	return nil
}

func (a *API) catalogGet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	e, err := db.CatalogEntryGet(r.Context(), a.Pool, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, catalog.NewEntryView(e, p.IsSuperuser()))
	return nil
}

// CatalogEntryBody is the body of POST and PUT /api/mcp-marketplace[/{id}]. On PUT,
// absent fields are unchanged. The verification tier is curated data only (docs/DESIGN.md §11) and
// runtime fields (installCount, health) are never written here: such fields are refused
// as unknown.
type CatalogEntryBody struct {
	Name           *string           `json:"name" minLength:"1" maxLength:"100"`
	URL            *string           `json:"url" maxLength:"2048"`
	TransportType  *string           `json:"transportType" enum:"streamable-http,sse"`
	Headers        map[string]string `json:"headers" doc:"Header name → value. Names are HTTP tokens; hop-by-hop and gateway-owned names (Host, Connection, Transfer-Encoding, Content-*, Mcp-*, Proxy-*, X-Forwarded-*, ...) are refused; values have no CR, LF or NUL; at most 32 headers, 8 KiB per value, 32 KiB in all. Values are secrets: answers show \"[REDACTED]\"."`
	Description    *string           `json:"description" maxLength:"2000"`
	Category       *string           `json:"category" maxLength:"100"`
	Version        *string           `json:"version" maxLength:"100"`
	Author         *string           `json:"author" maxLength:"200"`
	IsPlaceholder  *bool             `json:"isPlaceholder"`
	LastCommitDate *time.Time        `json:"lastCommitDate"`
}

// validate checks b (create: name and url required). The URL goes through the same guard
// as connections (§9, without name resolution: an entry is a template, installs check
// again); header templates through the header schema (D-12).
func (a *API) validateEntry(b *CatalogEntryBody, create bool) error {
	if create && (b.Name == nil || b.URL == nil) {
		return apperr.New(apperr.Validation, "name and url are required")
	}
	if b.Name != nil {
		n := strings.TrimSpace(*b.Name)
		if len(n) == 0 || len(n) > 100 {
			return apperr.New(apperr.Validation, "name must be 1 to 100 characters")
		}
		b.Name = &n
	}
	if b.URL != nil {
		if err := a.Connections.Guard.CheckURL(*b.URL); err != nil {
			return err
		}
		if err := headers.CheckURLNotRedacted(*b.URL); err != nil {
			return err
		}
	}
	if b.TransportType != nil && *b.TransportType != "streamable-http" && *b.TransportType != "sse" {
		return apperr.New(apperr.Validation, `transportType must be "streamable-http" or "sse"`)
	}
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{{"description", b.Description, 2000}, {"category", b.Category, 100}, {"version", b.Version, 100}, {"author", b.Author, 200}} {
		if f.v != nil && len(*f.v) > f.max {
			return apperr.New(apperr.Validation, "%s is longer than %d bytes", f.name, f.max)
		}
	}
	return headers.Validate(b.Headers)
}

func (b *CatalogEntryBody) input() *db.CatalogEntryInput {
	return &db.CatalogEntryInput{Name: b.Name, URL: b.URL, TransportType: b.TransportType, Headers: b.Headers,
		Description: b.Description, Category: b.Category, Version: b.Version, Author: b.Author,
		IsPlaceholder: b.IsPlaceholder, LastCommitDate: b.LastCommitDate}
}

// catalogCreate is POST /api/mcp-marketplace (superuser): 201
// with the entry (tier unverified), 409 when the name is taken.
func (a *API) catalogCreate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireCatalogWriter(p); err != nil {
		return err
	}
	var b CatalogEntryBody
	if err := httpapi.Decode(w, r, &b); err != nil {
		return err
	}
	if err := a.validateEntry(&b, true); err != nil {
		return err
	}
	e, err := a.Entries.Create(r.Context(), p, b.input())
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusCreated, catalog.NewEntryView(e, true))
	return nil
}

// catalogUpdate is PUT /api/mcp-marketplace/{id} (superuser): a partial update. Existing
// installs keep the URL and transport they copied at install time.
func (a *API) catalogUpdate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireCatalogWriter(p); err != nil {
		return err
	}
	var b CatalogEntryBody
	if err := httpapi.Decode(w, r, &b); err != nil {
		return err
	}
	if err := a.validateEntry(&b, false); err != nil {
		return err
	}
	e, err := a.Entries.Update(r.Context(), p, r.PathValue("id"), b.input())
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, catalog.NewEntryView(e, true))
	return nil
}

// catalogDelete is DELETE /api/mcp-marketplace/{id} (superuser): 204; 409 while any workspace
// has it installed (uninstall first), because an install without its entry could no
// longer be told apart or uninstalled by entry.
func (a *API) catalogDelete(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := a.Entries.Delete(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
