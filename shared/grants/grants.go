// Package grants is the "connected clients" of the gateway's own authorization server
// (docs/AUTH.md): each grant is an authorization a person gave an MCP client in one
// workspace (one refresh-token family, migrations/00027_authorization_server.sql). The
// gateway asks Active on every call made with a token the server issued, so a revoked
// client's next call gets the 401 challenge again; people list and revoke their own
// grants, admins every grant of their workspace.
package grants

import (
	"context"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/signing"
)

// ConsoleClientID is the client_id of the admin console, the authorization server's one
// first-party client (functions/marketplace/authserver, docs/AUTH.md "The console"). Its
// grants are sign-ins of a console tab, not connected clients: Mine and InWorkspace leave
// them out (signing out of the console revokes its grant; removing the person from the
// workspace refuses its next refresh).
const ConsoleClientID = "agentpack-console"

// Service reads and revokes grants in Postgres, and makes MCP access tokens (tokens.go).
type Service struct {
	Pool *db.Pool
	// Key signs MCP access tokens (the authorization server's key, shared/deps); nil
	// refuses their creation (UNAVAILABLE).
	Key *signing.Key
	// Now is the clock of token creation (nil: time.Now); tests move it.
	Now func() time.Time
}

// View is a connected client as the REST API shows it: never a token.
type View struct {
	ID           string    `json:"id" doc:"Grant id."`
	ClientID     string    `json:"clientId" doc:"The client's client_id: a registered id, or its metadata document's URL."`
	ClientName   string    `json:"clientName" doc:"client_name from its registration or metadata document (may be empty)."`
	LogoURI      string    `json:"logoUri,omitempty" doc:"logo_uri from its registration or metadata document."`
	RedirectHost string    `json:"redirectHost" doc:"Host of the redirect URI the client was sent back to."`
	PersonID     string    `json:"personId" doc:"The person who authorized it."`
	WorkspaceID  string    `json:"workspaceId" format:"uuid"`
	Scopes       []string  `json:"scopes"`
	CreatedAt    time.Time `json:"createdAt"`
	LastUsedAt   time.Time `json:"lastUsedAt" doc:"Last token issued (code exchange or refresh)."`
	AuthorizedBy string    `json:"authorizedBy" enum:"consent,enterprise" doc:"How it was authorised: consent (the person allowed it on the consent page) or enterprise (an ID-JAG of a trusted identity provider, no consent page)."`
	// IdentityProvider is the issuer of the ID-JAG of an enterprise grant.
	IdentityProvider string `json:"identityProvider,omitempty" doc:"For an enterprise grant: the issuer of the identity provider that granted it."`
}

func viewOf(g *db.ASGrant) View {
	return View{ID: g.ID, ClientID: g.ClientID, ClientName: g.ClientName, LogoURI: g.LogoURI,
		RedirectHost: g.RedirectHost, PersonID: g.PersonID, WorkspaceID: g.WorkspaceID, Scopes: g.Scopes,
		CreatedAt: g.CreatedAt, LastUsedAt: g.LastUsedAt, AuthorizedBy: authorizedBy(g.IDPIssuer), IdentityProvider: g.IDPIssuer}
}

func authorizedBy(issuer string) string {
	if issuer != "" {
		return "enterprise"
	}
	return "consent"
}

// Active reports whether grant id exists and is not revoked (one indexed read).
func (s *Service) Active(ctx context.Context, id string) (_ bool, err error) {
	defer derrors.Wrap(&err, "grants: active %s", id)
	return db.ASGrantActive(ctx, s.Pool, id)
}

// Mine returns the active grants of the caller (their subject: the person id), newest first.
func (s *Service) Mine(ctx context.Context, p *auth.Principal) (_ []View, err error) {
	defer derrors.Wrap(&err, "grants: list mine")
	rows, err := db.ASGrantListByPerson(ctx, s.Pool, p.Subject)
	if err != nil {
		return nil, err
	}
	return views(rows), nil
}

// InWorkspace returns every active grant in workspace ws. Errors: FORBIDDEN unless the
// caller is an admin of ws (or a superuser).
func (s *Service) InWorkspace(ctx context.Context, p *auth.Principal, ws string) (_ []View, err error) {
	defer derrors.Wrap(&err, "grants: list workspace %s", ws)
	if err := requireAdminOf(p, ws); err != nil {
		return nil, err
	}
	rows, err := db.ASGrantListByWorkspace(ctx, s.Pool, ws)
	if err != nil {
		return nil, err
	}
	return views(rows), nil
}

// Revoke revokes grant id: the caller's own, or as an admin of its workspace any. The
// client's refresh tokens are refused from now on and the gateway refuses its access
// tokens at the next call; the consent is forgotten. Errors: NOT_FOUND when no such active
// grant is visible to the caller (another person's grant is not found, not forbidden).
func (s *Service) Revoke(ctx context.Context, p *auth.Principal, id string) (err error) {
	defer derrors.Wrap(&err, "grants: revoke %s", id)
	return db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		g, err := db.ASGrantGet(ctx, tx, id)
		if err != nil {
			return apperr.Wrap(err, apperr.NotFound, "no such connected client")
		}
		if g.RevokedAt != nil || (g.PersonID != p.Subject && requireAdminOf(p, g.WorkspaceID) != nil) {
			return apperr.New(apperr.NotFound, "no such connected client")
		}
		return db.ASGrantRevoke(ctx, tx, id)
	})
}

func requireAdminOf(p *auth.Principal, ws string) error {
	if !p.InWorkspace(ws) || !p.IsAdmin() {
		return apperr.New(apperr.Forbidden, "only an admin of this workspace sees its connected clients")
	}
	return nil
}

// views are rows as Views, the console's own grants left out (ConsoleClientID).
func views(rows []db.ASGrant) []View {
	out := make([]View, 0, len(rows))
	for i := range rows {
		if rows[i].ClientID == ConsoleClientID {
			continue
		}
		out = append(out, viewOf(&rows[i]))
	}
	return out
}
