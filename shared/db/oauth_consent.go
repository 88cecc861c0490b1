package db

import (
	"context"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
)

// Consent binding, replaced consent links, client registrations and OAuth settings
// (migrations/00008_oauth_consent_binding.sql, 00023_oauth_replaced_links.sql,
// 00009_oauth_settings.sql).

// OAuthPendingByLink returns the pending authorization whose consent link hashes to
// linkHash, or NOT_FOUND (also when none, or already taken).
func OAuthPendingByLink(ctx context.Context, q Querier, linkHash []byte) (*OAuthPending, error) {
	return one[OAuthPending](ctx, q, `SELECT `+oauthPendingCols+` FROM mcp_oauth_pending WHERE link_hash = $1`, linkHash)
}

// OAuthPendingBind records bindingHash on the pending authorization of linkHash (the
// consent page's check passed); NOT_FOUND when it is gone.
func OAuthPendingBind(ctx context.Context, q Querier, linkHash, bindingHash []byte) error {
	tag, err := q.Exec(ctx, `UPDATE mcp_oauth_pending SET binding_hash = $2 WHERE link_hash = $1`, linkHash, bindingHash)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// OAuthPendingReplaceCaller deletes the pending authorizations of connectionID started by
// subject in workspace (nil: none) — a new one replaces them — and keeps the consent
// link of each in mcp_oauth_replaced_links until it would have expired
// (migrations/00023_oauth_replaced_links.sql). It returns how many links it kept.
func OAuthPendingReplaceCaller(ctx context.Context, q Querier, connectionID string, workspace *string, subject string) (int64, error) {
	if !IsUUID(connectionID) {
		return 0, nil
	}
	tag, err := q.Exec(ctx, `WITH gone AS (
		DELETE FROM mcp_oauth_pending WHERE connection_id = $1 AND subject = $2
			AND workspace_id IS NOT DISTINCT FROM $3
		RETURNING link_hash, connection_id, workspace_id, subject, expires_at)
		INSERT INTO mcp_oauth_replaced_links (link_hash, connection_id, workspace_id, subject, expires_at)
		SELECT link_hash, connection_id, workspace_id, subject, expires_at FROM gone WHERE link_hash IS NOT NULL
		ON CONFLICT (link_hash) DO NOTHING`, connectionID, subject, workspace)
	return tag.RowsAffected(), Interpret(err)
}

// OAuthReplacedLink is a consent link a newer one replaced: the flow it was for.
type OAuthReplacedLink struct {
	LinkHash     []byte    `db:"link_hash"`
	ConnectionID string    `db:"connection_id"`
	WorkspaceID  *string   `db:"workspace_id"`
	Subject      string    `db:"subject"`
	ExpiresAt    time.Time `db:"expires_at"`
	ReplacedAt   time.Time `db:"replaced_at"`
}

// OAuthReplacedLinkGet returns the replaced consent link that hashes to linkHash, or
// NOT_FOUND.
func OAuthReplacedLinkGet(ctx context.Context, q Querier, linkHash []byte) (*OAuthReplacedLink, error) {
	return one[OAuthReplacedLink](ctx, q, `SELECT link_hash, connection_id, workspace_id, subject, expires_at, replaced_at
		FROM mcp_oauth_replaced_links WHERE link_hash = $1`, linkHash)
}

// OAuthReplacedLinkSweep deletes the replaced links that expired before now and returns how
// many.
func OAuthReplacedLinkSweep(ctx context.Context, q Querier, now time.Time) (int64, error) {
	tag, err := q.Exec(ctx, `DELETE FROM mcp_oauth_replaced_links WHERE expires_at < $1`, now)
	return tag.RowsAffected(), Interpret(err)
}

// OAuthRegistration is the client the gateway registered dynamically with one
// authorization server for one connection; ClientSealed is sealed.
type OAuthRegistration struct {
	ConnectionID string    `db:"connection_id"`
	Issuer       string    `db:"issuer"`
	ClientSealed []byte    `db:"client_sealed"`
	CreatedAt    time.Time `db:"created_at"`
}

// OAuthRegistrationGet returns the registration of connectionID at issuer, or NOT_FOUND.
func OAuthRegistrationGet(ctx context.Context, q Querier, connectionID, issuer string) (*OAuthRegistration, error) {
	if !IsUUID(connectionID) {
		return nil, notFound()
	}
	return one[OAuthRegistration](ctx, q, `SELECT connection_id, issuer, client_sealed, created_at
		FROM mcp_oauth_registrations WHERE connection_id = $1 AND issuer = $2`, connectionID, issuer)
}

// OAuthRegistrationUpsert stores r, replacing a registration of the same connection and
// issuer; an unknown connection is INVALID_REFERENCE.
func OAuthRegistrationUpsert(ctx context.Context, q Querier, r *OAuthRegistration) error {
	if !IsUUID(r.ConnectionID) {
		return notFound()
	}
	_, err := q.Exec(ctx, `INSERT INTO mcp_oauth_registrations (connection_id, issuer, client_sealed)
		VALUES ($1, $2, $3) ON CONFLICT (connection_id, issuer) DO UPDATE SET client_sealed = EXCLUDED.client_sealed,
		created_at = now()`, r.ConnectionID, r.Issuer, r.ClientSealed)
	return Interpret(err)
}

// OAuthSettingsGet returns the raw OAuth settings (a JSON object) of a catalog entry
// (entry true) or a connection; nil, nil when none are set.
func OAuthSettingsGet(ctx context.Context, q Querier, id string, entry bool) ([]byte, error) {
	if !IsUUID(id) {
		return nil, nil
	}
	col := "connection_id"
	if entry {
		col = "catalog_entry_id"
	}
	var raw []byte
	err := q.QueryRow(ctx, `SELECT settings FROM mcp_oauth_settings WHERE `+col+` = $1`, id).Scan(&raw)
	if err = Interpret(err); err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return nil, nil
		}
		return nil, err
	}
	return raw, nil
}

// OAuthSettingsPut stores the OAuth settings (a JSON object) of a catalog entry (entry
// true) or a connection, replacing what was there; an unknown id is INVALID_REFERENCE.
func OAuthSettingsPut(ctx context.Context, q Querier, id string, entry bool, settings []byte) error {
	if !IsUUID(id) {
		return notFound()
	}
	col := "connection_id"
	if entry {
		col = "catalog_entry_id"
	}
	_, err := q.Exec(ctx, `INSERT INTO mcp_oauth_settings (`+col+`, settings) VALUES ($1, $2)
		ON CONFLICT (`+col+`) DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()`, id, settings)
	return Interpret(err)
}
