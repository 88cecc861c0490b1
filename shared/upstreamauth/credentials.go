package upstreamauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/agentpack/gateway/shared/derrors"
)

// Credentials supplies the access token of one grant to the upstream MCP client
// (mcpclient.Target.Credentials): Token before each request, Unauthorized after a 401/403.
// It never logs or returns a token other than through Token.
type Credentials struct {
	s   *Service
	key Key
	// client credentials mode: the client and the upstream (for discovery)
	cc        *Client
	serverURL string

	mu   sync.Mutex
	last *Challenge // the last 401 or 403 insufficient_scope challenge, for (step-up) authorization
}

// Credentials returns the token source of the grant under k (oauth, oauth_per_user).
func (s *Service) Credentials(k Key) *Credentials { return &Credentials{s: s, key: k} }

// ClientCredentials returns the token source of a client_credentials connection: the first
// Token discovers the token endpoint from serverURL (unless c.TokenURL is set) and fetches a
// token with c; later ones reuse and renew it.
func (s *Service) ClientCredentials(k Key, serverURL string, c Client) *Credentials {
	return &Credentials{s: s, key: k, cc: &c, serverURL: serverURL}
}

// Key is the grant these credentials use.
func (c *Credentials) Key() Key { return c.key }

// ID identifies the credential for session keying (mcpclient): connection and subject.
func (c *Credentials) ID() string { return c.key.String() }

// Token returns the access token to send as "Authorization: Bearer …", refreshing it when
// it expires within RefreshSkew. ErrAuthorizationRequired (errors.Is) when there is no
// usable grant: nothing must then be sent upstream.
func (c *Credentials) Token(ctx context.Context) (string, error) {
	g, err := c.s.store.GrantGet(ctx, c.key)
	switch {
	case errors.Is(err, ErrNoGrant) && c.cc != nil:
		return c.refresh(ctx, "")
	case errors.Is(err, ErrNoGrant):
		return "", ErrAuthorizationRequired
	case err != nil:
		return "", err
	}
	if g.NeedsReauth && c.cc == nil {
		return "", ErrAuthorizationRequired
	}
	if g.NeedsReauth || (!g.Expiry.IsZero() && !c.s.now().Add(RefreshSkew).Before(g.Expiry)) {
		return c.refresh(ctx, g.AccessToken)
	}
	return g.AccessToken, nil
}

// Unauthorized is told of a 401 or 403 answer to a request sent with token. A 401 refreshes
// the grant once (concurrent callers share one refresh) and returns true when a retry with
// the new Token is worthwhile; a 401 or a 403 insufficient_scope challenge is remembered for
// Challenge. It does not read or close resp.Body.
func (c *Credentials) Unauthorized(ctx context.Context, token string, resp *http.Response) bool {
	ch, err := ParseChallenge(resp.Header)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || ch.Error == "insufficient_scope") {
		c.mu.Lock()
		c.last = &ch
		c.mu.Unlock()
	}
	if err == nil && ch.Error == "insufficient_scope" {
		c.s.scopeChallenges.Store(c.key.String(), &ch)
	}
	if resp.StatusCode != http.StatusUnauthorized || token == "" {
		return false
	}
	fresh, err := c.refresh(ctx, token)
	return err == nil && fresh != "" && fresh != token
}

// Challenge returns (and forgets) the last 401 or 403 insufficient_scope challenge seen, or
// nil: what Begin needs to (re-)authorize or step up.
func (c *Credentials) Challenge() *Challenge {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.last
	c.last = nil
	return ch
}

// refresh renews the grant whose access token was stale ("" for none yet), once for all
// concurrent callers of the same key in this process and, when the store is a Locker (the
// Postgres store: an advisory lock), once across processes too — with refresh token
// rotation, two processes refreshing the same grant would otherwise get one of them refused.
// A refused refresh marks the grant NeedsReauth and returns ErrAuthorizationRequired.
func (c *Credentials) refresh(ctx context.Context, stale string) (string, error) {
	v, err, _ := c.s.refreshes.Do(c.key.String(), func() (any, error) {
		// Detach from one caller's cancellation: the result is shared.
		ctx := context.WithoutCancel(ctx)
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		l, ok := c.s.store.(Locker)
		if !ok {
			return c.refreshWith(ctx, c.s.store, stale)
		}
		var tok string
		var ferr error
		err := l.WithLock(ctx, "refresh|"+c.key.String(), func(st Store) error {
			tok, ferr = c.refreshWith(ctx, st, stale)
			return nil // a refused refresh is recorded (NeedsReauth), not rolled back
		})
		if err != nil {
			return "", err
		}
		return tok, ferr
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

func (c *Credentials) refreshWith(ctx context.Context, st Store, stale string) (string, error) {
	g, err := st.GrantGet(ctx, c.key)
	if err != nil && !errors.Is(err, ErrNoGrant) {
		return "", err
	}
	if g != nil && !g.NeedsReauth && g.AccessToken != stale &&
		(g.Expiry.IsZero() || c.s.now().Add(RefreshSkew).Before(g.Expiry)) {
		return g.AccessToken, nil // another caller or process already renewed it
	}
	if c.cc != nil {
		g, err := c.s.clientCredentialsGrant(ctx, st, c.key, c.serverURL, c.cc)
		if err != nil {
			return "", err
		}
		return g.AccessToken, nil
	}
	if g == nil || g.NeedsReauth {
		return "", ErrAuthorizationRequired
	}
	if g.RefreshToken == "" {
		return "", c.s.markReauth(ctx, st, g, "the access token expired and the server issued no refresh token")
	}
	params := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {g.RefreshToken}}
	if g.Endpoint.Resource != "" {
		params.Set("resource", g.Endpoint.Resource)
	}
	tok, err := c.s.tokenRequest(ctx, &g.Endpoint, nil, params)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500 {
			return "", c.s.markReauth(ctx, st, g, "the authorization server refused the refresh"+oauthReason(err))
		}
		return "", flowErr("refresh", err, "the token endpoint could not be reached")
	}
	ng := c.s.grantFrom(g.Key, &g.Endpoint, tok, g.Scopes, g.AuthorizedBy)
	ng.AuthorizedAt = g.AuthorizedAt
	if ng.RefreshToken == "" {
		ng.RefreshToken = g.RefreshToken // RFC 6749 §6: the old one stays valid
	}
	if err := st.GrantPut(ctx, ng); err != nil {
		return "", err
	}
	return ng.AccessToken, nil
}

func (s *Service) markReauth(ctx context.Context, st Store, g *Grant, reason string) error {
	g.NeedsReauth, g.Reason = true, reason
	g.AccessToken = ""
	if err := st.GrantPut(ctx, g); err != nil {
		return err
	}
	s.log.WarnContext(ctx, "upstream authorization needs renewal", "connection_id", g.Key.ConnectionID, "reason", reason)
	return fmt.Errorf("%w: %s", ErrAuthorizationRequired, reason)
}

// clientCredentialsGrant fetches a token with the client_credentials grant and stores it.
func (s *Service) clientCredentialsGrant(ctx context.Context, st Store, k Key, serverURL string, c *Client) (*Grant, error) {
	ep := &Endpoint{ClientID: c.ClientID, ClientSecret: c.ClientSecret, AuthMethod: c.TokenEndpointAuth,
		TokenURL: c.TokenURL, Issuer: c.Issuer, Resource: serverURL, Registration: "preregistered"}
	var scopes []string = c.Scopes
	if ep.TokenURL == "" {
		ch, err := s.probe(ctx, serverURL)
		if err != nil {
			return nil, err
		}
		d, err := s.discover(ctx, serverURL, ch, Settings{})
		if err != nil {
			return nil, err
		}
		ep.TokenURL, ep.Issuer, ep.Resource, ep.RevocationURL = d.ep.TokenURL, d.ep.Issuer, d.ep.Resource, d.ep.RevocationURL
		if len(scopes) == 0 {
			scopes = d.scopes
		}
		if ep.AuthMethod == "" {
			ep.AuthMethod = pickAuthMethod(d.authMethods, c.ClientSecret != "")
			if c.PrivateKeyPEM != "" {
				ep.AuthMethod = AuthPrivateKeyJWT
			}
		}
	}
	if err := s.check(ep.TokenURL); err != nil {
		return nil, flowErr("client_credentials", err, "token endpoint refused: %s", publicMsg(err))
	}
	params := url.Values{"grant_type": {"client_credentials"}}
	if len(scopes) > 0 {
		params.Set("scope", strings.Join(scopes, " "))
	}
	if ep.Resource != "" {
		params.Set("resource", ep.Resource)
	}
	tok, err := s.tokenRequest(ctx, ep, c, params)
	if err != nil {
		return nil, flowErr("client_credentials", err, "the token endpoint refused the client credentials%s", oauthReason(err))
	}
	g := s.grantFrom(k, ep, tok, scopes, "client:"+c.ClientID)
	if err := st.GrantPut(ctx, g); err != nil {
		return nil, err
	}
	return g, nil
}

// tokenRequest POSTs params to ep.TokenURL with the endpoint's client authentication
// (golang.org/x/oauth2's token request; grant_type is overridden through EndpointParams,
// which clientcredentials allows). c carries the private key for private_key_jwt.
func (s *Service) tokenRequest(ctx context.Context, ep *Endpoint, c *Client, params url.Values) (*oauth2.Token, error) {
	cfg := &clientcredentials.Config{ClientID: ep.ClientID, TokenURL: ep.TokenURL, EndpointParams: params,
		AuthStyle: authStyle(ep.AuthMethod)}
	switch ep.AuthMethod {
	case AuthClientSecretBasic, AuthClientSecretPost:
		cfg.ClientSecret = ep.ClientSecret
	case AuthPrivateKeyJWT:
		if c == nil || c.PrivateKeyPEM == "" {
			return nil, errors.New("private_key_jwt needs the client's private key")
		}
		assertion, err := s.clientAssertion(ep, c)
		if err != nil {
			return nil, err
		}
		params.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		params.Set("client_assertion", assertion)
	}
	return cfg.Token(s.clientCtx(ctx))
}

// clientAssertion signs the RFC 7523 §2.2 client assertion: iss = sub = client_id, aud =
// the authorization server's issuer, five minutes of validity, a fresh jti.
func (s *Service) clientAssertion(ep *Endpoint, c *Client) (string, error) {
	alg := c.SigningAlg
	if alg == "" {
		alg = "ES256"
	}
	method := jwt.GetSigningMethod(alg)
	if method == nil {
		return "", fmt.Errorf("unsupported signing algorithm %q", alg)
	}
	var key any
	var err error
	switch {
	case strings.HasPrefix(alg, "ES"):
		key, err = jwt.ParseECPrivateKeyFromPEM([]byte(c.PrivateKeyPEM))
	case strings.HasPrefix(alg, "RS"), strings.HasPrefix(alg, "PS"):
		key, err = jwt.ParseRSAPrivateKeyFromPEM([]byte(c.PrivateKeyPEM))
	default:
		return "", fmt.Errorf("unsupported signing algorithm %q", alg)
	}
	if err != nil {
		return "", errors.New("the private key is not a valid PEM key for " + alg)
	}
	aud := ep.Issuer
	if aud == "" {
		aud = ep.TokenURL
	}
	now := s.now()
	return jwt.NewWithClaims(method, jwt.RegisteredClaims{Issuer: ep.ClientID, Subject: ep.ClientID,
		Audience: jwt.ClaimStrings{aud}, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(5 * time.Minute)),
		ID: rand.Text()}).SignedString(key)
}

// Revoke deletes every grant of connectionID and revokes its tokens where the server offers
// RFC 7009 revocation (refresh token first, then the access token). Revocation failures are
// logged, not returned: the grants are gone either way.
func (s *Service) Revoke(ctx context.Context, connectionID string) (err error) {
	defer derrors.Wrap(&err, "upstreamauth: revoke %s", connectionID)
	grants, err := s.store.GrantDelete(ctx, connectionID)
	if err != nil {
		return err
	}
	for _, g := range grants {
		if g.Endpoint.RevocationURL == "" || s.check(g.Endpoint.RevocationURL) != nil {
			continue
		}
		for _, t := range []struct{ tok, hint string }{{g.RefreshToken, "refresh_token"}, {g.AccessToken, "access_token"}} {
			if t.tok == "" {
				continue
			}
			if err := s.revokeOne(ctx, &g.Endpoint, t.tok, t.hint); err != nil {
				s.log.WarnContext(ctx, "upstream token revocation failed", "connection_id", connectionID, "err", err)
			}
		}
	}
	return nil
}

func (s *Service) revokeOne(ctx context.Context, ep *Endpoint, token, hint string) error {
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	if ep.AuthMethod != AuthClientSecretBasic {
		form.Set("client_id", ep.ClientID)
		if ep.AuthMethod == AuthClientSecretPost {
			form.Set("client_secret", ep.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.RevocationURL, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if ep.AuthMethod == AuthClientSecretBasic {
		req.SetBasicAuth(url.QueryEscape(ep.ClientID), url.QueryEscape(ep.ClientSecret))
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("revocation endpoint answered %d", resp.StatusCode)
	}
	return nil
}

// Expire marks the grant under k as needing re-authorization with reason (what Status
// then shows; never a token), unless it is already marked: what the gateway does when the
// upstream refused a grant's token (401) although it was fresh or just refreshed, so that
// the same call can answer the consent link. A missing grant is no error (nothing to expire).
func (s *Service) Expire(ctx context.Context, k Key, reason string) (err error) {
	defer derrors.Wrap(&err, "upstreamauth: expire")
	g, err := s.store.GrantGet(ctx, k)
	if errors.Is(err, ErrNoGrant) {
		return nil
	}
	if err != nil || g.NeedsReauth {
		return err
	}
	if err := s.markReauth(ctx, s.store, g, reason); !errors.Is(err, ErrAuthorizationRequired) {
		return err
	}
	return nil
}

// Status is the public authorization status of the grant under k (no token in it).
func (s *Service) Status(ctx context.Context, k Key) (_ Status, err error) {
	defer derrors.Wrap(&err, "upstreamauth: status")
	g, err := s.store.GrantGet(ctx, k)
	if errors.Is(err, ErrNoGrant) {
		return StatusOf(nil), nil
	}
	if err != nil {
		return Status{}, err
	}
	return StatusOf(g), nil
}
