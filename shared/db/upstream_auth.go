package db

import (
	"context"
	"time"
)

// Upstream authorization rows (migrations/00007_upstream_auth.sql). The *Sealed fields are
// opaque sealed bytes (package upstreamauth seals and opens them); this package never sees
// a token in clear.

// OAuthGrant is one stored grant: the sealed grant plus the clear columns status shows.
type OAuthGrant struct {
	ConnectionID string     `db:"connection_id"`
	Subject      string     `db:"subject"`
	GrantSealed  []byte     `db:"grant_sealed"`
	NeedsReauth  bool       `db:"needs_reauth"`
	Reason       *string    `db:"reason"`
	ExpiresAt    *time.Time `db:"expires_at"`
	Scopes       []string   `db:"scopes"`
	AuthorizedBy string     `db:"authorized_by"`
	AuthorizedAt time.Time  `db:"authorized_at"`
	UpdatedAt    time.Time  `db:"updated_at"`
}

const oauthGrantCols = `connection_id, subject, grant_sealed, needs_reauth, reason, expires_at, scopes,
	authorized_by, authorized_at, updated_at`

// OAuthGrantGet returns the grant of connectionID and subject, or NOT_FOUND (also for a
// malformed id).
func OAuthGrantGet(ctx context.Context, q Querier, connectionID, subject string) (*OAuthGrant, error) {
	if !IsUUID(connectionID) {
		return nil, notFound()
	}
	return one[OAuthGrant](ctx, q, `SELECT `+oauthGrantCols+` FROM mcp_oauth_grants
		WHERE connection_id = $1 AND subject = $2`, connectionID, subject)
}

// OAuthGrantUpsert stores g (ConnectionID, Subject) replacing any grant there; an unknown
// connection is INVALID_REFERENCE.
func OAuthGrantUpsert(ctx context.Context, q Querier, g *OAuthGrant) error {
	if !IsUUID(g.ConnectionID) {
		return notFound()
	}
	scopes := g.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	_, err := q.Exec(ctx, `INSERT INTO mcp_oauth_grants
		(connection_id, subject, grant_sealed, needs_reauth, reason, expires_at, scopes, authorized_by, authorized_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (connection_id, subject) DO UPDATE SET grant_sealed = EXCLUDED.grant_sealed,
			needs_reauth = EXCLUDED.needs_reauth, reason = EXCLUDED.reason, expires_at = EXCLUDED.expires_at,
			scopes = EXCLUDED.scopes, authorized_by = EXCLUDED.authorized_by,
			authorized_at = EXCLUDED.authorized_at, updated_at = now()`,
		g.ConnectionID, g.Subject, g.GrantSealed, g.NeedsReauth, g.Reason, g.ExpiresAt, scopes, g.AuthorizedBy, g.AuthorizedAt)
	return Interpret(err)
}

// OAuthGrantDeleteConnection deletes every grant of connectionID and returns them (for
// revocation).
func OAuthGrantDeleteConnection(ctx context.Context, q Querier, connectionID string) ([]OAuthGrant, error) {
	if !IsUUID(connectionID) {
		return nil, nil
	}
	return collect[OAuthGrant](ctx, q, `DELETE FROM mcp_oauth_grants WHERE connection_id = $1
		RETURNING `+oauthGrantCols, connectionID)
}

// OAuthPending is one started authorization, stored under the SHA-256 of its state.
type OAuthPending struct {
	StateHash     []byte    `db:"state_hash"`
	ConnectionID  string    `db:"connection_id"`
	WorkspaceID   *string   `db:"workspace_id"`
	Subject       string    `db:"subject"`
	PendingSealed []byte    `db:"pending_sealed"`
	ExpiresAt     time.Time `db:"expires_at"`
	// LinkHash is the SHA-256 of the consent link id (nil: the flow has no consent page).
	LinkHash []byte `db:"link_hash"`
	// BindingHash is the SHA-256 of the browser binding the consent page set (nil: not yet).
	BindingHash []byte `db:"binding_hash"`
}

const oauthPendingCols = `state_hash, connection_id, workspace_id, subject, pending_sealed, expires_at, link_hash, binding_hash`

// OAuthPendingInsert stores p; an unknown connection or workspace is INVALID_REFERENCE.
func OAuthPendingInsert(ctx context.Context, q Querier, p *OAuthPending) error {
	_, err := q.Exec(ctx, `INSERT INTO mcp_oauth_pending
		(state_hash, connection_id, workspace_id, subject, pending_sealed, expires_at, link_hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		p.StateHash, p.ConnectionID, p.WorkspaceID, p.Subject, p.PendingSealed, p.ExpiresAt, p.LinkHash)
	return Interpret(err)
}

// OAuthPendingTake deletes and returns the pending authorization stored under stateHash
// (single use: a second take is NOT_FOUND), expired or not.
func OAuthPendingTake(ctx context.Context, q Querier, stateHash []byte) (*OAuthPending, error) {
	return one[OAuthPending](ctx, q, `DELETE FROM mcp_oauth_pending WHERE state_hash = $1
		RETURNING `+oauthPendingCols, stateHash)
}

// OAuthPendingSweep deletes the pending authorizations that expired before now and returns
// how many.
func OAuthPendingSweep(ctx context.Context, q Querier, now time.Time) (int64, error) {
	tag, err := q.Exec(ctx, `DELETE FROM mcp_oauth_pending WHERE expires_at < $1`, now)
	return tag.RowsAffected(), Interpret(err)
}

// OAuthClient is a catalog entry's pre-registered client; ClientSecretSealed is sealed.
type OAuthClient struct {
	CatalogEntryID     string   `db:"catalog_entry_id"`
	ClientID           string   `db:"client_id"`
	TokenEndpointAuth  string   `db:"token_endpoint_auth"`
	SigningAlg         string   `db:"signing_alg"`
	Issuer             string   `db:"issuer"`
	Scopes             []string `db:"scopes"`
	ClientSecretSealed []byte   `db:"client_secret_sealed"`
}

// OAuthClientGet returns the pre-registered client of a catalog entry, or NOT_FOUND.
func OAuthClientGet(ctx context.Context, q Querier, catalogEntryID string) (*OAuthClient, error) {
	if !IsUUID(catalogEntryID) {
		return nil, notFound()
	}
	return one[OAuthClient](ctx, q, `SELECT catalog_entry_id, client_id, token_endpoint_auth, signing_alg, issuer,
		scopes, client_secret_sealed FROM mcp_oauth_clients WHERE catalog_entry_id = $1`, catalogEntryID)
}

// OAuthClientUpsert stores c for its catalog entry, replacing any client there; an unknown
// entry is INVALID_REFERENCE, an invalid method VALIDATION_ERROR.
func OAuthClientUpsert(ctx context.Context, q Querier, c *OAuthClient) error {
	scopes := c.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	_, err := q.Exec(ctx, `INSERT INTO mcp_oauth_clients
		(catalog_entry_id, client_id, token_endpoint_auth, signing_alg, issuer, scopes, client_secret_sealed)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (catalog_entry_id) DO UPDATE SET client_id = EXCLUDED.client_id,
			token_endpoint_auth = EXCLUDED.token_endpoint_auth, signing_alg = EXCLUDED.signing_alg,
			issuer = EXCLUDED.issuer, scopes = EXCLUDED.scopes,
			client_secret_sealed = EXCLUDED.client_secret_sealed, updated_at = now()`,
		c.CatalogEntryID, c.ClientID, c.TokenEndpointAuth, c.SigningAlg, c.Issuer, scopes, c.ClientSecretSealed)
	return Interpret(err)
}

// ConnectionAuthModeSet sets the auth mode of connection id (VALIDATION_ERROR for an
// unknown mode, NOT_FOUND for no such connection).
func ConnectionAuthModeSet(ctx context.Context, q Querier, id, mode string) error {
	if !IsUUID(id) {
		return notFound()
	}
	tag, err := q.Exec(ctx, `UPDATE mcp_connections SET auth_mode = $2, updated_at = now() WHERE id = $1`, id, mode)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// CatalogEntryAuthModeGet returns the default auth mode of catalog entry id, or NOT_FOUND.
func CatalogEntryAuthModeGet(ctx context.Context, q Querier, id string) (string, error) {
	if !IsUUID(id) {
		return "", notFound()
	}
	var mode string
	err := q.QueryRow(ctx, `SELECT auth_mode FROM mcp_catalog_entries WHERE id = $1`, id).Scan(&mode)
	return mode, Interpret(err)
}

// CatalogEntryAuthModeSet sets the default auth mode of catalog entry id.
func CatalogEntryAuthModeSet(ctx context.Context, q Querier, id, mode string) error {
	if !IsUUID(id) {
		return notFound()
	}
	tag, err := q.Exec(ctx, `UPDATE mcp_catalog_entries SET auth_mode = $2, updated_at = now() WHERE id = $1`, id, mode)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}
