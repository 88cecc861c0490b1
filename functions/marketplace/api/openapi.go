package api

import (
	_ "embed"
	"net/http"
	"reflect"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/grants"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/overrides"
	"github.com/agentpack/gateway/shared/pins"
	"github.com/agentpack/gateway/shared/policy"
	"github.com/agentpack/gateway/shared/ratelimit"
	"github.com/agentpack/gateway/shared/restdoc"
	"github.com/getkin/kin-openapi/openapi3"
)

// openAPI is the OpenAPI 3.1 description of every REST route of the product: this
// function's (Routes) and the pins function's (functions/pins/api Ops). It is generated,
// never edited: `go generate ./functions/marketplace/api` runs cmd/genopenapi, which
// writes BuildOpenAPI's output with the pins function's operations to openapi.json, and
// cmd/genopenapi's TestOpenAPIGenerated fails while the committed file differs. The
// document is assembled there, in a command, because the two functions do not import each
// other. It is committed (not built at start-up) so that a cold start does no reflection
// and a review shows what a change of a type does to the contract.
//
//go:generate go run github.com/agentpack/gateway/cmd/genopenapi openapi.json
//go:embed openapi.json
var openAPI []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPI)
}

// OpenAPIDocument returns the OpenAPI 3.1 document served at OpenAPIPath (JSON bytes; the
// caller must not modify them). Tests validate REST responses against it.
func OpenAPIDocument() []byte { return openAPI }

// errorEnvelope is the body of every error answer (httpapi.Error).
type errorEnvelope struct {
	Error httpapi.ErrorBody `json:"error"`
}

// docBuilder holds what the document says besides the operations.
var docBuilder = restdoc.Builder{
	Info: openapi3.Info{
		Title:   "Agentpack MCP Gateway REST API",
		Version: "1.0.0",
		Description: "The marketplace (catalog, installs, connections) and pins REST functions (docs/DESIGN.md §2, §7, §8). " +
			"Every route but this document needs a bearer JWT; writes need the admin role (catalog entries: superuser, since the " +
			"catalog is shared by every workspace), and a caller acts only inside its own workspaces (another workspace's objects " +
			`answer 404). Errors are {"error": {code, message, hint?, errorId?, details?}}. Header values are secrets and are never ` +
			"returned. This document is generated from the routes' Go types (functions/marketplace/api/routes_*.go, shared/restdoc).",
	},
	Tags: openapi3.Tags{
		{Name: "marketplace", Description: "The curated catalog, install and uninstall."},
		{Name: "catalog", Description: "A catalog entry's authorization settings (superuser)."},
		{Name: "connections", Description: "Connections CRUD, test, refresh, drift approval (admin)."},
		{Name: "chats", Description: "A workspace's chats (docs/DESIGN.md §7)."},
		{Name: "pins", Description: "Per-chat pins (docs/DESIGN.md §7)."},
		{Name: "events", Description: "A workspace's event log (admin)."},
		{Name: "rate-limits", Description: "Rate limits and quotas of a workspace's proxied tool calls (admin; docs/RATE-LIMITS.md)."},
		{Name: "overrides", Description: "Per-workspace tool overrides: rename, retitle, redescribe, hide or re-annotate a connection's tool for one workspace (docs/OVERRIDES.md)."},
		{Name: "workspaces", Description: "Workspaces (superuser; docs/DEPLOY.md)."},
		{Name: "members", Description: `A workspace's members and invitations (admin of the workspace; docs/AUTH.md "Signing in: the organisation's identity provider").`},
		{Name: "policies", Description: "Call-time access policies in Cedar: who may list and call which tool with which arguments (admin; docs/POLICIES.md)."},
		{Name: "connected-clients", Description: "The MCP clients connected through the gateway's own authorization server."},
		{Name: "mcp-tokens", Description: `A person's own MCP access tokens, for MCP clients that take only a header: valid at the MCP endpoint only, for a lifetime the person chooses, revocable (docs/AUTH.md "MCP access tokens").`},
	},
	ErrorBody: errorEnvelope{},
	PathParams: map[string]restdoc.PathParam{
		"id":       {Description: "Connection id.", Format: "uuid"},
		"name":     {Description: "The upstream tool name (URL-escaped)."},
		"chatId":   {Description: "Chat id.", Format: "uuid"},
		"pinId":    {Description: "Pin id.", Format: "uuid"},
		"ws":       {Description: "Workspace id."},
		"personId": {Description: "The person's id (Member.personId)."},
		"email":    {Description: "The invited email (percent-encoded)."},
	},
	Names: map[reflect.Type]string{
		reflect.TypeFor[catalog.EntryView]():           "CatalogEntry",
		reflect.TypeFor[pins.PinView]():                "Pin",
		reflect.TypeFor[pins.ChatView]():               "Chat",
		reflect.TypeFor[connections.View]():            "Connection",
		reflect.TypeFor[connections.DetailView]():      "ConnectionDetail",
		reflect.TypeFor[connections.OutcomeView]():     "ConnectionWithConnect",
		reflect.TypeFor[connections.RefreshResult]():   "TestResult",
		reflect.TypeFor[connections.Status]():          "ConnectionStatus",
		reflect.TypeFor[connections.EntryAuthInput]():  "EntryAuth",
		reflect.TypeFor[ratelimit.View]():              "RateLimit",
		reflect.TypeFor[ratelimit.Input]():             "RateLimitInput",
		reflect.TypeFor[overrides.View]():              "ToolOverride",
		reflect.TypeFor[overrides.Input]():             "ToolOverrideInput",
		reflect.TypeFor[policy.View]():                 "PolicyDocument",
		reflect.TypeFor[policy.WhatIf]():               "PolicyWhatIf",
		reflect.TypeFor[policy.Decision]():             "PolicyDecision",
		reflect.TypeFor[grants.View]():                 "ConnectedClient",
		reflect.TypeFor[grants.TokenView]():            "MCPToken",
		reflect.TypeFor[grants.CreatedToken]():         "MCPTokenCreated",
		reflect.TypeFor[grants.TokenInput]():           "MCPTokenInput",
		reflect.TypeFor[errorEnvelope]():               "ErrorBody",
		reflect.TypeFor[httpapi.ErrorBody]():           "Error",
		reflect.TypeFor[connections.InstallInput]():    "InstallInput",
		reflect.TypeFor[connections.CreateInput]():     "ConnectionCreate",
		reflect.TypeFor[connections.UpdateInput]():     "ConnectionUpdate",
		reflect.TypeFor[connections.MyAuthorization](): "MyAuthorization",
	},
	StandIns: map[reflect.Type]any{
		reflect.TypeFor[connections.RefreshResult](): connections.TestAnswer{},
	},
	Enums: map[reflect.Type][]string{
		reflect.TypeFor[apperr.Code](): codeNames(),
	},
}

func codeNames() []string {
	out := make([]string, len(apperr.Codes))
	for i, c := range apperr.Codes {
		out[i] = string(c)
	}
	return out
}

// OpenAPIOps are this function's operations of the document: Routes and the two routes
// Handler serves without a token (this document, the OAuth callback).
func OpenAPIOps() []restdoc.Op {
	ops := make([]restdoc.Op, 0, len(Routes)+8)
	for _, r := range Routes {
		op := r.Op
		op.Pattern = r.Pattern
		ops = append(ops, op)
	}
	page := openapi3.NewStringSchema()
	ops = append(ops,
		restdoc.Op{Pattern: "GET " + OpenAPIPath, ID: "openapi", Tag: "marketplace", Public: true,
			Summary: "This document", Description: "No token needed.",
			Responses: []restdoc.Response{{Status: 200, Description: "OpenAPI 3.1 document.", Schema: openapi3.NewObjectSchema()}}},
		restdoc.Op{Pattern: "GET " + OAuthCallbackPath, ID: "oauthCallback", Tag: "connections", Public: true,
			Summary: "Return from an upstream's authorization server",
			Description: "The browser lands here after consenting at the upstream's authorization server (docs/UPSTREAM-AUTH.md). " +
				"No token needed: the state binds the request; a bearer token is checked when present. Served only when upstream " +
				"authorization is configured. Answers an HTML page whose h1 carries data-status (authorized, authorization_required or failed).",
			Query: oauthCallbackQuery{},
			Responses: []restdoc.Response{
				{Status: 200, Description: "Authorized: the connection's tools are listed.", ContentType: "text/html", Schema: page},
				{Status: 400, Description: "Not authorized: unknown, used or expired state, another user's or workspace's authorization, or the authorization server refused.", ContentType: "text/html", Schema: page},
				{Status: 401, Description: "A bearer token was sent and is not valid.", ContentType: "text/html", Schema: page},
			}},
	)
	return ops
}

// BuildOpenAPI builds the document from OpenAPIOps followed by more (the pins function's
// operations: cmd/genopenapi passes them), as indented JSON, as committed in openapi.json.
// Errors: restdoc.Builder.Build's.
func BuildOpenAPI(more ...restdoc.Op) ([]byte, error) {
	doc, err := docBuilder.Build(append(OpenAPIOps(), more...))
	if err != nil {
		return nil, err
	}
	return restdoc.JSON(doc)
}
