package api

import (
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/restdoc"
)

// connectionRoutes are a workspace's connections under /api/mcp-connections: CRUD, test,
// refresh, tools, skills, drift approval, and upstream authorization (authorize, OAuth
// settings, the consent page's continuation).
var connectionRoutes = []Route{
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
}
