package connections

import (
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/headers"
)

// View is a connection as the APIs return it (openapi.json
// #/components/schemas/Connection): header values redacted, the scope spelled out
// (global, workspace or project; docs/DESIGN.md §3), times RFC 3339, absent values null.
// The URL is whole or redacted as NewView was told; an audience with its own URL rule
// (the gateway's built-in tools) sets URL after construction. The REST connection
// routes and the gateway's built-in tools (agentpack_connections_list, the answers of
// agentpack_catalog_install and agentpack_connection_toggle) show this view.
type View struct {
	ID               string            `json:"id" format:"uuid"`
	Name             string            `json:"name"`
	Handle           string            `json:"handle" pattern:"^[a-z0-9]{1,16}$" doc:"The short name used in exposed tool names mcp_<handle>_<tool>."`
	URL              string            `json:"url" doc:"The upstream MCP endpoint. Shown whole only by the connection detail (GET /api/mcp-connections/{id}) and the answers to writes; the list shows query values, userinfo and fragment as \"[REDACTED]\" (some servers take an API key in the query), and so do logs, errors, events and the MCP built-ins."`
	TransportType    string            `json:"transportType" enum:"streamable-http,sse"`
	WorkingTransport *string           `json:"workingTransport" enum:"streamable-http,sse" doc:"The transport that last worked; later connects go straight to it."`
	Headers          map[string]string `json:"headers"`
	Enabled          bool              `json:"enabled"`
	Source           string            `json:"source" enum:"manual,marketplace"`
	CatalogEntryID   *string           `json:"catalogEntryId" format:"uuid"`
	WorkspaceID      *string           `json:"workspaceId" format:"uuid"`
	ProjectID        *string           `json:"projectId" format:"uuid"`
	Scope            string            `json:"scope" enum:"global,workspace,project"`
	LastConnectedAt  *time.Time        `json:"lastConnectedAt"`
	LastError        *string           `json:"lastError"`
	CreatedBy        string            `json:"createdBy"`
	CreatedAt        time.Time         `json:"createdAt"`
	UpdatedAt        time.Time         `json:"updatedAt"`
	AuthMode         string            `json:"authMode" enum:"none,headers,oauth,oauth_per_user,client_credentials"`
}

// NewView is the view of row c: fullURL false redacts the URL's query values, userinfo
// and fragment (headers.RedactURL; a query may hold the upstream's API key), true shows
// it whole (the REST detail and a write's answer, to the admin who may have sent it).
// Header values are always redacted (headers.Redact), and absent headers are {}.
func NewView(c *db.Connection, fullURL bool) View {
	u := c.URL
	if !fullURL {
		u = headers.RedactURL(u)
	}
	h := headers.Redact(c.Headers)
	return View{ID: c.ID, Name: c.Name, Handle: c.Handle, URL: u, TransportType: c.TransportType,
		WorkingTransport: c.WorkingTransport, Headers: h, Enabled: c.Enabled, Source: c.Source,
		CatalogEntryID: c.CatalogEntryID, WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID, Scope: c.Scope(),
		LastConnectedAt: c.LastConnectedAt, LastError: c.LastError, CreatedBy: c.CreatedBy,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, AuthMode: c.AuthMode}
}

// DetailView is one connection as GET /api/mcp-connections/{id} returns it: View plus,
// for OAuth connections, the state of the upstream authorization the caller's calls use
// (Service.AuthorizationOf; omitted when nil).
type DetailView struct {
	View
	Authorization *AuthorizationState `json:"authorization,omitempty"`
}

// OutcomeView is a write's Outcome as the APIs return it (openapi.json
// #/components/schemas/ConnectionWithConnect): the written connection's View with, each
// omitted when absent, the first connect's result, catalogPending (only when true: the
// change was committed but the gateway's catalog document could not be rewritten yet),
// the consent an OAuth connection needs, and the write's warnings.
type OutcomeView struct {
	View
	Connect        *RefreshResult `json:"connect,omitempty"`
	CatalogPending bool           `json:"catalogPending,omitempty" doc:"Present and true when the change was committed but the gateway's catalog document could not be rewritten yet; it converges on the next rebuild (at the latest the health check's reconcile pass)."`
	Authorization  *Authorization `json:"authorization,omitempty" doc:"For oauth and oauth_per_user installs: the consent to complete (no tools are listed until it is done)."`
	Warnings       []string       `json:"warnings,omitempty" doc:"Notes on a write that succeeded, e.g. an install without a header its catalog entry declares."`
}

// NewOutcomeView is the view of out, whose Connection must be set (every Service write
// sets it); fullURL is NewView's.
func NewOutcomeView(out *Outcome, fullURL bool) OutcomeView {
	return OutcomeView{View: NewView(out.Connection, fullURL), Connect: out.Connect,
		CatalogPending: out.CatalogPending, Authorization: out.Authorization, Warnings: out.Warnings}
}
