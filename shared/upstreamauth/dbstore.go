package upstreamauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
)

// DBStore is the Postgres Store (migrations/00007_upstream_auth.sql). Grants and pending
// authorizations are sealed whole with sealer, with the row's identity as associated data
// (a sealed value copied to another row does not open); states are stored as SHA-256.
type DBStore struct {
	q      db.Querier
	sealer Sealer
}

var _ Store = (*DBStore)(nil)

// NewDBStore returns a Store over q (the pool) sealing with sealer.
func NewDBStore(q db.Querier, sealer Sealer) *DBStore { return &DBStore{q: q, sealer: sealer} }

func stateHash(state string) []byte { h := sha256.Sum256([]byte(state)); return h[:] }

func pendingAAD(h []byte) []byte { return []byte("pending|" + hex.EncodeToString(h)) }

func grantAAD(k Key) []byte { return []byte("grant|" + k.ConnectionID + "|" + k.Subject) }

// PendingPut implements Store.
func (s *DBStore) PendingPut(ctx context.Context, p *Pending) error {
	if !db.IsUUID(p.Key.ConnectionID) {
		return apperr.New(apperr.NotFound, "connection not found")
	}
	h := stateHash(p.State)
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	sealed, err := s.sealer.Seal(ctx, raw, pendingAAD(h))
	if err != nil {
		return err
	}
	// Expired states are swept here, on the (rare) path that adds one: the table stays as
	// small as the number of authorizations started in the last StateTTL.
	if _, err := db.OAuthPendingSweep(ctx, s.q, time.Now()); err != nil {
		return err
	}
	if _, err := db.OAuthReplacedLinkSweep(ctx, s.q, time.Now()); err != nil {
		return err
	}
	var ws *string
	if p.Caller.WorkspaceID != "" {
		ws = &p.Caller.WorkspaceID
	}
	// The caller's earlier pending authorizations of this connection are replaced: repeated
	// unauthorized calls keep one row, not one per call. Their links are kept as replaced
	// (PendingByLink), so that opening one is refused as replaced, naming its connection.
	if _, err := db.OAuthPendingReplaceCaller(ctx, s.q, p.Key.ConnectionID, ws, p.Caller.Subject); err != nil {
		return err
	}
	var lh []byte
	if p.Link != "" {
		lh = linkHash(p.Link)
	}
	return db.OAuthPendingInsert(ctx, s.q, &db.OAuthPending{StateHash: h, ConnectionID: p.Key.ConnectionID,
		WorkspaceID: ws, Subject: p.Caller.Subject, PendingSealed: sealed, ExpiresAt: p.ExpiresAt, LinkHash: lh})
}

func linkHash(link string) []byte { h := sha256.Sum256([]byte("link|" + link)); return h[:] }

// PendingByLink implements Store.
func (s *DBStore) PendingByLink(ctx context.Context, link string) (*Pending, error) {
	if link == "" {
		return nil, ErrStateUnknown
	}
	row, err := db.OAuthPendingByLink(ctx, s.q, linkHash(link))
	if apperr.CodeOf(err) == apperr.NotFound {
		gone, gerr := db.OAuthReplacedLinkGet(ctx, s.q, linkHash(link))
		switch {
		case apperr.CodeOf(gerr) == apperr.NotFound:
			return nil, ErrStateUnknown
		case gerr != nil:
			return nil, gerr
		}
		p := &Pending{Key: Key{ConnectionID: gone.ConnectionID}, Caller: Caller{Subject: gone.Subject},
			ExpiresAt: gone.ExpiresAt, Replaced: true}
		if gone.WorkspaceID != nil {
			p.Caller.WorkspaceID = *gone.WorkspaceID
		}
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	return s.openPending(ctx, row)
}

// PendingBind implements Store.
func (s *DBStore) PendingBind(ctx context.Context, link string, bindingHash []byte) error {
	err := db.OAuthPendingBind(ctx, s.q, linkHash(link), bindingHash)
	if apperr.CodeOf(err) == apperr.NotFound {
		return ErrStateUnknown
	}
	return err
}

func (s *DBStore) openPending(ctx context.Context, row *db.OAuthPending) (*Pending, error) {
	raw, err := s.sealer.Open(ctx, row.PendingSealed, pendingAAD(row.StateHash))
	if err != nil {
		return nil, err
	}
	var p Pending
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("upstreamauth: pending state: %w", err)
	}
	p.BindingHash = row.BindingHash
	return &p, nil
}

func registrationAAD(connectionID, issuer string) []byte {
	return []byte("registration|" + connectionID + "|" + issuer)
}

// RegistrationGet implements Store.
func (s *DBStore) RegistrationGet(ctx context.Context, connectionID, issuer string) (*Endpoint, error) {
	row, err := db.OAuthRegistrationGet(ctx, s.q, connectionID, issuer)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	raw, err := s.sealer.Open(ctx, row.ClientSealed, registrationAAD(connectionID, issuer))
	if err != nil {
		return nil, err
	}
	var ep Endpoint
	if err := json.Unmarshal(raw, &ep); err != nil {
		return nil, fmt.Errorf("upstreamauth: registration: %w", err)
	}
	return &ep, nil
}

// RegistrationPut implements Store.
func (s *DBStore) RegistrationPut(ctx context.Context, connectionID, issuer string, ep *Endpoint) error {
	raw, err := json.Marshal(ep)
	if err != nil {
		return err
	}
	sealed, err := s.sealer.Seal(ctx, raw, registrationAAD(connectionID, issuer))
	if err != nil {
		return err
	}
	return db.OAuthRegistrationUpsert(ctx, s.q, &db.OAuthRegistration{ConnectionID: connectionID, Issuer: issuer, ClientSealed: sealed})
}

// PendingTake implements Store.
func (s *DBStore) PendingTake(ctx context.Context, state string) (*Pending, error) {
	h := stateHash(state)
	row, err := db.OAuthPendingTake(ctx, s.q, h)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil, ErrStateUnknown
	}
	if err != nil {
		return nil, err
	}
	return s.openPending(ctx, row)
}

// GrantGet implements Store.
func (s *DBStore) GrantGet(ctx context.Context, k Key) (*Grant, error) {
	row, err := db.OAuthGrantGet(ctx, s.q, k.ConnectionID, k.Subject)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil, ErrNoGrant
	}
	if err != nil {
		return nil, err
	}
	return s.open(ctx, row)
}

func (s *DBStore) open(ctx context.Context, row *db.OAuthGrant) (*Grant, error) {
	k := Key{ConnectionID: row.ConnectionID, Subject: row.Subject}
	raw, err := s.sealer.Open(ctx, row.GrantSealed, grantAAD(k))
	if err != nil {
		return nil, err
	}
	var g Grant
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, fmt.Errorf("upstreamauth: grant: %w", err)
	}
	g.Key = k
	return &g, nil
}

// GrantPut implements Store.
func (s *DBStore) GrantPut(ctx context.Context, g *Grant) error {
	raw, err := json.Marshal(g)
	if err != nil {
		return err
	}
	sealed, err := s.sealer.Seal(ctx, raw, grantAAD(g.Key))
	if err != nil {
		return err
	}
	row := &db.OAuthGrant{ConnectionID: g.Key.ConnectionID, Subject: g.Key.Subject, GrantSealed: sealed,
		NeedsReauth: g.NeedsReauth, Scopes: g.Scopes, AuthorizedBy: g.AuthorizedBy, AuthorizedAt: g.AuthorizedAt}
	if g.Reason != "" {
		row.Reason = &g.Reason
	}
	if !g.Expiry.IsZero() {
		e := g.Expiry
		row.ExpiresAt = &e
	}
	return db.OAuthGrantUpsert(ctx, s.q, row)
}

// GrantDelete implements Store. A grant that no longer opens (key rotated away) is deleted
// all the same, without its tokens (it cannot be revoked).
func (s *DBStore) GrantDelete(ctx context.Context, connectionID string) ([]*Grant, error) {
	rows, err := db.OAuthGrantDeleteConnection(ctx, s.q, connectionID)
	if err != nil {
		return nil, err
	}
	out := make([]*Grant, 0, len(rows))
	for i := range rows {
		g, err := s.open(ctx, &rows[i])
		if errors.Is(err, ErrSealed) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func clientAAD(entryID string) []byte { return []byte("client|" + entryID) }

// ClientGet returns the pre-registered client of catalog entry entryID with its secret (or
// private key) opened; nil, nil when the entry has none.
func (s *DBStore) ClientGet(ctx context.Context, entryID string) (*Client, error) {
	row, err := db.OAuthClientGet(ctx, s.q, entryID)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c := &Client{ClientID: row.ClientID, TokenEndpointAuth: row.TokenEndpointAuth, SigningAlg: row.SigningAlg,
		Issuer: row.Issuer, Scopes: row.Scopes}
	if len(row.ClientSecretSealed) > 0 {
		secret, err := s.sealer.Open(ctx, row.ClientSecretSealed, clientAAD(entryID))
		if err != nil {
			return nil, err
		}
		if row.TokenEndpointAuth == AuthPrivateKeyJWT {
			c.PrivateKeyPEM = string(secret)
		} else {
			c.ClientSecret = string(secret)
		}
	}
	return c, nil
}

// ClientPut stores c as the pre-registered client of catalog entry entryID through q (a
// transaction of the caller), its secret or private key sealed.
func (s *DBStore) ClientPut(ctx context.Context, q db.Querier, entryID string, c *Client) error {
	row := &db.OAuthClient{CatalogEntryID: entryID, ClientID: c.ClientID, TokenEndpointAuth: c.TokenEndpointAuth,
		SigningAlg: c.SigningAlg, Issuer: c.Issuer, Scopes: c.Scopes}
	secret := c.ClientSecret
	if c.TokenEndpointAuth == AuthPrivateKeyJWT {
		secret = c.PrivateKeyPEM
	}
	if secret != "" {
		sealed, err := s.sealer.Seal(ctx, []byte(secret), clientAAD(entryID))
		if err != nil {
			return err
		}
		row.ClientSecretSealed = sealed
	}
	return db.OAuthClientUpsert(ctx, q, row)
}

// WithLock implements Locker: fn runs in a transaction holding the advisory lock
// ("upstreamauth", key), with a DBStore on that transaction. Over a transaction already
// (q is not the pool) fn runs directly.
func (s *DBStore) WithLock(ctx context.Context, key string, fn func(Store) error) error {
	pool, ok := s.q.(*db.Pool)
	if !ok {
		return fn(s)
	}
	return db.InTx(ctx, pool, func(tx db.Tx) error {
		if err := db.LockKey(ctx, tx, "upstreamauth", key); err != nil {
			return err
		}
		return fn(&DBStore{q: tx, sealer: s.sealer})
	})
}
