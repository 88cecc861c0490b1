package api

import (
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/registry"
	"github.com/agentpack/gateway/shared/restdoc"
)

// catalogRoutes are the shared catalog's routes under /api/mcp-marketplace: browse, entry
// writes (superuser), install and uninstall, an entry's authorization settings, the
// registry import and the verification tier.
var catalogRoutes = []Route{
	{Pattern: "GET /api/mcp-marketplace", handler: func(a *API) handlerFunc { return a.catalogList }, Op: restdoc.Op{
		ID: "catalogList", Tag: "marketplace",
		Summary:     "List the curated catalog",
		Description: "Any valid token. Server-side filters are optional (clients may also filter locally, as the seed's UI does). Each entry carries verificationTier and healthStatus for badges; with workspaceId (one of the caller's) each entry also says whether it is installed there. category ignores case; limit and offset page the list (total counts every match). Health: healthStatus is null for an entry that was never checked; only installed entries are checked, so null on an entry with installCount 0 means nobody installed it.",
		Query:       catalogQuery{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The catalog, ordered by name.", Body: catalogPage{}},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Bad limit or offset (VALIDATION_ERROR).",
		},
	}},
	{Pattern: "POST /api/mcp-marketplace", handler: func(a *API) handlerFunc { return a.catalogCreate }, Op: restdoc.Op{
		ID: "catalogCreate", Tag: "marketplace",
		Summary:     "Create a catalog entry (superuser)",
		Description: "The URL passes the upstream URL guard and header templates the header schema (docs/DESIGN.md §9). New entries are unverified; runtime fields cannot be set.",
		Body:        CatalogEntryBody{},
		Responses: []restdoc.Response{
			{Status: 201, Description: "Created.", Body: catalog.EntryView{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.Conflict},
	}},
	{Pattern: "GET /api/mcp-marketplace/categories", handler: func(a *API) handlerFunc { return a.catalogCategories }, Op: restdoc.Op{
		ID: "catalogCategories", Tag: "marketplace",
		Summary:     "List the catalog's categories",
		Description: "Any valid token. Case variants are merged; entries without a category are left out.",
		Responses: []restdoc.Response{
			{Status: 200, Description: "Categories ordered by name.", Body: categoryList{}},
		},
	}},
	{Pattern: "GET /api/mcp-marketplace/{id}", handler: func(a *API) handlerFunc { return a.catalogGet }, Op: restdoc.Op{
		ID: "catalogGet", Tag: "marketplace",
		Summary:     "Show one catalog entry",
		Description: "Any valid token.",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "Catalog entry id.", Format: "uuid"}},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The entry.", Body: catalog.EntryView{}},
		},
		Errors: []apperr.Code{apperr.NotFound},
	}},
	{Pattern: "PUT /api/mcp-marketplace/{id}", handler: func(a *API) handlerFunc { return a.catalogUpdate }, Op: restdoc.Op{
		ID: "catalogUpdate", Tag: "marketplace",
		Summary:     "Update a catalog entry (superuser)",
		Description: "Partial update: absent fields are unchanged. Existing installs keep the url and transport they copied at install time.",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "Catalog entry id.", Format: "uuid"}},
		Body:        CatalogEntryBody{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Updated.", Body: catalog.EntryView{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound, apperr.Conflict},
	}},
	{Pattern: "DELETE /api/mcp-marketplace/{id}", handler: func(a *API) handlerFunc { return a.catalogDelete }, Op: restdoc.Op{
		ID: "catalogDelete", Tag: "marketplace",
		Summary:     "Delete a catalog entry (superuser)",
		Description: "Refused with 409 while any workspace has it installed.",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "Catalog entry id.", Format: "uuid"}},
		Responses: []restdoc.Response{
			{Status: 204, Description: "Deleted."},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound, apperr.Conflict},
	}},
	{Pattern: "POST /api/mcp-marketplace/{id}/install", handler: func(a *API) handlerFunc { return a.install }, Op: restdoc.Op{
		ID: "catalogInstall", Tag: "marketplace",
		Summary:     "Install an entry into a workspace (admin)",
		Description: "Seed install flow: 404 for an unknown entry; 409 when the workspace already has a marketplace install of it (a manual connection to the same entry does not count). The new connection copies url and transportType from the entry, is enabled, and is connected at once; a failed connect is recorded on the connection (lastError, connect.success=false) and the answer is still 201. Logs mcp.installed.",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "Catalog entry id.", Format: "uuid"}},
		Body:        connections.InstallInput{},
		Responses: []restdoc.Response{
			{Status: 201, Description: "Installed.", Body: connections.OutcomeView{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound, apperr.Conflict},
	}},
	{Pattern: "DELETE /api/mcp-marketplace/{id}/install", handler: func(a *API) handlerFunc { return a.uninstall }, Op: restdoc.Op{
		ID: "catalogUninstall", Tag: "marketplace",
		Summary:     "Uninstall an entry from a workspace (admin)",
		Description: "Seed uninstall flow: finds the workspace's marketplace install of the entry (404 if none), disconnects it, drops its tools and hard-deletes it. Logs mcp.uninstalled. Re-installing creates a new connection.",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "Catalog entry id.", Format: "uuid"}},
		Query:       workspaceQuery{},
		Responses: []restdoc.Response{
			{Status: 204, Description: "Uninstalled."},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "GET /api/mcp-marketplace/{id}/auth", handler: func(a *API) handlerFunc { return a.catalogEntryAuthGet }, Op: restdoc.Op{
		ID: "catalogEntryAuthGet", Tag: "catalog",
		Summary:     "A catalog entry's auth mode, pre-registered OAuth client and OAuth settings (superuser)",
		Description: "What PUT stored: client secrets and keys never leave (only hasSecret); oauth and client are omitted when none are set.",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "Catalog entry id.", Format: "uuid"}},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The stored authorization settings, without secrets.", Body: connections.EntryAuthInput{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Forbidden: "Not a superuser (FORBIDDEN).",
			apperr.NotFound:  "No such entry (NOT_FOUND).",
		},
	}},
	{Pattern: "PUT /api/mcp-marketplace/{id}/auth", handler: func(a *API) handlerFunc { return a.catalogEntryAuth }, Op: restdoc.Op{
		ID: "catalogEntryAuthSet", Tag: "catalog",
		Summary:    "Set a catalog entry's auth mode, pre-registered OAuth client and OAuth settings (superuser)",
		PathParams: map[string]restdoc.PathParam{"id": {Description: "Catalog entry id.", Format: "uuid"}},
		Body:       connections.EntryAuthInput{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "What is stored, without the secret.", Body: connections.EntryAuthInput{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Invalid mode or client (VALIDATION_ERROR).",
			apperr.Forbidden:  "Not a superuser (FORBIDDEN).",
			apperr.NotFound:   "No such entry (NOT_FOUND).",
		},
	}},
	{Pattern: "POST /api/mcp-marketplace/registry-import", handler: func(a *API) handlerFunc { return a.catalogRegistryImport }, Op: restdoc.Op{
		ID: "catalogRegistryImport", Tag: "marketplace",
		Summary:     "Import an MCP registry into the catalog (superuser)",
		Description: "From a registry speaking the v0.1 API (url: its base URL; GET /v0.1/servers is followed through its cursors) or from documents (a list answer, an array of its items or of server.json documents). Idempotent upsert per (server name, remote); documents refused one by one (see the report). docs/REGISTRY.md.",
		Body:        registryImportInput{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The report.", Body: registry.Report{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.UpstreamError},
		ErrorText: map[apperr.Code]string{
			apperr.UpstreamError: "The registry answered something other than a v0.1 server list (UPSTREAM_ERROR).",
			apperr.Unavailable:   "UNAVAILABLE or UPSTREAM_UNAVAILABLE: the database or the registry is unreachable; retry shortly.",
		},
	}},
	{Pattern: "PUT /api/mcp-marketplace/{id}/tier", handler: func(a *API) handlerFunc { return a.catalogEntryTier }, Op: restdoc.Op{
		ID: "catalogEntryTier", Tag: "marketplace",
		Summary:     "Set an entry's verification tier (superuser)",
		Description: "Promotes an imported (unverified) entry, or demotes one. Imports never change the tier.",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "Catalog entry id.", Format: "uuid"}},
		Body:        tierInput{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The entry.", Body: catalog.EntryView{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
}
