package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
)

// store is fosite's storage over Postgres (shared/db, migrations/00027): codes, PKCE
// challenges, access and refresh tokens by signature in as_tokens, each refresh-token
// family a row of as_grants. It implements storage.Transactional, so that fosite's
// multi-statement steps (a code exchange, a rotation, a reuse's revocation) commit or roll
// back as one.
type store struct {
	pool    *db.Pool
	clients *clients
}

type txKey struct{}

func (s *store) q(ctx context.Context) db.Querier {
	if tx, ok := ctx.Value(txKey{}).(db.OpenTx); ok {
		return tx
	}
	return s.pool
}

// BeginTX implements storage.Transactional.
func (s *store) BeginTX(ctx context.Context) (context.Context, error) {
	tx, err := db.Begin(ctx, s.pool)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, txKey{}, tx), nil
}

// Commit implements storage.Transactional.
func (s *store) Commit(ctx context.Context) error {
	tx, ok := ctx.Value(txKey{}).(db.OpenTx)
	if !ok {
		return errors.New("authserver: commit without a transaction")
	}
	return tx.Commit(ctx)
}

// Rollback implements storage.Transactional.
func (s *store) Rollback(ctx context.Context) error {
	tx, ok := ctx.Value(txKey{}).(db.OpenTx)
	if !ok {
		return errors.New("authserver: rollback without a transaction")
	}
	return tx.Rollback(context.WithoutCancel(ctx))
}

// GetClient implements fosite.ClientManager (clients.get).
func (s *store) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	return s.clients.get(ctx, id)
}

// ClientAssertionJWTValid implements fosite.ClientManager: no client authenticates with a
// JWT assertion here (public clients only), so no jti is ever known.
func (s *store) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT implements fosite.ClientManager (unused: see ClientAssertionJWTValid).
func (s *store) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

// stored is a fosite request as as_tokens.request holds it. The form keeps only what a
// later step reads (redirect_uri, PKCE challenge, resource); never a code, token or verifier.
type stored struct {
	ID              string             `json:"id"`
	RequestedAt     time.Time          `json:"requestedAt"`
	ClientID        string             `json:"clientId"`
	Scopes          []string           `json:"scopes"`
	GrantedScopes   []string           `json:"grantedScopes"`
	Audience        []string           `json:"audience"`
	GrantedAudience []string           `json:"grantedAudience"`
	Form            url.Values         `json:"form"`
	Session         *oauth2.JWTSession `json:"session"`
}

// keptForm are the request parameters stored with a request.
var keptForm = []string{"redirect_uri", "code_challenge", "code_challenge_method", "resource", "scope", "response_type"}

func (s *store) put(ctx context.Context, kind, signature string, r fosite.Requester) error {
	sess, ok := r.GetSession().(*oauth2.JWTSession)
	if !ok {
		return fmt.Errorf("authserver: session is %T", r.GetSession())
	}
	form := url.Values{}
	for _, k := range keptForm {
		if v, ok := r.GetRequestForm()[k]; ok {
			form[k] = v
		}
	}
	b, err := json.Marshal(stored{ID: r.GetID(), RequestedAt: r.GetRequestedAt(), ClientID: r.GetClient().GetID(),
		Scopes: r.GetRequestedScopes(), GrantedScopes: r.GetGrantedScopes(), Audience: r.GetRequestedAudience(),
		GrantedAudience: r.GetGrantedAudience(), Form: form, Session: sess})
	if err != nil {
		return err
	}
	exp := sess.GetExpiresAt(tokenType(kind))
	if exp.IsZero() {
		exp = time.Now().Add(24 * time.Hour)
	}
	return db.ASTokenInsert(ctx, s.q(ctx), &db.ASToken{Signature: signature, Kind: kind, RequestID: r.GetID(),
		Request: b, ExpiresAt: exp})
}

func tokenType(kind string) fosite.TokenType {
	switch kind {
	case "code", "pkce":
		return fosite.AuthorizeCode
	case "refresh":
		return fosite.RefreshToken
	}
	return fosite.AccessToken
}

// get loads the request stored under signature, with its own stored session (as fosite's
// memory store does: the session fosite passes in is not overwritten, since fosite may
// call this again on a request whose session the caller already edited); an inactive
// token returns the request with errInactive (fosite's reuse and replay detection need both).
func (s *store) get(ctx context.Context, kind, signature string, session fosite.Session, errInactive error) (fosite.Requester, error) {
	t, err := db.ASTokenGet(ctx, s.q(ctx), kind, signature)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil, fosite.ErrNotFound
	} else if err != nil {
		return nil, err
	}
	var st stored
	if err := json.Unmarshal(t.Request, &st); err != nil {
		return nil, fmt.Errorf("authserver: stored request: %w", err)
	}
	c, err := s.clients.get(ctx, st.ClientID)
	if err != nil {
		return nil, err
	}
	req := &fosite.Request{ID: st.ID, RequestedAt: st.RequestedAt, Client: c,
		RequestedScope: st.Scopes, GrantedScope: st.GrantedScopes, RequestedAudience: st.Audience,
		GrantedAudience: st.GrantedAudience, Form: st.Form, Session: st.Session}
	if st.Session == nil {
		req.Session = session
	}
	if !t.Active {
		return req, errInactive
	}
	return req, nil
}

// CreateAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage.
func (s *store) CreateAuthorizeCodeSession(ctx context.Context, code string, r fosite.Requester) error {
	return s.put(ctx, "code", code, r)
}

// GetAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage: a code presented a
// second time returns fosite.ErrInvalidatedAuthorizeCode with its request, and fosite
// then revokes what the first exchange issued (RFC 6749 §4.1.2).
func (s *store) GetAuthorizeCodeSession(ctx context.Context, code string, session fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, "code", code, session, fosite.ErrInvalidatedAuthorizeCode)
}

// InvalidateAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage.
func (s *store) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	return db.ASTokenDeactivate(ctx, s.q(ctx), "code", code)
}

// CreatePKCERequestSession implements pkce.PKCERequestStorage.
func (s *store) CreatePKCERequestSession(ctx context.Context, signature string, r fosite.Requester) error {
	return s.put(ctx, "pkce", signature, r)
}

// GetPKCERequestSession implements pkce.PKCERequestStorage.
func (s *store) GetPKCERequestSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, "pkce", signature, session, fosite.ErrNotFound)
}

// DeletePKCERequestSession implements pkce.PKCERequestStorage.
func (s *store) DeletePKCERequestSession(ctx context.Context, signature string) error {
	return db.ASTokenDelete(ctx, s.q(ctx), "pkce", signature)
}

// CreateAccessTokenSession implements oauth2.AccessTokenStorage. The first access token of
// a request creates its grant (the family a person sees as a connected client); later
// ones record its use.
func (s *store) CreateAccessTokenSession(ctx context.Context, signature string, r fosite.Requester) error {
	g, err := grantOf(r)
	if err != nil {
		return err
	}
	if err := db.ASGrantTouch(ctx, s.q(ctx), g); err != nil {
		return err
	}
	return s.put(ctx, "access", signature, r)
}

// GetAccessTokenSession implements oauth2.AccessTokenStorage.
func (s *store) GetAccessTokenSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, "access", signature, session, fosite.ErrInactiveToken)
}

// DeleteAccessTokenSession implements oauth2.AccessTokenStorage.
func (s *store) DeleteAccessTokenSession(ctx context.Context, signature string) error {
	return db.ASTokenDelete(ctx, s.q(ctx), "access", signature)
}

// CreateRefreshTokenSession implements oauth2.RefreshTokenStorage.
func (s *store) CreateRefreshTokenSession(ctx context.Context, signature, _ string, r fosite.Requester) error {
	return s.put(ctx, "refresh", signature, r)
}

// GetRefreshTokenSession implements oauth2.RefreshTokenStorage: a rotated (or revoked)
// refresh token returns fosite.ErrInactiveToken with its request, which fosite treats as
// reuse and answers by revoking the whole family (RevokeRefreshToken, RevokeAccessToken).
func (s *store) GetRefreshTokenSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, "refresh", signature, session, fosite.ErrInactiveToken)
}

// DeleteRefreshTokenSession implements oauth2.RefreshTokenStorage. Used by fosite after a
// reuse: the token is kept inactive instead, so that a third presentation is still
// recognised as reuse rather than as an unknown token.
func (s *store) DeleteRefreshTokenSession(ctx context.Context, signature string) error {
	err := db.ASTokenDeactivate(ctx, s.q(ctx), "refresh", signature)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil
	}
	return err
}

// RotateRefreshToken implements oauth2.RefreshTokenStorage: the presented refresh token
// becomes inactive; the new one is created by CreateRefreshTokenSession.
func (s *store) RotateRefreshToken(ctx context.Context, _ string, signature string) error {
	return db.ASTokenDeactivate(ctx, s.q(ctx), "refresh", signature)
}

// RevokeRefreshToken implements oauth2.TokenRevocationStorage: the whole family of
// requestID is revoked (its grant; every refresh token of it inactive).
func (s *store) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.revoke(ctx, requestID)
}

// RevokeRefreshTokenMaybeGracePeriod implements oauth2.TokenRevocationStorage (no grace
// period: reuse revokes at once).
func (s *store) RevokeRefreshTokenMaybeGracePeriod(ctx context.Context, requestID, _ string) error {
	return s.revoke(ctx, requestID)
}

// RevokeAccessToken implements oauth2.TokenRevocationStorage: the gateway refuses every
// access token of a revoked grant, so this is the family's revocation too.
func (s *store) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.revoke(ctx, requestID)
}

func (s *store) revoke(ctx context.Context, requestID string) error {
	err := db.ASGrantRevoke(ctx, s.q(ctx), requestID)
	if apperr.CodeOf(err) == apperr.NotFound {
		// A code replayed before its first exchange created the grant: its tokens still go.
		return db.ASTokenDeactivateRequest(ctx, s.q(ctx), "refresh", requestID)
	}
	return err
}

// grantOf is the as_grants row of r: person and workspace from its session's claims,
// name, logo and redirect host from its client.
func grantOf(r fosite.Requester) (*db.ASGrant, error) {
	sess, ok := r.GetSession().(*oauth2.JWTSession)
	if !ok || sess.JWTClaims == nil {
		return nil, fmt.Errorf("authserver: request %s has no claims", r.GetID())
	}
	ws := workspaceOf(sess)
	if ws == "" {
		return nil, fmt.Errorf("authserver: request %s names no workspace", r.GetID())
	}
	g := &db.ASGrant{ID: r.GetID(), ClientID: r.GetClient().GetID(), PersonID: sess.JWTClaims.Subject,
		WorkspaceID: ws, Scopes: r.GetGrantedScopes()}
	if c, ok := r.GetClient().(*client); ok {
		g.ClientName, g.LogoURI = c.Name, c.LogoURI
	}
	// The token request's form is sanitized by then: the host is the client's (first)
	// registered redirect URI's, the one the consent page showed for a single-URI client.
	redirect := r.GetRequestForm().Get("redirect_uri")
	if redirect == "" && len(r.GetClient().GetRedirectURIs()) > 0 {
		redirect = r.GetClient().GetRedirectURIs()[0]
	}
	if u, err := url.Parse(redirect); err == nil {
		g.RedirectHost = u.Host
	}
	if g.Scopes == nil {
		g.Scopes = []string{}
	}
	return g, nil
}

// workspaceOf is the one workspace a session's token is for ("" when none).
func workspaceOf(sess *oauth2.JWTSession) string {
	switch ws := sess.JWTClaims.Extra["workspaces"].(type) {
	case []string:
		if len(ws) == 1 {
			return ws[0]
		}
	case []any:
		if len(ws) == 1 {
			s, _ := ws[0].(string)
			return s
		}
	}
	return ""
}
