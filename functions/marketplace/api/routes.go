package api

import (
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/grants"
	"github.com/agentpack/gateway/shared/identity"
	"github.com/agentpack/gateway/shared/idp"
	"github.com/agentpack/gateway/shared/overrides"
	"github.com/agentpack/gateway/shared/policy"
	"github.com/agentpack/gateway/shared/ratelimit"
	"github.com/agentpack/gateway/shared/registry"
	"github.com/agentpack/gateway/shared/restdoc"
	"github.com/getkin/kin-openapi/openapi3"
)

// Route is one authenticated REST route: an http.ServeMux pattern ("METHOD /path"), its
// handler, and its operation in the OpenAPI document (the types it reads and answers,
// its words and its error codes; shared/restdoc). Handler registers Pattern; openapi.go
// builds the document from Op.
type Route struct {
	Pattern string
	handler func(a *API) handlerFunc
	Op      restdoc.Op
}

// Routes are the authenticated routes of Handler, in registration order.
var Routes = []Route{
	{Pattern: "GET /api/connected-clients", handler: func(a *API) handlerFunc { return a.connectedClientList }, Op: restdoc.Op{
		ID: "connectedClientList", Tag: "connected-clients",
		Summary: "List connected clients: the caller's own, or with workspaceId every one of that workspace (admin)",
		Query:   connectedClientQuery{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Active connected clients, newest first.", Body: connectedClientList{}},
		},
		Errors: []apperr.Code{apperr.Forbidden},
		ErrorText: map[apperr.Code]string{
			apperr.Forbidden: "workspaceId names a workspace the caller is not an admin of (FORBIDDEN).",
		},
	}},
	{Pattern: "DELETE /api/connected-clients/{id}", handler: func(a *API) handlerFunc { return a.connectedClientRevoke }, Op: restdoc.Op{
		ID: "connectedClientRevoke", Tag: "connected-clients",
		Summary:     "Revoke a connected client: the caller's own, or any of a workspace the caller is an admin of",
		Description: "Its refresh tokens are refused from now on, its next MCP call gets the 401 challenge again, and the consent is forgotten (the client must ask again).",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "Grant id.", Format: ""}},
		Responses: []restdoc.Response{
			{Status: 204, Description: "Revoked."},
		},
		Errors: []apperr.Code{apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.NotFound: "No such active connected client visible to the caller (NOT_FOUND).",
		},
	}},
	{Pattern: "GET /api/trusted-idps", handler: func(a *API) handlerFunc { return a.trustedIDPList }, Op: restdoc.Op{
		ID: "trustedIdpList", Tag: "trusted-idps",
		Summary:     "List the trusted identity providers (superuser)",
		Description: "The enterprise identity providers whose ID-JAGs the gateway's authorization server exchanges for access tokens with the JWT bearer grant, without a consent page (docs/AUTH.md \"The enterprise path\").",
		Responses: []restdoc.Response{
			{Status: 200, Description: "Every trusted identity provider, ordered by issuer.", Body: trustedIDPList{}},
		},
		Errors: []apperr.Code{apperr.Forbidden},
	}},
	{Pattern: "PUT /api/trusted-idps", handler: func(a *API) handlerFunc { return a.trustedIDPPut }, Op: restdoc.Op{
		ID: "trustedIdpPut", Tag: "trusted-idps",
		Summary:     "Create or replace a trusted identity provider (superuser)",
		Description: "Every field is set (the provider of the same issuer is replaced). Disabling one refuses its ID-JAGs at once; the access tokens it already led to live out their lifetime (revoke the connected clients to end them).",
		Body:        idp.Input{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The provider as stored.", Body: idp.Provider{}},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "issuer or jwksUrl is not an https URL, or more than 100 client ids (VALIDATION_ERROR).",
		},
	}},
	{Pattern: "DELETE /api/trusted-idps", handler: func(a *API) handlerFunc { return a.trustedIDPDelete }, Op: restdoc.Op{
		ID: "trustedIdpDelete", Tag: "trusted-idps",
		Summary: "Delete a trusted identity provider (superuser)",
		Query:   trustedIDPQuery{},
		Responses: []restdoc.Response{
			{Status: 204, Description: "Deleted: its ID-JAGs are refused from now on."},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "GET /api/mcp-tokens", handler: func(a *API) handlerFunc { return a.mcpTokenList }, Op: restdoc.Op{
		ID: "mcpTokenList", Tag: "mcp-tokens",
		Summary:     "List the caller's MCP access tokens",
		Description: "The caller's own MCP access tokens that are neither revoked nor expired, newest first, in every workspace; never a token (it is shown once, at creation). Nobody else's are listed: an admin sees a member's tokens among the workspace's connected clients.",
		Responses: []restdoc.Response{
			{Status: 200, Description: "The caller's active MCP access tokens.", Body: mcpTokenList{}},
		},
		Errors: []apperr.Code{apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.NotFound: "This gateway's authorization server is not configured (NOT_FOUND).",
		},
	}},
	{Pattern: "POST /api/mcp-tokens", handler: func(a *API) handlerFunc { return a.mcpTokenCreate }, Op: restdoc.Op{
		ID: "mcpTokenCreate", Tag: "mcp-tokens",
		Summary:     "Create an MCP access token for an MCP client that takes only a header",
		Description: "For clients without OAuth: a bearer token for the gateway's MCP endpoint (<origin>/mcp/{workspaceId}) only, never the REST API, acting as the caller in workspaceId with the caller's role there (member or admin), for lifetimeSeconds (1 hour to 90 days). The token is in this answer only: it is not stored and cannot be read again. It ends at its expiry, when revoked (DELETE), or at the next call after the caller leaves the workspace or loses the role.",
		Body:        grants.TokenInput{},
		Responses: []restdoc.Response{
			{Status: 201, Description: "Created; token is shown this once.", Body: grants.CreatedToken{}},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden, apperr.NotFound, apperr.Conflict},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "lifetimeSeconds outside 3600 to 7776000, a name over 100 bytes or with control characters, or workspaceId missing or not a UUID; details.field names the member (VALIDATION_ERROR).",
			apperr.Forbidden:  "The caller is not a member of workspaceId (FORBIDDEN).",
			apperr.NotFound:   "This gateway's authorization server is not configured (NOT_FOUND).",
			apperr.Conflict:   "The caller already holds 50 active MCP access tokens (CONFLICT).",
		},
	}},
	{Pattern: "DELETE /api/mcp-tokens/{id}", handler: func(a *API) handlerFunc { return a.mcpTokenRevoke }, Op: restdoc.Op{
		ID: "mcpTokenRevoke", Tag: "mcp-tokens",
		Summary:     "Revoke one of the caller's MCP access tokens",
		Description: "Its next call to the MCP endpoint is refused (401 with the challenge).",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "MCP access token id.", Format: "uuid"}},
		Responses: []restdoc.Response{
			{Status: 204, Description: "Revoked."},
		},
		Errors: []apperr.Code{apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.NotFound: "No such active MCP access token of the caller (another person's is not found either), or no authorization server (NOT_FOUND).",
		},
	}},
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
	{Pattern: "GET /api/mcp-connections", handler: func(a *API) handlerFunc { return a.connectionList }, Op: restdoc.Op{
		ID: "connectionList", Tag: "connections",
		Summary:     "List connections (admin)",
		Description: "Global connections and those of the caller's workspaces (all, for a superuser); optionally one workspace.",
		Query:       onlyWorkspaceQuery{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Connections.", Body: connectionList{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "POST /api/mcp-connections", handler: func(a *API) handlerFunc { return a.connectionCreate }, Op: restdoc.Op{
		ID: "connectionCreate", Tag: "connections",
		Summary:     "Create a manual connection (admin)",
		Description: "Validated like an install (URL guard, header schema). Connected at once when enabled; a failed connect is recorded, not raised. Global connections (no workspaceId) need a superuser.",
		Body:        connections.CreateInput{},
		Responses: []restdoc.Response{
			{Status: 201, Description: "Created.", Body: connections.OutcomeView{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound, apperr.InvalidReference},
	}},
	{Pattern: "GET /api/mcp-connections/statuses", handler: func(a *API) handlerFunc { return a.connectionStatuses }, Op: restdoc.Op{
		ID: "connectionStatuses", Tag: "connections",
		Summary:     "Connect state of every visible connection (admin)",
		Description: "live* fields come from this process's session cache (seed: the activeConnections map); lastConnectedAt, lastError and workingTransport are the last state recorded in Postgres; tools counts the stored tools per drift status.",
		Query:       onlyWorkspaceQuery{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Statuses.", Body: statusList{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "GET /api/mcp-connections/authorizations", handler: func(a *API) handlerFunc { return a.myAuthorizations }, Op: restdoc.Op{
		ID: "myAuthorizations", Tag: "connections",
		Summary:     "The caller's upstream authorization of each OAuth connection (any role)",
		Description: "Every OAuth connection (oauth, oauth_per_user, client_credentials) the caller may use — their workspaces' and global ones — with the state of the grant the caller's calls use: for oauth_per_user the caller's own, otherwise the connection's shared one. canAuthorize says whether the caller may start the consent with POST /api/mcp-connections/{id}/authorize (anyone for their own oauth_per_user grant; an admin for a shared grant). Connections without OAuth are left out (docs/UPSTREAM-AUTH.md).",
		Query:       onlyWorkspaceQuery{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Authorizations.", Body: authorizationList{}},
		},
		Errors: []apperr.Code{apperr.NotFound},
	}},
	{Pattern: "GET /api/mcp-connections/{id}", handler: func(a *API) handlerFunc { return a.connectionGet }, Op: restdoc.Op{
		ID: "connectionGet", Tag: "connections",
		Summary:     "Show a connection (admin)",
		Description: "Header values are redacted.",
		Responses: []restdoc.Response{
			{Status: 200, Description: "The connection.", Body: connections.DetailView{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "PUT /api/mcp-connections/{id}", handler: func(a *API) handlerFunc { return a.connectionUpdate }, Op: restdoc.Op{
		ID: "connectionUpdate", Tag: "connections",
		Summary:     "Update a connection (admin)",
		Description: "Partial update. Disconnects, and reconnects when enabled (a failed connect is recorded in connect). A header value of \"[REDACTED]\" keeps the stored value.",
		Body:        connections.UpdateInput{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Updated.", Body: connections.OutcomeView{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "DELETE /api/mcp-connections/{id}", handler: func(a *API) handlerFunc { return a.connectionDelete }, Op: restdoc.Op{
		ID: "connectionDelete", Tag: "connections",
		Summary:     "Delete a connection (admin)",
		Description: "Hard delete; tools and pins go with it.",
		Responses: []restdoc.Response{
			{Status: 204, Description: "Deleted."},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "POST /api/mcp-connections/{id}/toggle", handler: func(a *API) handlerFunc { return a.connectionToggle }, Op: restdoc.Op{
		ID: "connectionToggle", Tag: "connections",
		Summary:     "Enable or disable a connection (admin)",
		Description: "Flips enabled. Disabling removes its tools from the gateway; enabling reconnects.",
		Responses: []restdoc.Response{
			{Status: 200, Description: "The connection after the toggle.", Body: connections.OutcomeView{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "POST /api/mcp-connections/{id}/test", handler: func(a *API) handlerFunc { return a.connectionTest }, Op: restdoc.Op{
		ID: "connectionTest", Tag: "connections",
		Summary:     "Test a connection (admin)",
		Description: "Connects afresh within 10 s, lists and stores the tools (drift detection included). An upstream failure is success=false with error, still 200.",
		Responses: []restdoc.Response{
			{Status: 200, Description: "The outcome.", Body: connections.RefreshResult{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "POST /api/mcp-connections/{id}/refresh", handler: func(a *API) handlerFunc { return a.connectionRefresh }, Op: restdoc.Op{
		ID: "connectionRefresh", Tag: "connections",
		Summary:     "Re-list a connection's tools (admin)",
		Description: "Like test on the cached session. A tool whose definition changed since it was approved is withheld from the gateway (status drifted) until approved; the change is logged (mcp.tool_drift).",
		Responses: []restdoc.Response{
			{Status: 200, Description: "The outcome.", Body: connections.RefreshResult{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "GET /api/mcp-connections/{id}/tools", handler: func(a *API) handlerFunc { return a.connectionTools }, Op: restdoc.Op{
		ID: "connectionTools", Tag: "connections",
		Summary:     "List a connection's stored tools (admin)",
		Description: "With their drift status: active (served), drifted or pending (withheld until approved), and the schema notes of the last listing (normalised or dropped input schemas).",
		Responses: []restdoc.Response{
			{Status: 200, Description: "Tools.", Body: toolList{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "GET /api/mcp-connections/{id}/skills", handler: func(a *API) handlerFunc { return a.connectionSkills }, Op: restdoc.Op{
		ID: "connectionSkills", Tag: "connections",
		Summary:     "List a connection's skills (SEP-2640)",
		Description: "The skills its upstream served at the last refresh (the io.modelcontextprotocol/skills extension's skills/list; docs/SKILLS.md): per skill the uri of its SKILL.md, the frontmatter's name and description, and how many files its manifest lists. Empty when the upstream declares no skills. Read by the Marketplace; clients get the skills themselves from the MCP endpoints.",
		Responses: []restdoc.Response{
			{Status: 200, Description: "Skills.", Body: skillList{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "POST /api/mcp-connections/{id}/tools/{name}/approve", handler: func(a *API) handlerFunc { return a.toolApprove }, Op: restdoc.Op{
		ID: "connectionToolApprove", Tag: "connections",
		Summary:     "Approve a tool's current definition (admin)",
		Description: "A drifted or pending tool becomes active and returns to the gateway. Idempotent. Logs mcp.tool_approved.",
		Responses: []restdoc.Response{
			{Status: 200, Description: "The tool.", Body: db.ConnectionTool{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "GET /api/events", handler: func(a *API) handlerFunc { return a.eventList }, Op: restdoc.Op{
		ID: "eventList", Tag: "events",
		Summary:     "A workspace's event log (admin)",
		Description: "Who did what, when: the workspace's event_log rows, newest first, filterable by entity type and action.",
		Query:       eventQuery{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Events.", Body: eventPage{}},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR), including a missing workspaceId when the token names several workspaces; nothing written.",
			apperr.NotFound:   "Unknown workspace, or one the caller is not a member of (NOT_FOUND).",
		},
	}},
	{Pattern: "POST /api/mcp-connections/{id}/authorize", handler: func(a *API) handlerFunc { return a.connectionAuthorize }, Op: restdoc.Op{
		ID: "connectionAuthorize", Tag: "connections",
		Summary:      "Start (or restart) the upstream authorization of a connection",
		Description:  "For oauth and oauth_per_user connections: answers an authorizationUrl to open in a browser (an admin for oauth; any member of the workspace for their own oauth_per_user grant). For client_credentials (admin): fetches a token and connects at once. The state in the URL is bound to the caller and the connection, single use, valid 10 minutes; PKCE S256.",
		Body:         authorizeInput{},
		BodyOptional: true,
		Responses: []restdoc.Response{
			{Status: 200, Description: "The authorization to complete, or its outcome.", Body: connections.Authorization{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "The connection does not use OAuth (VALIDATION_ERROR).",
		},
	}},
	{Pattern: "GET /api/mcp-connections/{id}/oauth-settings", handler: func(a *API) handlerFunc { return a.connectionOAuthSettings }, Op: restdoc.Op{
		ID: "connectionOAuthSettingsGet", Tag: "connections",
		Summary: "A connection's OAuth settings (admin)",
		Responses: []restdoc.Response{
			{Status: 200, Description: "The connection's own OAuth settings and the effective ones (its catalog entry's with the connection's over them, field by field).", Body: oauthSettingsAnswer{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Forbidden: "Not an admin of the connection's workspace (FORBIDDEN).",
			apperr.NotFound:  "No such connection (NOT_FOUND).",
		},
	}},
	{Pattern: "PUT /api/mcp-connections/{id}/oauth-settings", handler: func(a *API) handlerFunc { return a.connectionOAuthSettingsSet }, Op: restdoc.Op{
		ID: "connectionOAuthSettingsSet", Tag: "connections",
		Summary: "Set a connection's OAuth settings (admin): expected issuer or metadata URL, scopes, extra authorization parameters",
		Body:    connections.OAuthSettings{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The connection's own OAuth settings and the effective ones (its catalog entry's with the connection's over them, field by field).", Body: oauthSettingsAnswer{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Invalid settings: a URL that is not absolute http(s) or is refused by the URL guard, a scope that is not an RFC 6749 scope token, a parameter name outside [A-Za-z0-9_.-]{1,64} or one the flow sets itself, a value with control characters (VALIDATION_ERROR).",
			apperr.Forbidden:  "Not an admin of the connection's workspace (FORBIDDEN).",
			apperr.NotFound:   "No such connection (NOT_FOUND).",
		},
	}},
	{Pattern: "POST " + OAuthConsentPath, handler: func(a *API) handlerFunc { return a.oauthConsent }, Op: restdoc.Op{
		ID: "oauthConsent", Tag: "connections",
		Summary:     "Continue an authorization link as the signed-in user (the console's consent page)",
		Description: "The link a caller receives (…/admin/#/consent/{link}) opens the console, which signs the browser in and posts the link id here. Only the caller the link was made for gets through (same subject, in the flow's workspace; for a shared oauth grant an admin): the answer sets an HttpOnly, SameSite=Lax cookie that binds this browser to the flow (the callback requires it) and names the authorization server's URL to open. Anyone else is refused and nothing is stored (docs/UPSTREAM-AUTH.md).",
		Body:        consentInput{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The browser is the link's user: open authorizationUrl (the binding cookie is set).", Body: consentAnswer{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation:  "Missing link or malformed body (VALIDATION_ERROR).",
			apperr.Forbidden:   "The link was made for another user or workspace, or it is a shared authorization and the signed-in user is not an admin (FORBIDDEN). Nothing is stored.",
			apperr.NotFound:    "Unknown, used or expired link (NOT_FOUND).",
			apperr.Unavailable: "UNAVAILABLE: the database is unreachable, or upstream authorization is not configured.",
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
	{Pattern: "GET /api/rate-limits", handler: func(a *API) handlerFunc { return a.rateLimitList }, Op: restdoc.Op{
		ID: "rateLimitList", Tag: "rate-limits",
		Summary:     "List a workspace's rate limits with their usage (admin)",
		Description: "Each limit with the counts of its current UTC minute and day windows (usage: one row per window and subject; a per-member limit has one row per member who called in the window).",
		Query:       workspaceQuery{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The limits.", Body: rateLimitList{}},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "POST /api/rate-limits", handler: func(a *API) handlerFunc { return a.rateLimitSet }, Op: restdoc.Op{
		ID: "rateLimitSet", Tag: "rate-limits",
		Summary:     "Set a rate limit (admin)",
		Description: "Creates the limit of the body's scope (workspace; connectionId or tool, or neither for every proxied call; principal \"\" for one bucket shared by the workspace, \"*\" for a bucket per member, or one member's token subject), or replaces its values. A call over a limit gets a RATE_LIMITED tool result (isError, retryable, details.retryAfterSeconds) and reaches no upstream.",
		Body:        ratelimit.Input{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Replaced the values of the scope's limit.", Body: ratelimit.View{}},
			{Status: 201, Description: "Created.", Body: ratelimit.View{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.NotFound: "The workspace or the connection is unknown, or not the caller's (NOT_FOUND).",
		},
	}},
	{Pattern: "DELETE /api/rate-limits/{id}", handler: func(a *API) handlerFunc { return a.rateLimitDelete }, Op: restdoc.Op{
		ID: "rateLimitDelete", Tag: "rate-limits",
		Summary:    "Delete a rate limit (admin)",
		PathParams: map[string]restdoc.PathParam{"id": {Description: "Rate limit id.", Format: "uuid"}},
		Query:      workspaceQuery{},
		Responses: []restdoc.Response{
			{Status: 204, Description: "Deleted, with its counters."},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden, apperr.NotFound},
	}},
	{Pattern: "GET /api/mcp-connections/{id}/overrides", handler: func(a *API) handlerFunc { return a.toolOverrideList }, Op: restdoc.Op{
		ID: "toolOverrideList", Tag: "overrides",
		Summary:     "List a connection's tool overrides in a workspace (admin)",
		Description: "Every override of the connection's tools in the workspace, each with the upstream's original; an override whose tool the upstream no longer lists is dormant (upstream null) and applies again when the tool returns.",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "Connection id (the workspace's own or a global one).", Format: "uuid"}},
		Query:       overrideQuery{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The overrides.", Body: overrideList{}},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR, details.field names the field); nothing written.",
		},
	}},
	{Pattern: "GET /api/mcp-connections/{id}/tools/{name}/override", handler: func(a *API) handlerFunc { return a.toolOverrideGet }, Op: restdoc.Op{
		ID: "toolOverrideGet", Tag: "overrides",
		Summary:    "Show a tool's override in a workspace (admin)",
		PathParams: map[string]restdoc.PathParam{"id": {Description: "Connection id (the workspace's own or a global one).", Format: "uuid"}, "name": {Description: "The upstream's own tool name (URL-escaped), not the exposed one.", Format: ""}},
		Query:      overrideQuery{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The override, with the upstream's original (null when dormant).", Body: overrides.View{}},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR, details.field names the field); nothing written.",
		},
	}},
	{Pattern: "PUT /api/mcp-connections/{id}/tools/{name}/override", handler: func(a *API) handlerFunc { return a.toolOverrideSet }, Op: restdoc.Op{
		ID: "toolOverrideSet", Tag: "overrides",
		Summary:     "Set a tool's override in a workspace (admin)",
		Description: "Creates or replaces the whole override of the upstream tool in the workspace. The gateway then lists the tool under name (on the aggregate endpoint) with title, description and annotations replaced and _meta[\"io.agentpack/override\"] = {upstreamName, fields}, or not at all when hidden (a call answers unknown tool); calls still reach the upstream's own name with the client's argument bytes. name must be 1-64 of A-Z a-z 0-9 _ -, not start with agentpack_ (409) or mcp_ (400), and not be another tool's or override's exposed name in the workspace (409). Logs tool_override.set and rebuilds the workspace's catalog.",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "Connection id (the workspace's own or a global one).", Format: "uuid"}, "name": {Description: "The upstream's own tool name (URL-escaped), not the exposed one.", Format: ""}},
		Body:        overrides.Input{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Replaced the tool's override.", Body: overrides.View{}},
			{Status: 201, Description: "Created the tool's override.", Body: overrides.View{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound, apperr.Conflict},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR, details.field names the field); nothing written.",
			apperr.Conflict:   "CONFLICT: name is a built-in's, another tool's or another override's (details.conflictsWith); nothing written.",
		},
	}},
	{Pattern: "DELETE /api/mcp-connections/{id}/tools/{name}/override", handler: func(a *API) handlerFunc { return a.toolOverrideDelete }, Op: restdoc.Op{
		ID: "toolOverrideDelete", Tag: "overrides",
		Summary:     "Delete a tool's override in a workspace (admin)",
		Description: "The tool is the upstream's again. Logs tool_override.deleted and rebuilds the workspace's catalog.",
		PathParams:  map[string]restdoc.PathParam{"id": {Description: "Connection id (the workspace's own or a global one).", Format: "uuid"}, "name": {Description: "The upstream's own tool name (URL-escaped), not the exposed one.", Format: ""}},
		Query:       overrideQuery{},
		Responses: []restdoc.Response{
			{Status: 204, Description: "Deleted."},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR, details.field names the field); nothing written.",
		},
	}},
	{Pattern: "GET /api/me", handler: func(a *API) handlerFunc { return a.me }, Op: restdoc.Op{
		ID: "me", Tag: "members",
		Summary:     "Who the caller is (any role)",
		Description: "The token's subject and role, with the person's email and name when the gateway knows them (its authorization server's sign-ins and make run's development sign-ins record people; an external provider's token subjects have none). The console's header shows it.",
		Responses: []restdoc.Response{
			{Status: 200, Description: "The caller.", Body: meAnswer{}},
		},
	}},
	{Pattern: "POST /api/workspaces", handler: func(a *API) handlerFunc { return a.workspaceCreate }, Op: restdoc.Op{
		ID: "workspaceCreate", Tag: "workspaces",
		Summary:     "Create a workspace (superuser)",
		Description: "A new workspace with its default project. The caller, when a person who signed in, becomes its admin (creatorIsAdmin); it then adds members with POST /api/workspaces/{ws}/members (docs/DEPLOY.md \"First sign-in\").",
		Body:        workspaceInput{},
		Responses: []restdoc.Response{
			{Status: 201, Description: "Created.", Body: identity.Workspace{}},
		},
		Errors: []apperr.Code{apperr.Forbidden},
		ErrorText: map[apperr.Code]string{
			apperr.Validation:      "The name is empty or longer than 200 bytes (VALIDATION_ERROR); nothing written.",
			apperr.Forbidden:       "The caller is not a superuser (FORBIDDEN).",
			apperr.PayloadTooLarge: "The body is too large (PAYLOAD_TOO_LARGE).",
		},
	}},
	{Pattern: "GET /api/workspaces/{ws}/members", handler: func(a *API) handlerFunc { return a.memberList }, Op: restdoc.Op{
		ID: "memberList", Tag: "members",
		Summary:     "List a workspace's members (admin)",
		Description: "Members by membership, then members by a group role of the identity provider's groups claim (source \"group\"), then invitations waiting for a first sign-in (status \"invited\").",
		Responses: []restdoc.Response{
			{Status: 200, Description: "The members.", Body: memberList{}},
		},
		Errors: []apperr.Code{apperr.Forbidden},
		ErrorText: map[apperr.Code]string{
			apperr.Forbidden: "The caller is not an admin of this workspace (FORBIDDEN): another workspace's admin gets 403 too.",
		},
	}},
	{Pattern: "POST /api/workspaces/{ws}/members", handler: func(a *API) handlerFunc { return a.memberAdd }, Op: restdoc.Op{
		ID: "memberAdd", Tag: "members",
		Summary:     "Add a member, or invite an email (admin)",
		Description: "A person who has signed in with this verified email becomes a member at once (status \"active\"); anyone else is invited (status \"invited\"), and becomes a member at their first sign-in with that verified email.",
		Body:        memberInput{},
		Responses: []restdoc.Response{
			{Status: 201, Description: "Added or invited.", Body: identity.Member{}},
		},
		Errors: []apperr.Code{apperr.NotFound, apperr.Conflict, apperr.Forbidden},
		ErrorText: map[apperr.Code]string{
			apperr.Validation:      "Malformed or invalid input: the email is not one address, or the role is not member or admin (VALIDATION_ERROR); nothing written.",
			apperr.NotFound:        "No such workspace (NOT_FOUND).",
			apperr.Conflict:        "Already a member, or already invited (CONFLICT); nothing written.",
			apperr.PayloadTooLarge: "The body is too large (PAYLOAD_TOO_LARGE).",
			apperr.Forbidden:       "The caller is not an admin of this workspace (FORBIDDEN): another workspace's admin gets 403 too.",
		},
	}},
	{Pattern: "PUT /api/workspaces/{ws}/members/{personId}", handler: func(a *API) handlerFunc { return a.memberSetRole }, Op: restdoc.Op{
		ID: "memberSetRole", Tag: "members",
		Summary: "Change a member's role (admin)",
		Body:    memberRoleInput{},
		Responses: []restdoc.Response{
			{Status: 204, Description: "Changed; the member's next token or refresh carries it."},
		},
		Errors: []apperr.Code{apperr.NotFound, apperr.Conflict, apperr.Forbidden},
		ErrorText: map[apperr.Code]string{
			apperr.Validation:      "The role is not member or admin (VALIDATION_ERROR); nothing written.",
			apperr.NotFound:        "Not a member of this workspace by membership (NOT_FOUND): a member by group role changes at the identity provider.",
			apperr.Conflict:        "The workspace would have no admin left (CONFLICT); nothing written.",
			apperr.PayloadTooLarge: "The body is too large (PAYLOAD_TOO_LARGE).",
			apperr.Forbidden:       "The caller is not an admin of this workspace (FORBIDDEN): another workspace's admin gets 403 too.",
		},
	}},
	{Pattern: "DELETE /api/workspaces/{ws}/members/{personId}", handler: func(a *API) handlerFunc { return a.memberRemove }, Op: restdoc.Op{
		ID: "memberRemove", Tag: "members",
		Summary:     "Remove a member (admin)",
		Description: "The person's next token or refresh no longer names this workspace.",
		Responses: []restdoc.Response{
			{Status: 204, Description: "Removed."},
		},
		Errors: []apperr.Code{apperr.NotFound, apperr.Conflict, apperr.Forbidden},
		ErrorText: map[apperr.Code]string{
			apperr.NotFound:  "Not a member of this workspace by membership (NOT_FOUND).",
			apperr.Conflict:  "The workspace would have no admin left (CONFLICT); nothing written.",
			apperr.Forbidden: "The caller is not an admin of this workspace (FORBIDDEN): another workspace's admin gets 403 too.",
		},
	}},
	{Pattern: "DELETE /api/workspaces/{ws}/invitations/{email}", handler: func(a *API) handlerFunc { return a.invitationRevoke }, Op: restdoc.Op{
		ID: "invitationRevoke", Tag: "members",
		Summary: "Withdraw an invitation (admin)",
		Responses: []restdoc.Response{
			{Status: 204, Description: "Withdrawn."},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.NotFound, apperr.Forbidden},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "The email is not one address (VALIDATION_ERROR).",
			apperr.NotFound:   "No invitation of this email to this workspace (NOT_FOUND).",
			apperr.Forbidden:  "The caller is not an admin of this workspace (FORBIDDEN): another workspace's admin gets 403 too.",
		},
	}},
	{Pattern: "GET /api/policies", handler: func(a *API) handlerFunc { return a.policyGet(false) }, Op: restdoc.Op{
		ID: "policyGet", Tag: "policies",
		Summary:     "Read a workspace's access policy document (admin)",
		Description: "The workspace's Cedar policies as saved, with their ids (docs/POLICIES.md). An empty text means no policy: every call is decided by roles alone.",
		Query:       workspaceQuery{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The document.", Body: policy.View{}},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR); for a policy document details.problems lists each problem with its line and column. Nothing written.",
			apperr.Forbidden:  "The caller's role may not do this, or the workspace's access policies deny them the policy API (FORBIDDEN, details.policyIds).",
		},
	}},
	{Pattern: "PUT /api/policies", handler: func(a *API) handlerFunc { return a.policyPut(false) }, Op: restdoc.Op{
		ID: "policyPut", Tag: "policies",
		Summary:     "Save a workspace's access policy document (admin)",
		Description: "Parses the Cedar text and validates it against a schema generated from the workspace's tools (unknown tool, connection, argument, attribute, action or role names are errors with their line and column), refuses a document that would lock every admin out of the policy API (409), then stores it and republishes the workspace's catalog, which carries it to the gateway.",
		Body:        policyInput{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Saved.", Body: policy.View{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound, apperr.Conflict},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR); for a policy document details.problems lists each problem with its line and column. Nothing written.",
			apperr.Forbidden:  "The caller's role may not do this, or the workspace's access policies deny them the policy API (FORBIDDEN, details.policyIds).",
			apperr.Conflict:   "The document would lock every admin out of the policy API (CONFLICT, details.reason \"lockout\"); nothing written.",
		},
	}},
	{Pattern: "POST /api/policies/validate", handler: func(a *API) handlerFunc { return a.policyValidate }, Op: restdoc.Op{
		ID: "policyValidate", Tag: "policies",
		Summary: "Validate a policy document without saving it (admin)",
		Body:    policyInput{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Valid.", Body: policyValidity{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR); for a policy document details.problems lists each problem with its line and column. Nothing written.",
			apperr.Forbidden:  "The caller's role may not do this, or the workspace's access policies deny them the policy API (FORBIDDEN, details.policyIds).",
		},
	}},
	{Pattern: "POST /api/policies/what-if", handler: func(a *API) handlerFunc { return a.policyWhatIf }, Op: restdoc.Op{
		ID: "policyWhatIf", Tag: "policies",
		Summary:     "Decide a hypothetical request (admin)",
		Description: "The decision the gateway would make for a principal (subject, role, groups), an action (list or call), a tool (exposed name or built-in) and arguments, under the saved document or the unsaved text given.",
		Body:        policy.WhatIf{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The decision and the policies that made it.", Body: policy.Decision{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR); for a policy document details.problems lists each problem with its line and column. Nothing written.",
			apperr.Forbidden:  "The caller's role may not do this, or the workspace's access policies deny them the policy API (FORBIDDEN, details.policyIds).",
		},
	}},
	{Pattern: "GET /api/policies/global", handler: func(a *API) handlerFunc { return a.policyGet(true) }, Op: restdoc.Op{
		ID: "policyGlobalGet", Tag: "policies",
		Summary: "Read the global access policy document (admin)",
		Responses: []restdoc.Response{
			{Status: 200, Description: "The document (workspaceId null).", Body: policy.View{}},
		},
		Errors: []apperr.Code{apperr.Forbidden},
		ErrorText: map[apperr.Code]string{
			apperr.Forbidden: "The caller's role may not do this, or the workspace's access policies deny them the policy API (FORBIDDEN, details.policyIds).",
		},
	}},
	{Pattern: "PUT /api/policies/global", handler: func(a *API) handlerFunc { return a.policyPut(true) }, Op: restdoc.Op{
		ID: "policyGlobalPut", Tag: "policies",
		Summary:     "Save the global access policy document (superuser)",
		Description: "Evaluated before every workspace's document. Validated for the model's types and attributes (names are per workspace); republishes every workspace's catalog.",
		Body:        policyInput{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "Saved.", Body: policy.View{}},
		},
		Errors: []apperr.Code{apperr.Forbidden, apperr.Conflict},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR); for a policy document details.problems lists each problem with its line and column. Nothing written.",
			apperr.Forbidden:  "The caller's role may not do this, or the workspace's access policies deny them the policy API (FORBIDDEN, details.policyIds).",
			apperr.Conflict:   "The document would lock every admin out of the policy API (CONFLICT, details.reason \"lockout\"); nothing written.",
		},
	}},
	{Pattern: "GET /api/usage", handler: func(a *API) handlerFunc { return a.usageGet }, Op: restdoc.Op{
		ID: "usageGet", Tag: "policies",
		Summary:     "A workspace's tool usage (admin)",
		Description: "Calls, errors (calls that did not succeed: refused by an access policy, a tool error result (isError), the upstream's JSON-RPC error, a timeout, an unreachable or failing upstream) and p50/p95 latency (ms) per tool (its exposed name, whichever endpoint called it), connection, principal (with the person's email or name as label when known) or chat over the last 24 h or 7 d, read from the audit log at request time (docs/POLICIES.md \"Usage\"). format=csv answers text/csv.",
		Query:       usageQuery{},
		Responses: []restdoc.Response{
			{Status: 200, Description: "The groups, busiest first (at most 500).", Body: usageAnswer{}},
			{Status: 200, Description: "The groups, busiest first (at most 500).", ContentType: "text/csv", Schema: openapi3.NewStringSchema()},
		},
		Errors: []apperr.Code{apperr.Validation, apperr.Forbidden, apperr.NotFound},
		ErrorText: map[apperr.Code]string{
			apperr.Validation: "Malformed or invalid input (VALIDATION_ERROR).",
		},
	}},
}
