package db

import (
	"encoding/json"
	"time"

	"github.com/agentpack/gateway/shared/tooldrift"
)

// Workspace is a tenant (docs/DESIGN.md §3).
type Workspace struct {
	ID               string  `db:"id" json:"id"`
	Name             string  `db:"name" json:"name"`
	DefaultProjectID *string `db:"default_project_id" json:"defaultProjectId,omitempty"`
}

// Project belongs to one workspace.
type Project struct {
	ID          string `db:"id" json:"id"`
	WorkspaceID string `db:"workspace_id" json:"workspaceId"`
	Name        string `db:"name" json:"name"`
}

// Chat belongs to one workspace; pins hang off it.
type Chat struct {
	ID          string `db:"id" json:"id"`
	WorkspaceID string `db:"workspace_id" json:"workspaceId"`
	Title       string `db:"title" json:"title"`
	// CreatedAt is set by ChatList and ChatCreate (nil where a query did not read it).
	CreatedAt *time.Time `db:"created_at" json:"createdAt,omitempty"`
}

// CatalogEntry is a curated catalog entry (mcp_catalog_entries). Headers hold default
// header templates (names → template values); they are returned redacted by the APIs.
type CatalogEntry struct {
	ID                  string            `db:"id" json:"id"`
	Name                string            `db:"name" json:"name"`
	URL                 string            `db:"url" json:"url"`
	TransportType       string            `db:"transport_type" json:"transportType"`
	Headers             map[string]string `db:"headers" json:"headers"`
	Description         string            `db:"description" json:"description"`
	Category            string            `db:"category" json:"category"`
	Version             string            `db:"version" json:"version"`
	Author              string            `db:"author" json:"author"`
	VerificationTier    string            `db:"verification_tier" json:"verificationTier"`
	HealthStatus        *string           `db:"health_status" json:"healthStatus"`
	LastHealthCheck     *time.Time        `db:"last_health_check" json:"lastHealthCheck"`
	LastHealthError     *string           `db:"last_health_error" json:"lastHealthError"`
	LastCommitDate      *time.Time        `db:"last_commit_date" json:"lastCommitDate"`
	ConsecutiveFailures int               `db:"consecutive_failures" json:"consecutiveFailures"`
	InstallCount        int               `db:"install_count" json:"installCount"`
	IsPlaceholder       bool              `db:"is_placeholder" json:"isPlaceholder"`
	CreatedAt           time.Time         `db:"created_at" json:"createdAt"`
	UpdatedAt           time.Time         `db:"updated_at" json:"updatedAt"`
	// Source is where the entry comes from: "curated" (shared/seed), "admin" (REST) or
	// "registry" (an MCP registry import, docs/REGISTRY.md), with the registry's base URL,
	// the server's name there, which of its remotes this is (0-based), its status
	// (active, deprecated, deleted) and when that version was published.
	Source              string     `db:"source" json:"source"`
	RegistryURL         *string    `db:"registry_url" json:"registryUrl"`
	RegistryName        *string    `db:"registry_name" json:"registryName"`
	RegistryRemote      *int       `db:"registry_remote" json:"registryRemote"`
	RegistryStatus      *string    `db:"registry_status" json:"registryStatus"`
	RegistryPublishedAt *time.Time `db:"registry_published_at" json:"registryPublishedAt"`
	// URLVariables are the {name} templates of URL, filled in at install time.
	URLVariables []URLVariable `db:"url_variables" json:"urlVariables"`
	// DeclaredHeaders are the headers the server declares (a registry remote's headers).
	DeclaredHeaders []DeclaredHeader `db:"declared_headers" json:"declaredHeaders"`
}

// URLVariable is one {name} template of a catalog entry's URL (server.json 2025-12-11
// remotes[].variables): an install must give a value unless it has a default.
type URLVariable struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	IsRequired  bool     `json:"isRequired"`
	Default     string   `json:"default,omitempty"`
	Choices     []string `json:"choices,omitempty"`
}

// DeclaredHeader is one header a catalog entry's server declares (server.json
// remotes[].headers): IsSecret values are credentials.
type DeclaredHeader struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	IsSecret    bool   `json:"isSecret"`
	IsRequired  bool   `json:"isRequired"`
}

// Connection is an upstream MCP server connection (mcp_connections). Headers may hold
// secrets (docs/DESIGN.md §9): never return or log them unredacted.
type Connection struct {
	ID               string  `db:"id" json:"id"`
	Name             string  `db:"name" json:"name"`
	Handle           string  `db:"handle" json:"handle"`
	URL              string  `db:"url" json:"url"`
	TransportType    string  `db:"transport_type" json:"transportType"`
	WorkingTransport *string `db:"working_transport" json:"workingTransport"`
	ProtocolVersion  *string `db:"protocol_version" json:"protocolVersion"`
	// Capabilities are the upstream's declared capabilities at its last connect (nil:
	// not known yet).
	Capabilities    json.RawMessage   `db:"capabilities" json:"capabilities,omitempty"`
	Headers         map[string]string `db:"headers" json:"-"`
	Enabled         bool              `db:"enabled" json:"enabled"`
	Source          string            `db:"source" json:"source"`
	CatalogEntryID  *string           `db:"catalog_entry_id" json:"catalogEntryId"`
	WorkspaceID     *string           `db:"workspace_id" json:"workspaceId"`
	ProjectID       *string           `db:"project_id" json:"projectId"`
	LastConnectedAt *time.Time        `db:"last_connected_at" json:"lastConnectedAt"`
	LastError       *string           `db:"last_error" json:"lastError"`
	CreatedBy       string            `db:"created_by" json:"createdBy"`
	CreatedAt       time.Time         `db:"created_at" json:"createdAt"`
	UpdatedAt       time.Time         `db:"updated_at" json:"updatedAt"`
	// AuthMode is how the connection authorizes upstream: none, headers, oauth,
	// oauth_per_user or client_credentials (docs/UPSTREAM-AUTH.md).
	AuthMode string `db:"auth_mode" json:"authMode"`
}

// Scope is "global", "workspace" or "project" (docs/DESIGN.md §3).
func (c *Connection) Scope() string {
	switch {
	case c.WorkspaceID == nil:
		return "global"
	case c.ProjectID == nil:
		return "workspace"
	default:
		return "project"
	}
}

// ConnectionTool is one upstream tool as last listed (mcp_connection_tools).
type ConnectionTool struct {
	ConnectionID string          `db:"connection_id" json:"connectionId" format:"uuid"`
	UpstreamName string          `db:"upstream_name" json:"upstreamName"`
	ExposedName  string          `db:"exposed_name" json:"exposedName" pattern:"^[A-Za-z0-9_-]{1,64}$"`
	Title        string          `db:"title" json:"title,omitempty"`
	Description  string          `db:"description" json:"description"`
	InputSchema  json.RawMessage `db:"input_schema" json:"inputSchema"`
	OutputSchema json.RawMessage `db:"output_schema" json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `db:"annotations" json:"annotations,omitempty"`
	// Definition is the upstream's whole tool object as listed, byte for byte (nil for rows
	// listed before it was kept).
	Definition       json.RawMessage `db:"definition" json:"definition,omitempty"`
	DefinitionDigest string          `db:"definition_digest" json:"definitionDigest"`
	ApprovedDigest   string          `db:"approved_digest" json:"approvedDigest"`
	Status           string          `db:"status" json:"status" enum:"active,drifted,pending"`
	FirstListedAt    time.Time       `db:"first_listed_at" json:"firstListedAt"`
	ListedAt         time.Time       `db:"listed_at" json:"listedAt"`
}

// Tool statuses (docs/DESIGN.md §6 drift).
const (
	ToolActive  = tooldrift.Active
	ToolDrifted = tooldrift.Drifted
	ToolPending = tooldrift.Pending
)

// AuditEvent is one gateway tool call row (audit_events).
type AuditEvent struct {
	ID           int64     `db:"id" json:"id"`
	OccurredAt   time.Time `db:"occurred_at" json:"occurredAt"`
	RequestID    string    `db:"request_id" json:"requestId"`
	Principal    string    `db:"principal" json:"principal"`
	WorkspaceID  *string   `db:"workspace_id" json:"workspaceId"`
	Tool         string    `db:"tool" json:"tool"`
	Version      string    `db:"version" json:"version"`
	Kind         string    `db:"kind" json:"kind"`
	ConnectionID *string   `db:"connection_id" json:"connectionId"`
	DurationMS   float64   `db:"duration_ms" json:"durationMs"`
	ArgsDigest   string    `db:"args_digest" json:"argsDigest"`
	// ChatID is the chat the gateway accepted for the call's request (X-Chat-Id / ?chat=:
	// a chat of the workspace); nil when the request named none.
	ChatID *string `db:"chat_id" json:"chatId"`
	// Outcome is how the call ended (migrations/00046_audit_outcome.sql): "ok",
	// "tool_error" (the upstream's result had isError: true), "rpc_error" (the upstream's
	// JSON-RPC error), "timeout", "unavailable" or "upstream_error" (the gateway's
	// UPSTREAM_TIMEOUT, UPSTREAM_UNAVAILABLE or UPSTREAM_ERROR envelope), "denied" (an access
	// policy refused it). Read back for rows written before 00046 as "denied" for kind
	// "denied", else "ok"; written as "ok" when empty (as "denied" for kind "denied").
	Outcome string `db:"outcome" json:"outcome"`
	// RowKey is the writer's key of the row (a UUID; AuditEventInsert skips a key already
	// written). Not read back.
	RowKey string `db:"-" json:"-"`
}

// EventEntityTypes are the entity types the event log records (Event.EntityType), sorted:
// what GET /api/events accepts as entityType (any other value is a 400, not an empty list).
var EventEntityTypes = []string{"chat", "mcp_catalog_entry", "mcp_connection", EventEntityOAuthGrant, "rate_limit", "tool_override"}

// EventEntityOAuthGrant is the entity type of a grant the authorization server made
// without a consent page (an ID-JAG's, docs/AUTH.md "The enterprise path"): the entity id
// is the grant id (a connected client), the payload its grant type, issuer, jti and client.
const EventEntityOAuthGrant = "oauth_grant"

// Event is one marketplace mutation (event_log).
type Event struct {
	ID          int64          `db:"id" json:"id" doc:"Increasing event id; pass the last one as before to page."`
	OccurredAt  time.Time      `db:"occurred_at" json:"occurredAt"`
	EntityType  string         `db:"entity_type" json:"entityType" doc:"e.g. mcp_connection, mcp_catalog_entry, chat"`
	EntityID    string         `db:"entity_id" json:"entityId"`
	Action      string         `db:"action" json:"action" doc:"e.g. mcp.installed, mcp.pinned, chat.created"`
	Actor       string         `db:"actor" json:"actor" doc:"The token subject that acted."`
	WorkspaceID *string        `db:"workspace_id" json:"workspaceId" format:"uuid"`
	Payload     map[string]any `db:"payload" json:"payload" doc:"Event details, redacted when written (no header values)."`
}
