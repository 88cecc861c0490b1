package api

import (
	"encoding/json"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/grants"
	"github.com/agentpack/gateway/shared/identity"
	"github.com/agentpack/gateway/shared/overrides"
	"github.com/agentpack/gateway/shared/ratelimit"
)

// The request bodies, query parameters and answer envelopes of the routes that have no
// type of their own in a service package. The OpenAPI document is generated from them
// (routes.go, shared/restdoc); the handlers decode and answer exactly these types. The
// members of each answer are declared in the order of their JSON names, as a map would
// write them.

// ---- answers ----

type connectedClientList struct {
	Items []grants.View `json:"items"`
}

type mcpTokenList struct {
	Items []grants.TokenView `json:"items"`
}

type catalogPage struct {
	Entries    []catalog.EntryView `json:"entries"`
	NextOffset int                 `json:"nextOffset,omitempty" doc:"Present when limit was given and more entries follow."`
	Total      int                 `json:"total" doc:"How many entries match the filters in all."`
}

type categoryList struct {
	Categories []db.Category `json:"categories"`
}

type connectionList struct {
	Connections []connections.View `json:"connections"`
}

type statusList struct {
	Statuses []connections.Status `json:"statuses"`
}

type authorizationList struct {
	Authorizations []connections.MyAuthorization `json:"authorizations"`
}

type toolList struct {
	SchemaNotes []db.ToolSchemaNote `json:"schemaNotes" nullable:"true" doc:"What the last successful listing did to tool input schemas: a missing, {}, $schema-only or nullable-object schema is normalised to {\"type\":\"object\"} and the tool served (action normalized); a schema that cannot describe an object drops that tool only (action dropped). Empty when every schema was used as sent."`
	Tools       []db.ConnectionTool `json:"tools"`
}

type skillList struct {
	Skills []connections.Skill `json:"skills"`
}

type eventPage struct {
	Events     []db.Event `json:"events"`
	HasMore    bool       `json:"hasMore"`
	NextBefore int64      `json:"nextBefore,omitempty" doc:"Present when more events follow: pass it as before to read the next page."`
}

type consentAnswer struct {
	AuthorizationURL string `json:"authorizationUrl" format:"uri"`
	ConnectionID     string `json:"connectionId" format:"uuid"`
}

type oauthSettingsAnswer struct {
	Effective *connections.OAuthSettings `json:"effective" doc:"The catalog entry's settings with the connection's over them, field by field."`
	OAuth     *connections.OAuthSettings `json:"oauth" doc:"The connection's own settings."`
}

type rateLimitList struct {
	Limits []ratelimit.View `json:"limits"`
}

type overrideList struct {
	Overrides []overrides.View `json:"overrides"`
}

type memberList struct {
	Members []identity.Member `json:"members"`
}

type policyValidity struct {
	PolicyIDs []string `json:"policyIds"`
	Valid     bool     `json:"valid"`
}

type usageAnswer struct {
	AsOf   time.Time     `json:"asOf"`
	By     string        `json:"by" enum:"tool,connection,principal,chat"`
	Rows   []db.UsageRow `json:"rows"`
	Since  time.Time     `json:"since"`
	Window string        `json:"window" enum:"24h,7d"`
}

// ---- request bodies ----

type authorizeInput struct {
	ReturnTo string `json:"returnTo,omitempty" format:"uri" doc:"Where the browser goes after the callback (same origin as the console)."`
}

type consentInput struct {
	Link string `json:"link" maxLength:"256" doc:"The id at the end of the authorization link."`
}

type registryImportInput struct {
	URL       string          `json:"url" optional:"true" format:"uri" doc:"The registry's base URL (GET /v0.1/servers is followed through its cursors)."`
	Documents json.RawMessage `json:"documents" optional:"true" doc:"The file's content as JSON: a list answer, an array of its items or of server.json documents."`
	Name      string          `json:"name" optional:"true" maxLength:"200" doc:"Names the documents' source (file:NAME); default file:upload."`
}

type tierInput struct {
	VerificationTier string `json:"verificationTier" enum:"official,verified_community,unverified"`
}

// ---- query parameters ----

// workspaceQuery is ?workspaceId= where it may be left out for a token of one workspace.
type workspaceQuery struct {
	WorkspaceID string `json:"workspaceId" format:"uuid" doc:"Workspace id; may be left out when the token names exactly one workspace."`
}

// onlyWorkspaceQuery is ?workspaceId= as a filter.
type onlyWorkspaceQuery struct {
	WorkspaceID string `json:"workspaceId" format:"uuid" doc:"Only this workspace (404 if not the caller's)."`
}

type overrideQuery struct {
	WorkspaceID string `json:"workspaceId" format:"uuid" doc:"Workspace id; may be left out when the token names exactly one workspace, or for a workspace's own connection."`
}

type connectedClientQuery struct {
	WorkspaceID string `json:"workspaceId" format:"uuid" doc:"An admin lists every connected client of this workspace; without it, the caller's own."`
}

type catalogQuery struct {
	Search      string `json:"search" doc:"Case-insensitive substring of name, description or author."`
	Category    string `json:"category" doc:"Category, matched case-insensitively (see /api/mcp-marketplace/categories)."`
	WorkspaceID string `json:"workspaceId" format:"uuid" doc:"Add installed/connectionId for this workspace (404 if not the caller's)."`
	Limit       int    `json:"limit" minimum:"1" maximum:"200" doc:"Page size, 1 to 200; without it every entry comes back."`
	Offset      int    `json:"offset" minimum:"0" doc:"Entries to skip (nextOffset of the previous page)."`
	Source      string `json:"source" enum:"curated,admin,registry" doc:"Only entries of this source."`
}

type eventQuery struct {
	WorkspaceID string `json:"workspaceId" format:"uuid" doc:"Workspace id; may be left out when the token names exactly one workspace."`
	EntityType  string `json:"entityType" enum:"chat,mcp_catalog_entry,mcp_connection,rate_limit,tool_override" doc:"One of the entity types the event log records; any other value is refused (400)."`
	Action      string `json:"action" maxLength:"100" doc:"Only events of this action."`
	Before      int64  `json:"before" minimum:"1" doc:"Only events with a smaller id (nextBefore of the previous page)."`
	Limit       int    `json:"limit" minimum:"1" maximum:"200" doc:"Page size, 1 to 200 (default 50)."`
}

type usageQuery struct {
	WorkspaceID string `json:"workspaceId" format:"uuid" doc:"Workspace id; may be left out when the token names exactly one workspace."`
	By          string `json:"by" enum:"tool,connection,principal,chat" doc:"The grouping (default tool): by connection, the key is the connection id or \"builtin\"; by chat, the chat id (X-Chat-Id / ?chat= of the audited call's request) or \"none\"."`
	Window      string `json:"window" enum:"24h,7d" doc:"The window (default 24h)."`
	Format      string `json:"format" enum:"json,csv" doc:"json (default) or csv."`
}

type oauthCallbackQuery struct {
	State string `json:"state" doc:"The state the authorization started with."`
	Code  string `json:"code" doc:"The authorization code."`
	Error string `json:"error" doc:"The authorization server's error, when it refused."`
}
