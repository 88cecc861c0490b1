package builtin

import (
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
)

// The answers of the catalog, connection, audit and toolset built-ins (definitions.go):
// each is the envelope's data and the source of the tool's outputSchema (Typed). Members
// are declared in the order of their JSON names, the order their answers always had.

// catalogListAnswer is agentpack_catalog_list's answer: a page of entries and how many
// match in all.
type catalogListAnswer struct {
	Entries []catalog.EntryView `json:"entries"`
	Total   int                 `json:"total"`
}

// catalogGetAnswer is agentpack_catalog_get's answer: the entry and the workspace's
// connections installed from it (null when none).
type catalogGetAnswer struct {
	Entry     catalog.EntryView     `json:"entry"`
	Installed []installedConnection `json:"installed"`
}

// installedConnection is a connection installed from a catalog entry.
type installedConnection struct {
	ConnectionID string `json:"connectionId"`
	Handle       string `json:"handle"`
	Name         string `json:"name"`
}

// connectionsAnswer is agentpack_connections_list's answer: the connections and the
// project they were listed for.
type connectionsAnswer struct {
	Connections []listedConnection `json:"connections"`
	ProjectID   string             `json:"projectId"`
}

// uninstallAnswer is agentpack_catalog_uninstall's answer.
type uninstallAnswer struct {
	EntryID     string `json:"entryId"`
	Uninstalled bool   `json:"uninstalled"`
}

// auditAnswer is agentpack_audit_list's answer: the most recent events first.
type auditAnswer struct {
	Events []db.AuditEvent `json:"events"`
}

// toolsetsAnswer is agentpack_toolsets_list's answer: the toolsets with the tools the
// caller may see, and the request's selection (null: all).
type toolsetsAnswer struct {
	Selected []string  `json:"selected"`
	Toolsets []Toolset `json:"toolsets"`
}

// listedConnection is one connection in agentpack_connections_list's answer: the
// connection's view (viewConnection) plus the exposed names of its tools in the request's
// catalog snapshot ([] when it has none there, e.g. disabled).
type listedConnection struct {
	connections.View
	Tools []string `json:"tools"`
}

// viewConnection is row r as the built-ins show it to the caller of c: connections.View
// (header values redacted) with the URL as visibleURL shows it.
func viewConnection(c *Call, r *db.Connection) connections.View {
	v := connections.NewView(r, false)
	v.URL = visibleURL(c.Principal, r.URL)
	return v
}
