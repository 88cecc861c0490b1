package authserver

import (
	"context"
	"net/http"

	"github.com/agentpack/gateway/shared/grants"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/ory/fosite"
)

// The console: the authorization server's one first-party client (docs/AUTH.md "The
// console"). It is written here, not stored in as_clients: nobody registers, edits or
// deletes it, and its grants are left out of the connected clients (shared/grants).
//
//   - client_id ConsoleClientID, a fixed string: the console is served by this origin, so
//     a metadata document of its own would be fetched from ourselves through the SSRF
//     guard (which refuses loopback on make run) to learn what this code already knows;
//   - public (PKCE S256, no secret), its only redirect URI exactly <base>/admin/;
//   - its resources are the REST API, APIResource(<base>) = <base>/api (the default), and
//     the MCP endpoint <base>/mcp, which its Playground and Client setup call; a token's
//     aud lists those the authorization request named (RFC 8707 §2), so a token for /api
//     alone is refused at /mcp. An MCP client asking for /api gets invalid_target: an MCP
//     client's token never drives the REST API;
//   - first-party: no consent page; a person in several workspaces is asked only which
//     workspace (the consent page's chooser) — the `workspace_hint` parameter of the
//     authorization request preselects one they are a member of (switching workspace is
//     signing in again with it);
//   - role: the person's role in the workspace, or auth.RoleSuperuser for a superuser
//     (identity.Service.Principal's rule), read again at every code exchange and refresh.
const ConsoleClientID = grants.ConsoleClientID

// ConsolePath is the console's path; <base>/admin/ is its redirect URI.
const ConsolePath = "/admin/"

// ConsoleRedirectURI is the console client's only redirect URI for issuer base.
func ConsoleRedirectURI(base string) string { return base + ConsolePath }

// APIResource is the REST API's resource for issuer base (httpapi.APIResource).
func APIResource(base string) string { return httpapi.APIResource(base) }

type baseKey struct{}

// withBase records the request's issuer base in ctx, for fosite's GetClient, which sees no
// request (the console's redirect URI is <base>/admin/).
func (s *Server) withBase(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), baseKey{}, s.base(r)))
}

// consoleClient is the console client for the base in ctx; invalid_client without one.
func consoleClient(ctx context.Context) (fosite.Client, error) {
	base, _ := ctx.Value(baseKey{}).(string)
	if base == "" {
		return nil, fosite.ErrInvalidClient.WithHint("The console client is known on this gateway's origin only.")
	}
	c := newClient(ConsoleClientID, []string{ConsoleRedirectURI(base)})
	c.Name = "Agentpack console"
	c.firstParty = true
	return c, nil
}

// isConsole reports whether c is the console client.
func isConsole(c fosite.Client) bool {
	cc, ok := c.(*client)
	return ok && cc.firstParty
}
