package api

import (
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/identity"
	"github.com/agentpack/gateway/shared/restdoc"
	"github.com/getkin/kin-openapi/openapi3"
)

// workspaceRoutes are about the caller and their workspaces: the event log, who the
// caller is, workspaces, members and invitations, usage.
var workspaceRoutes = []Route{
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
