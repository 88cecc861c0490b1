package web

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/text"
)

// BearerChallenge is the WWW-Authenticate value of a 401 (RFC 6750 §3, RFC 9728 §5.1): a
// token that was presented and refused (auth.ErrInvalidToken in err) adds
// error="invalid_token" and error_description=msg (Verify's message: expired at when, or
// what is wrong); a missing token gets no error code (RFC 6750 §3.1).
func BearerChallenge(err error, msg, metadataURL string) string {
	v := `Bearer resource_metadata="` + metadataURL + `"`
	if errors.Is(err, auth.ErrInvalidToken) {
		// RFC 6750 §3: error_description is printable ASCII without '"' and '\'.
		desc := strings.Map(func(r rune) rune {
			if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
				return -1
			}
			return r
		}, msg)
		v += `, error="invalid_token", error_description="` + desc + `"`
	}
	return v
}

// NoAccess is the 403 for a token without access to workspace ws: it names the workspaces
// the token does carry and the endpoint URL to use (base + /mcp/<id>), so that a client
// configured with the wrong id sees the right one (in the message: the JSON-RPC answer
// carries no hint). ws is echoed only when it is a UUID.
func NoAccess(p *auth.Principal, ws, base string) *apperr.Error {
	which := "this workspace"
	if db.IsUUID(ws) {
		which = "workspace " + ws
	}
	switch len(p.Workspaces) {
	case 0:
		return apperr.New(apperr.Forbidden, "no access to %s: this token carries no workspace (ask an admin for a token of the workspace)", which)
	case 1:
		return apperr.New(apperr.Forbidden, "no access to %s: this token is for workspace %s; use %s/mcp/%s", which, p.Workspaces[0], base, p.Workspaces[0])
	}
	list := p.Workspaces
	if len(list) > 10 {
		list = list[:10]
	}
	return apperr.New(apperr.Forbidden, "no access to %s: this token is for workspaces %s; use %s/mcp/<one of them>", which, strings.Join(list, ", "), base)
}

// maxListedHandles bounds how many handles UnknownServer names.
const maxListedHandles = 25

// UnknownServer is the 404 for POST /mcp/{ws}/servers/{ref} when ref names no server the
// caller can see there: the message lists the handles of the servers st's catalog holds
// for the caller (their workspace's and the global ones, narrowed by project and chat as
// every request is), sorted, at most maxListedHandles, so that a mistyped handle shows the
// right one. The JSON-RPC answer of a 4xx carries no data (apperr.RPC), hence the message.
// Nothing of another workspace can appear: the snapshot is the request's workspace's.
func UnknownServer(st *request.State, ref string) *apperr.Error {
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

// ServeNoEndpoint answers any other path under /mcp/ (a trailing slash, an extra segment):
// HTTP 404 with a JSON-RPC error (-32600) whose message names the endpoint the path was
// probably meant to be, instead of the mux's plain-text "404 page not found", which MCP
// clients cannot show. The path is not served as the endpoint it resembles: an MCP URL is
// also the OAuth protected resource's identifier (RFC 9728 §3, RFC 8707), and "/mcp/x/"
// is another resource than "/mcp/x" (RFC 3986 §6.2.3 makes only an empty path and "/"
// equal), so a client would derive metadata and a token audience that the gateway's
// endpoint does not answer to. docs/DESIGN.md "Endpoints" records the decision.
func (s *Site) ServeNoEndpoint(w http.ResponseWriter, r *http.Request) {
	CORS(w, r)
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	msg := "no MCP endpoint at " + text.Clip(r.URL.Path, 200)
	if trimmed := strings.TrimRight(r.URL.Path, "/"); trimmed != r.URL.Path && isEndpointPath(trimmed) {
		msg += ": remove the trailing slash (the endpoint is " + s.BaseURL(r) + trimmed + ")"
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
