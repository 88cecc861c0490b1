package builtin

import (
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
)

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
