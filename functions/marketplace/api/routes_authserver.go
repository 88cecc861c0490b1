package api

import (
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/grants"
	"github.com/agentpack/gateway/shared/idp"
	"github.com/agentpack/gateway/shared/restdoc"
)

// authServerRoutes are the REST routes of the gateway's own authorization server and its
// MCP access: connected clients, trusted identity providers, a person's MCP tokens.
var authServerRoutes = []Route{
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
}
