package api

import (
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/overrides"
	"github.com/agentpack/gateway/shared/policy"
	"github.com/agentpack/gateway/shared/ratelimit"
	"github.com/agentpack/gateway/shared/restdoc"
)

// governanceRoutes are what a workspace's admins set on top of its connections: rate
// limits, tool overrides and access policies.
var governanceRoutes = []Route{
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
}
