// Package catalog is the precomputed catalog of docs/DESIGN.md §6: per workspace, a
// Document listing every enabled connection visible there (global ones folded in) with
// its active tools — never header values. In the store a document is kept as one part per
// connection plus a small index naming the parts (docs/CATALOG.md), so that a change to
// one connection rewrites that connection's part and the index only (RebuildConnections).
// The marketplace and health-check functions write (Rebuild, RebuildConnections); the
// gateway reads through a Cache that revalidates the index by ETag at most every TTL,
// fetches only the parts that changed, and keeps serving the last good copy when the
// store fails.
package catalog

import (
	"encoding/json"
	"fmt"
	"time"
)

// SchemaVersion is the document format version written in Document.Version.
const SchemaVersion = 1

// Document is one workspace's precomputed catalog.
type Document struct {
	Version     int       `json:"version"`
	WorkspaceID string    `json:"workspaceId"`
	GeneratedAt time.Time `json:"generatedAt"`
	// DiscoveryThreshold is the workspace's setting: above this many visible proxied tools
	// the gateway's tools/list offers discovery instead of every tool (absent: the
	// gateway's default, 200).
	DiscoveryThreshold *int `json:"discoveryThreshold,omitempty"`
	// Policies are the Cedar access policies in force for the workspace (docs/POLICIES.md):
	// absent when neither the workspace nor the global document holds any.
	Policies *Policies `json:"policies,omitempty"`
	// RateLimits are the workspace's rate limits (docs/RATE-LIMITS.md), so that a proxied
	// call no limit applies to makes no statement; absent: none. They travel in the index
	// and are revalidated with it (ETag), so a new limit applies within CATALOG_TTL.
	RateLimits  []RateLimit  `json:"rateLimits,omitempty"`
	Connections []Connection `json:"connections"`
}

// Policies are the two Cedar policy documents a workspace's calls are decided by, as saved
// (docs/POLICIES.md): the global one a superuser writes and the workspace's own. They ship
// in the catalog index so that the gateway decides without a database round trip.
type Policies struct {
	Global    string `json:"global,omitempty"`
	Workspace string `json:"workspace,omitempty"`
}

// policiesOf returns the Policies of the two texts, nil when both are empty.
func policiesOf(workspace, global string) *Policies {
	if workspace == "" && global == "" {
		return nil
	}
	return &Policies{Global: global, Workspace: workspace}
}

// samePolicies reports whether a and b hold the same texts (nil = none).
func samePolicies(a, b *Policies) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// RateLimit is one limit of the workspace as the gateway needs it to tell whether a call
// is limited (db.RateLimit's scope and values; the counting stays in Postgres).
// ConnectionID or Tool ("" = any) narrow it; Principal nil is one bucket for the
// workspace, "*" a bucket per member, any other value that member only.
type RateLimit struct {
	ID           string  `json:"id"`
	ConnectionID string  `json:"connectionId,omitempty"`
	Tool         string  `json:"tool,omitempty"`
	Principal    *string `json:"principal,omitempty"`
	PerMinute    *int    `json:"perMinute,omitempty"`
	PerDay       *int    `json:"perDay,omitempty"`
}

// Limited reports whether any of the document's rate limits applies to a proxied call of
// exposed tool on connection conn by principal — the same rule as db.RateLimitTake's.
func (d *Document) Limited(conn, tool, principal string) bool {
	for _, l := range d.RateLimits {
		if (l.ConnectionID == "" || l.ConnectionID == conn) && (l.Tool == "" || l.Tool == tool) &&
			(l.Principal == nil || *l.Principal == "*" || *l.Principal == principal) {
			return true
		}
	}
	return false
}

// Connection is one connection as the gateway needs it: identity, scope, where it is and
// how it was last reached — no header values.
type Connection struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Handle           string `json:"handle"`
	Scope            string `json:"scope"` // global | workspace | project
	ProjectID        string `json:"projectId,omitempty"`
	Source           string `json:"source"`
	CatalogEntryID   string `json:"catalogEntryId,omitempty"`
	URL              string `json:"url"` // query values, userinfo, fragment redacted (headers.RedactURL); the gateway connects with the row's URL
	TransportType    string `json:"transportType"`
	WorkingTransport string `json:"workingTransport,omitempty"`
	ProtocolVersion  string `json:"protocolVersion,omitempty"`
	// Capabilities are the upstream's declared capabilities (absent: not known yet).
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
	UpdatedAt    time.Time       `json:"updatedAt"`
	Tools        []Tool          `json:"tools"`
	// UIResources are the MCP Apps views (ui:// resources) the upstream listed at its last
	// refresh, each its resource object as listed (absent: none listed; docs/ARCHITECTURE.md
	// "MCP Apps").
	UIResources []json.RawMessage `json:"uiResources,omitempty"`
}

// Tool is one proxied tool: the name exposed to clients and the upstream's own name.
type Tool struct {
	ExposedName  string          `json:"exposedName"`
	UpstreamName string          `json:"upstreamName"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Definition is the upstream's whole tool object as listed (absent for tools listed
	// before it was kept): the gateway serves it with only the name changed.
	Definition json.RawMessage `json:"definition,omitempty"`
}

// Decode parses and checks a document: the version must be SchemaVersion, connection ids
// and exposed tool names must be unique, and every input schema must be a JSON object.
// It never panics on hostile input.
func Decode(data []byte) (*Document, error) {
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("catalog: decode: %w", err)
	}
	if d.Version != SchemaVersion {
		return nil, fmt.Errorf("catalog: unsupported document version %d", d.Version)
	}
	if err := validate(&d); err != nil {
		return nil, err
	}
	return &d, nil
}

// validate checks what Decode promises of d's connections: unique non-empty ids, unique
// non-empty exposed tool names, object input schemas.
func validate(d *Document) error {
	conns := make(map[string]bool, len(d.Connections))
	tools := make(map[string]bool)
	for _, c := range d.Connections {
		if c.ID == "" || conns[c.ID] {
			return fmt.Errorf("catalog: missing or duplicate connection id %q", c.ID)
		}
		conns[c.ID] = true
		for _, t := range c.Tools {
			if t.ExposedName == "" || tools[t.ExposedName] {
				return fmt.Errorf("catalog: missing or duplicate tool name %q", t.ExposedName)
			}
			tools[t.ExposedName] = true
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(t.InputSchema, &obj); err != nil || obj == nil {
				return fmt.Errorf("catalog: tool %q: input schema is not an object", t.ExposedName)
			}
		}
	}
	return nil
}
