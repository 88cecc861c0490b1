package db

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// The gateway's own authorization server (migrations/00027_authorization_server.sql,
// docs/AUTH.md): registered clients, grants (refresh-token families), tokens by signature,
// consents.

// OpenTx is a transaction opened by Begin for a caller that must hand commit and rollback
// to a library (fosite's storage.Transactional). Everything else uses InTx.
type OpenTx interface {
	Tx
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

type openTx struct{ tx }

func (t openTx) Commit(ctx context.Context) error   { return Interpret(t.Tx.Commit(ctx)) }
func (t openTx) Rollback(ctx context.Context) error { return Interpret(t.Tx.Rollback(ctx)) }

// Begin opens a transaction on pool; the caller must Commit or Rollback it.
func Begin(ctx context.Context, pool *Pool) (OpenTx, error) {
	ptx, err := pool.Begin(ctx)
	if err != nil {
		return nil, Interpret(err)
	}
	return openTx{tx{ptx}}, nil
}

// ASClient is a client registered by RFC 7591 dynamic registration (migrations/00027,
// 00048). Metadata is the registration response's client metadata as stored (JSON object,
// never a secret or token). SecretHash is fosite's bcrypt hash of the client secret ("" for
// a public client, AuthMethod "none"); RegistrationTokenHash the SHA-256 of the RFC 7592
// registration access token; Shape what the registration limit groups by.
type ASClient struct {
	ClientID              string          `db:"client_id"`
	ClientName            string          `db:"client_name"`
	LogoURI               string          `db:"logo_uri"`
	ClientURI             string          `db:"client_uri"`
	RedirectURIs          []string        `db:"redirect_uris"`
	Metadata              json.RawMessage `db:"metadata"`
	SourceIP              string          `db:"source_ip"`
	CreatedAt             time.Time       `db:"created_at"`
	AuthMethod            string          `db:"token_endpoint_auth_method"`
	SecretHash            string          `db:"secret_hash"`
	RegistrationTokenHash string          `db:"registration_token_hash"`
	Scopes                []string        `db:"scopes"`
	Shape                 string          `db:"shape"`
}

// ASRegistrationLimits bound the RFC 7591 registrations made since Since (an hour ago):
// ShapesPerSource distinct shapes from one source, PerShape registrations of one shape
// from one source, Global registrations in all (docs/AUTH.md "Registration limits").
type ASRegistrationLimits struct {
	Since           time.Time
	ShapesPerSource int
	PerShape        int
	Global          int
}

// Limits ASClientRegister reports as the one that refused a registration.
const (
	ASLimitShapes = "shapes" // ShapesPerSource
	ASLimitShape  = "shape"  // PerShape
	ASLimitGlobal = "global" // Global
)

// ASClientRegister stores c (its source and shape set) unless a limit of l is reached, in
// one transaction serialised with every other registration (an advisory lock), so that
// concurrent registrations cannot overshoot a limit. It returns "" when stored, else the
// ASLimit* that refused it (nothing stored). client_id must be new: CONFLICT otherwise.
func ASClientRegister(ctx context.Context, pool *Pool, c *ASClient, l ASRegistrationLimits) (refused string, err error) {
	err = InTx(ctx, pool, func(tx Tx) error {
		if err := LockKey(ctx, tx, "as_clients", "register"); err != nil {
			return err
		}
		var shapes, same, total int
		if err := tx.QueryRow(ctx, `SELECT count(DISTINCT shape) FILTER (WHERE source_ip = $1),
			count(*) FILTER (WHERE source_ip = $1 AND shape = $2), count(*)
			FROM as_clients WHERE created_at >= $3`, c.SourceIP, c.Shape, l.Since).Scan(&shapes, &same, &total); err != nil {
			return Interpret(err)
		}
		switch {
		case total >= l.Global:
			refused = ASLimitGlobal
		case same >= l.PerShape:
			refused = ASLimitShape
		case same == 0 && shapes >= l.ShapesPerSource:
			refused = ASLimitShapes
		default:
			return asClientInsert(ctx, tx, c)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return refused, nil
}

func asClientInsert(ctx context.Context, q Querier, c *ASClient) error {
	method := c.AuthMethod
	if method == "" {
		method = "none"
	}
	scopes := c.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	_, err := q.Exec(ctx, `INSERT INTO as_clients (client_id, client_name, logo_uri, client_uri,
		redirect_uris, metadata, source_ip, token_endpoint_auth_method, secret_hash,
		registration_token_hash, scopes, shape) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		c.ClientID, c.ClientName, c.LogoURI, c.ClientURI, c.RedirectURIs, string(c.Metadata), c.SourceIP,
		method, c.SecretHash, c.RegistrationTokenHash, scopes, c.Shape)
	return Interpret(err)
}

// ASClientGet returns registered client id, or NOT_FOUND.
func ASClientGet(ctx context.Context, q Querier, id string) (*ASClient, error) {
	return one[ASClient](ctx, q, `SELECT client_id, client_name, logo_uri, client_uri, redirect_uris,
		metadata, source_ip, created_at, token_endpoint_auth_method, secret_hash,
		registration_token_hash, scopes, shape FROM as_clients WHERE client_id = $1`, id)
}

// ASClientDelete removes registered client id (RFC 7592 §2.3) and, in the same
// transaction, revokes every grant issued to it (as ASGrantRevoke: refresh and access
// tokens inactive, the gateway refuses the grant's access tokens) and forgets its
// consents. Codes not yet exchanged die with the client (no client, no exchange).
// NOT_FOUND when there is no such client.
func ASClientDelete(ctx context.Context, pool *Pool, id string) error {
	return InTx(ctx, pool, func(tx Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM as_clients WHERE client_id = $1`, id)
		if err != nil {
			return Interpret(err)
		}
		if tag.RowsAffected() == 0 {
			return notFound()
		}
		if _, err := tx.Exec(ctx, `UPDATE as_grants SET revoked_at = coalesce(revoked_at, now()) WHERE client_id = $1`, id); err != nil {
			return Interpret(err)
		}
		if _, err := tx.Exec(ctx, `UPDATE as_tokens SET active = false
			WHERE request_id IN (SELECT id FROM as_grants WHERE client_id = $1)`, id); err != nil {
			return Interpret(err)
		}
		_, err = tx.Exec(ctx, `DELETE FROM as_consents WHERE client_id = $1`, id)
		return Interpret(err)
	})
}

// ASToken is a stored token, code or PKCE challenge of the authorization server: Request
// is the serialized request it was issued for (never the token itself).
type ASToken struct {
	Signature string          `db:"signature"`
	Kind      string          `db:"kind"`
	RequestID string          `db:"request_id"`
	Active    bool            `db:"active"`
	Request   json.RawMessage `db:"request"`
	ExpiresAt time.Time       `db:"expires_at"`
}

// ASTokenInsert stores t (a duplicate signature is CONFLICT).
func ASTokenInsert(ctx context.Context, q Querier, t *ASToken) error {
	_, err := q.Exec(ctx, `INSERT INTO as_tokens (signature, kind, request_id, active, request, expires_at)
		VALUES ($1, $2, $3, true, $4, $5)`, t.Signature, t.Kind, t.RequestID, string(t.Request), t.ExpiresAt)
	return Interpret(err)
}

// ASTokenGet returns the token of kind with signature, or NOT_FOUND.
func ASTokenGet(ctx context.Context, q Querier, kind, signature string) (*ASToken, error) {
	return one[ASToken](ctx, q, `SELECT signature, kind, request_id, active, request, expires_at
		FROM as_tokens WHERE kind = $1 AND signature = $2`, kind, signature)
}

// ASTokenDeactivate marks the token of kind with signature used (a redeemed code, a
// rotated refresh token); NOT_FOUND when there is none.
func ASTokenDeactivate(ctx context.Context, q Querier, kind, signature string) error {
	tag, err := q.Exec(ctx, `UPDATE as_tokens SET active = false WHERE kind = $1 AND signature = $2`, kind, signature)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// ASTokenDelete deletes the token of kind with signature (none is not an error).
func ASTokenDelete(ctx context.Context, q Querier, kind, signature string) error {
	_, err := q.Exec(ctx, `DELETE FROM as_tokens WHERE kind = $1 AND signature = $2`, kind, signature)
	return Interpret(err)
}

// ASTokenDeactivateRequest marks every token of kind issued for requestID inactive.
func ASTokenDeactivateRequest(ctx context.Context, q Querier, kind, requestID string) error {
	_, err := q.Exec(ctx, `UPDATE as_tokens SET active = false WHERE kind = $1 AND request_id = $2`, kind, requestID)
	return Interpret(err)
}

// ASGrant is an authorization a person gave a client in a workspace: one refresh-token
// family. RevokedAt non-nil means revoked.
type ASGrant struct {
	ID           string     `db:"id"`
	ClientID     string     `db:"client_id"`
	ClientName   string     `db:"client_name"`
	LogoURI      string     `db:"logo_uri"`
	RedirectHost string     `db:"redirect_host"`
	PersonID     string     `db:"person_id"`
	WorkspaceID  string     `db:"workspace_id"`
	Scopes       []string   `db:"scopes"`
	CreatedAt    time.Time  `db:"created_at"`
	LastUsedAt   time.Time  `db:"last_used_at"`
	RevokedAt    *time.Time `db:"revoked_at"`
	// ExpiresAt is an MCP access token's end (migrations/00051); nil for an OAuth grant,
	// which lives by its refresh tokens.
	ExpiresAt *time.Time `db:"expires_at"`
	// IDPIssuer is the identity provider whose ID-JAG made the grant ("" = the consent
	// page; migrations/00049).
	IDPIssuer string `db:"idp_issuer"`
}

const asGrantCols = `id, client_id, client_name, logo_uri, redirect_host, person_id, workspace_id,
	scopes, created_at, last_used_at, revoked_at, expires_at, idp_issuer`

// ASGrantTouch creates grant g, or when it exists records its use (last_used_at). A
// revoked grant stays revoked.
func ASGrantTouch(ctx context.Context, q Querier, g *ASGrant) error {
	_, err := q.Exec(ctx, `INSERT INTO as_grants (id, client_id, client_name, logo_uri, redirect_host,
		person_id, workspace_id, scopes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (id) DO UPDATE SET last_used_at = now()`,
		g.ID, g.ClientID, g.ClientName, g.LogoURI, g.RedirectHost, g.PersonID, g.WorkspaceID, g.Scopes)
	return Interpret(err)
}

// ASGrantGet returns grant id, or NOT_FOUND.
func ASGrantGet(ctx context.Context, q Querier, id string) (*ASGrant, error) {
	return one[ASGrant](ctx, q, `SELECT `+asGrantCols+` FROM as_grants WHERE id = $1`, id)
}

// ASGrantActive reports whether grant id exists and is not revoked: the gateway's check
// on every call made with an access token the gateway issued. An MCP access token's grant
// (migrations/00051) must also not be past its expires_at and, with member_check, its
// person must still hold its role (or admin) in its workspace, by membership or by a group
// role (MembershipsOfPerson's rule), so that removal or demotion ends it at the next call.
func ASGrantActive(ctx context.Context, q Querier, id string) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM as_grants g WHERE g.id = $1 AND g.revoked_at IS NULL
		AND (g.expires_at IS NULL OR g.expires_at > now())
		AND CASE WHEN g.member_check THEN EXISTS (
			SELECT 1 FROM memberships m WHERE m.person_id = g.person_id::uuid AND m.workspace_id = g.workspace_id
				AND (g.role = 'member' OR m.role = 'admin')
			UNION ALL
			SELECT 1 FROM group_roles r JOIN people p ON r.group_name = ANY(p.groups)
			WHERE p.id = g.person_id::uuid AND r.workspace_id = g.workspace_id
				AND (g.role = 'member' OR r.role = 'admin'))
		ELSE true END)`, id).Scan(&ok)
	return ok, Interpret(err)
}

// ASGrantRevoke revokes grant id (idempotent), deactivates its refresh tokens, and
// forgets the consent behind it so that the client asks again. NOT_FOUND when no grant id.
func ASGrantRevoke(ctx context.Context, q Querier, id string) error {
	var person, client, ws string
	err := q.QueryRow(ctx, `UPDATE as_grants SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1
		RETURNING person_id, client_id, workspace_id`, id).Scan(&person, &client, &ws)
	if err != nil {
		return Interpret(err)
	}
	if _, err := q.Exec(ctx, `UPDATE as_tokens SET active = false WHERE request_id = $1`, id); err != nil {
		return Interpret(err)
	}
	_, err = q.Exec(ctx, `DELETE FROM as_consents WHERE person_id = $1 AND client_id = $2 AND workspace_id = $3`,
		person, client, ws)
	return Interpret(err)
}

// ASGrantListByPerson returns the active grants of person (an MCP access token's until it
// expires), newest first.
func ASGrantListByPerson(ctx context.Context, q Querier, person string) ([]ASGrant, error) {
	return collect[ASGrant](ctx, q, `SELECT `+asGrantCols+` FROM as_grants
		WHERE person_id = $1 AND revoked_at IS NULL
		AND (expires_at IS NULL OR expires_at > now()) ORDER BY created_at DESC, id`, person)
}

// ASGrantListByWorkspace returns the active grants in workspace ws, newest first.
func ASGrantListByWorkspace(ctx context.Context, q Querier, ws string) ([]ASGrant, error) {
	if !IsUUID(ws) {
		return nil, nil
	}
	return collect[ASGrant](ctx, q, `SELECT `+asGrantCols+` FROM as_grants
		WHERE workspace_id = $1 AND revoked_at IS NULL
		AND (expires_at IS NULL OR expires_at > now()) ORDER BY created_at DESC, id`, ws)
}

// ASConsentGet reports whether person consented to client in workspace ws for every
// scope of scopes.
func ASConsentGet(ctx context.Context, q Querier, person, client, ws string, scopes []string) (bool, error) {
	if !IsUUID(ws) {
		return false, nil
	}
	var ok bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM as_consents WHERE person_id = $1 AND client_id = $2
		AND workspace_id = $3 AND scopes @> $4)`, person, client, ws, scopes).Scan(&ok)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	return ok, Interpret(err)
}

// ASConsentPut records person's consent to client in workspace ws for scopes.
func ASConsentPut(ctx context.Context, q Querier, person, client, ws string, scopes []string) error {
	_, err := q.Exec(ctx, `INSERT INTO as_consents (person_id, client_id, workspace_id, scopes)
		VALUES ($1, $2, $3, $4) ON CONFLICT (person_id, client_id, workspace_id)
		DO UPDATE SET scopes = EXCLUDED.scopes, granted_at = now()`, person, client, ws, scopes)
	return Interpret(err)
}

// ASSwept counts what one ASSweep deleted.
type ASSwept struct {
	Tokens, Grants, Clients int64
}

// ASSweep deletes, at most limit rows of each kind per call (oldest first is not promised),
// what the authorization server (docs/AUTH.md) can no longer use:
//   - as_tokens rows (codes, PKCE challenges, access and refresh tokens) a day past their
//     expiry (the day keeps a just-expired refresh token's reuse detectable meanwhile);
//   - as_grants with no unexpired token left, a day after their revocation or 31 days after
//     their last use (the refresh lifetime is 30 days): such a family can issue nothing, and
//     a missing grant is inactive to ASGrantActive, as a revoked one is; an MCP access
//     token's grant (expires_at set) only a day after its revocation or its expiry, since
//     it holds no stored token and is not "used" by the calls it makes;
//   - as_clients registered (RFC 7591) more than 30 days ago that hold no grant: clients
//     that registered and never connected anyone, the trace of a registration flood.
//
// The health-check function runs it at each pass (functions/healthcheck/health).
func ASSweep(ctx context.Context, q Querier, limit int) (ASSwept, error) {
	var out ASSwept
	tag, err := q.Exec(ctx, `DELETE FROM as_tokens WHERE (kind, signature) IN (
		SELECT kind, signature FROM as_tokens WHERE expires_at < now() - interval '1 day' LIMIT $1)`, limit)
	if err != nil {
		return out, Interpret(err)
	}
	out.Tokens = tag.RowsAffected()
	tag, err = q.Exec(ctx, `DELETE FROM as_grants WHERE id IN (
		SELECT g.id FROM as_grants g
		WHERE (g.revoked_at < now() - interval '1 day'
		       OR (g.expires_at IS NULL AND g.last_used_at < now() - interval '31 days')
		       OR g.expires_at < now() - interval '1 day')
		  AND NOT EXISTS (SELECT 1 FROM as_tokens t WHERE t.request_id = g.id AND t.expires_at > now())
		LIMIT $1)`, limit)
	if err != nil {
		return out, Interpret(err)
	}
	out.Grants = tag.RowsAffected()
	tag, err = q.Exec(ctx, `DELETE FROM as_clients WHERE client_id IN (
		SELECT c.client_id FROM as_clients c
		WHERE c.created_at < now() - interval '30 days'
		  AND NOT EXISTS (SELECT 1 FROM as_grants g WHERE g.client_id = c.client_id)
		LIMIT $1)`, limit)
	if err != nil {
		return out, Interpret(err)
	}
	out.Clients = tag.RowsAffected()
	return out, nil
}
