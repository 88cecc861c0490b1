package gateway

import (
	"net/http"
	"slices"
	"strings"

	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
)

// maxListedHandles bounds how many handles unknownServer names.
const maxListedHandles = 25

// unknownServer is the 404 for POST /mcp/{ws}/servers/{ref} when ref names no server the
// caller can see there: the message lists the handles of the servers st's catalog holds
// for the caller (their workspace's and the global ones, narrowed by project and chat as
// every request is), sorted, at most maxListedHandles, so that a mistyped handle shows the
// right one. The JSON-RPC answer of a 4xx carries no data (apperr.RPC), hence the message.
// Nothing of another workspace can appear: the snapshot is the request's workspace's.
func unknownServer(st *requestState, ref string) *apperr.Error {
	var handles []string
	for i := range st.Snapshot.Doc.Connections {
		if c := &st.Snapshot.Doc.Connections[i]; st.Visible(c) && c.Handle != "" {
			handles = append(handles, c.Handle)
		}
	}
	slices.Sort(handles)
	handles = slices.Compact(handles)
	what := "no server " + quoted(ref) + " in this workspace"
	switch {
	case len(handles) == 0:
		return apperr.New(apperr.NotFound, "%s: it has no servers yet (install one from the marketplace)", what)
	case len(handles) > maxListedHandles:
		return apperr.New(apperr.NotFound, "%s; its servers include: %s, … (%d in all; /mcp/%s serves them together)",
			what, strings.Join(handles[:maxListedHandles], ", "), len(handles), st.Workspace)
	}
	return apperr.New(apperr.NotFound, "%s; its servers are: %s (use /mcp/%s/servers/<handle>)",
		what, strings.Join(handles, ", "), st.Workspace)
}

// quoted is s clipped and quoted for a message (a path segment the client sent).
func quoted(s string) string {
	return `"` + text.Clip(s, 64) + `"`
}

// serveNoEndpoint answers any other path under /mcp/ (a trailing slash, an extra segment):
// HTTP 404 with a JSON-RPC error (-32600) whose message names the endpoint the path was
// probably meant to be, instead of the mux's plain-text "404 page not found", which MCP
// clients cannot show. The path is not served as the endpoint it resembles: an MCP URL is
// also the OAuth protected resource's identifier (RFC 9728 §3, RFC 8707), and "/mcp/x/"
// is another resource than "/mcp/x" (RFC 3986 §6.2.3 makes only an empty path and "/"
// equal), so a client would derive metadata and a token audience that the gateway's
// endpoint does not answer to. docs/DESIGN.md "Endpoints" records the decision.
func (g *Gateway) serveNoEndpoint(w http.ResponseWriter, r *http.Request) {
	g.cors(w, r)
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	msg := "no MCP endpoint at " + text.Clip(r.URL.Path, 200)
	if trimmed := strings.TrimRight(r.URL.Path, "/"); trimmed != r.URL.Path && isEndpointPath(trimmed) {
		msg += ": remove the trailing slash (the endpoint is " + g.baseURL(r) + trimmed + ")"
	} else {
		msg += ": the endpoints are /mcp, /mcp/{workspaceId} and /mcp/{workspaceId}/servers/{handle}"
	}
	wire.WriteInvalidRequest(w, http.StatusNotFound, msg)
}

// isEndpointPath reports whether p is one of the gateway's MCP endpoint paths.
func isEndpointPath(p string) bool {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	switch {
	case len(parts) == 1:
		return parts[0] == "mcp"
	case len(parts) == 2:
		return parts[0] == "mcp" && parts[1] != ""
	case len(parts) == 4:
		return parts[0] == "mcp" && parts[1] != "" && parts[2] == "servers" && parts[3] != ""
	}
	return false
}
