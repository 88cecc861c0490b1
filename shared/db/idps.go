package db

import (
	"context"
	"time"
)

// Trusted identity providers and the ID-JAGs they issued
// (migrations/00049_trusted_identity_providers.sql, docs/AUTH.md "The enterprise path").

// TrustedIDP is a row of trusted_idps: an identity provider whose ID-JAGs the gateway's
// authorization server accepts.
type TrustedIDP struct {
	Issuer           string    `db:"issuer" json:"issuer" doc:"The ID-JAG's iss, compared exactly (e.g. https://acme.okta.com)."`
	JWKSURL          string    `db:"jwks_url" json:"jwksUrl" doc:"Where the identity provider publishes its signing keys (RFC 7517); https."`
	AllowedClientIDs []string  `db:"allowed_client_ids" json:"allowedClientIds" doc:"The client ids (this server's) its ID-JAGs may name; empty = any client this server knows."`
	LinkByEmail      bool      `db:"link_by_email" json:"linkByEmail" doc:"An ID-JAG whose (iss, sub) is unknown is matched to the person with its email, verified at sign-in. Only for an identity provider that owns its users' email domains."`
	Enabled          bool      `db:"enabled" json:"enabled" doc:"A disabled identity provider's ID-JAGs are refused (invalid_grant)."`
	CreatedAt        time.Time `db:"created_at" json:"createdAt"`
	UpdatedAt        time.Time `db:"updated_at" json:"updatedAt"`
}

const trustedIDPCols = `issuer, jwks_url, allowed_client_ids, link_by_email, enabled, created_at, updated_at`

// TrustedIDPGet returns the identity provider of issuer, or NOT_FOUND.
func TrustedIDPGet(ctx context.Context, q Querier, issuer string) (*TrustedIDP, error) {
	return one[TrustedIDP](ctx, q, `SELECT `+trustedIDPCols+` FROM trusted_idps WHERE issuer = $1`, issuer)
}

// TrustedIDPList returns every trusted identity provider, ordered by issuer.
func TrustedIDPList(ctx context.Context, q Querier) ([]TrustedIDP, error) {
	return collect[TrustedIDP](ctx, q, `SELECT `+trustedIDPCols+` FROM trusted_idps ORDER BY issuer`)
}

// TrustedIDPPut creates or replaces the identity provider of p.Issuer and returns the row.
// A value over its column's bound is VALIDATION_ERROR.
func TrustedIDPPut(ctx context.Context, q Querier, p *TrustedIDP) (*TrustedIDP, error) {
	ids := p.AllowedClientIDs
	if ids == nil {
		ids = []string{}
	}
	return one[TrustedIDP](ctx, q, `INSERT INTO trusted_idps (issuer, jwks_url, allowed_client_ids, link_by_email, enabled)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (issuer) DO UPDATE SET jwks_url = EXCLUDED.jwks_url,
			allowed_client_ids = EXCLUDED.allowed_client_ids, link_by_email = EXCLUDED.link_by_email,
			enabled = EXCLUDED.enabled, updated_at = now()
		RETURNING `+trustedIDPCols, p.Issuer, p.JWKSURL, ids, p.LinkByEmail, p.Enabled)
}

// TrustedIDPInsertIfAbsent inserts p unless a provider of p.Issuer exists, and reports
// whether it did.
func TrustedIDPInsertIfAbsent(ctx context.Context, q Querier, p *TrustedIDP) (bool, error) {
	ids := p.AllowedClientIDs
	if ids == nil {
		ids = []string{}
	}
	tag, err := q.Exec(ctx, `INSERT INTO trusted_idps (issuer, jwks_url, allowed_client_ids, link_by_email, enabled)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (issuer) DO NOTHING`, p.Issuer, p.JWKSURL, ids, p.LinkByEmail, p.Enabled)
	if err != nil {
		return false, Interpret(err)
	}
	return tag.RowsAffected() == 1, nil
}

// TrustedIDPDelete deletes the identity provider of issuer, or NOT_FOUND.
func TrustedIDPDelete(ctx context.Context, q Querier, issuer string) error {
	tag, err := q.Exec(ctx, `DELETE FROM trusted_idps WHERE issuer = $1`, issuer)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// PersonByIdentity returns the person (issuer, subject), or NOT_FOUND.
func PersonByIdentity(ctx context.Context, q Querier, issuer, subject string) (*Person, error) {
	return one[Person](ctx, q, `SELECT `+personCols+` FROM people WHERE issuer = $1 AND subject = $2`, issuer, subject)
}

// IDJAGUse records the ID-JAG (issuer, jti) as used until expires: CONFLICT when it was
// used before (a replay). Rows of issuer past their expiry are deleted first, so the table
// holds the live assertions only.
func IDJAGUse(ctx context.Context, q Querier, issuer, jti string, expires time.Time) error {
	if _, err := q.Exec(ctx, `DELETE FROM idjag_jtis WHERE expires_at < now() - interval '5 minutes'`); err != nil {
		return Interpret(err)
	}
	_, err := q.Exec(ctx, `INSERT INTO idjag_jtis (issuer, jti, expires_at) VALUES ($1, $2, $3)`, issuer, jti, expires)
	return Interpret(err)
}

// IDJAGUsed reports whether the ID-JAG (issuer, jti) was used before.
func IDJAGUsed(ctx context.Context, q Querier, issuer, jti string) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM idjag_jtis WHERE issuer = $1 AND jti = $2)`, issuer, jti).Scan(&ok)
	return ok, Interpret(err)
}

// ASGrantMarkEnterprise records that grant id was made by an ID-JAG of issuer.
func ASGrantMarkEnterprise(ctx context.Context, q Querier, id, issuer string) error {
	_, err := q.Exec(ctx, `UPDATE as_grants SET idp_issuer = $2 WHERE id = $1`, id, issuer)
	return Interpret(err)
}

// ASGrantFindEnterprise returns the id of the live grant an ID-JAG of issuer made for
// (client, person, workspace), or NOT_FOUND: a later ID-JAG for the same triple continues
// that grant (one connected client, not one per access token).
func ASGrantFindEnterprise(ctx context.Context, q Querier, client, person, ws, issuer string) (string, error) {
	var id string
	err := q.QueryRow(ctx, `SELECT id FROM as_grants WHERE client_id = $1 AND person_id = $2 AND workspace_id = $3
		AND idp_issuer = $4 AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1`, client, person, ws, issuer).Scan(&id)
	return id, Interpret(err)
}
