package upstreamauth

import (
	"context"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentpack/gateway/shared/derrors"
)

// EnterpriseIdP is the enterprise identity provider of enterprise-managed authorization
// (SEP-990, an extension of the MCP authorization spec): the user's ID token from that
// provider stands in for an interactive consent.
type EnterpriseIdP struct {
	TokenURL     string // the IdP's token endpoint (RFC 8693 token exchange)
	ClientID     string // the gateway's client at the IdP
	ClientSecret string // "" for a public client (a secret)
	IDToken      string // the user's OpenID Connect ID token (a secret)
}

// EnterpriseGrant obtains and stores a grant for k without a browser: discovery as Begin
// does, an RFC 8693 token exchange of idp.IDToken at the IdP for an Identity Assertion JWT
// Authorization Grant (audience: the authorization server's issuer; resource: the MCP
// server), then the RFC 7523 JWT bearer grant at the authorization server, authenticated as
// client c. It is not a connection auth mode (no identity provider is configured per
// workspace); the conformance client uses it for the SEP-990 scenarios. Errors are
// *FlowError.
func (s *Service) EnterpriseGrant(ctx context.Context, k Key, serverURL string, idp EnterpriseIdP, c Client) (_ *Grant, err error) {
	defer derrors.Wrap(&err, "upstreamauth: enterprise grant")
	ch, err := s.probe(ctx, serverURL)
	if err != nil {
		return nil, err
	}
	d, err := s.discover(ctx, serverURL, ch, Settings{})
	if err != nil {
		return nil, err
	}
	if err := s.check(idp.TokenURL); err != nil {
		return nil, flowErr("enterprise", err, "identity provider token endpoint refused: %s", publicMsg(err))
	}
	creds := &oauthex.ClientCredentials{ClientID: idp.ClientID}
	if idp.ClientSecret != "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: idp.ClientSecret}
	}
	jag, err := oauthex.ExchangeToken(ctx, idp.TokenURL, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG, Audience: d.ep.Issuer, Resource: d.ep.Resource,
		Scope: d.scopes, SubjectToken: idp.IDToken, SubjectTokenType: oauthex.TokenTypeIDToken,
	}, creds, s.http)
	if err != nil {
		return nil, flowErr("enterprise", err, "the identity provider refused the token exchange%s", oauthReason(err))
	}
	return s.jwtBearer(ctx, k, d, jag.AccessToken, c, "enterprise:"+idp.ClientID)
}

// WorkloadGrant obtains and stores a grant for k with a workload identity token (workload
// identity federation, SEP-1933: the RFC 7523 JWT bearer grant with the workload's JWT as
// the assertion, client c — usually a public client, token endpoint auth none). A refusal is
// returned as is, never retried with another grant type. Like EnterpriseGrant it is not a
// connection auth mode (no workload identity source exists for a connection); the
// conformance client uses it. Errors are *FlowError.
func (s *Service) WorkloadGrant(ctx context.Context, k Key, serverURL, workloadJWT string, c Client) (_ *Grant, err error) {
	defer derrors.Wrap(&err, "upstreamauth: workload grant")
	ch, err := s.probe(ctx, serverURL)
	if err != nil {
		return nil, err
	}
	d, err := s.discover(ctx, serverURL, ch, Settings{})
	if err != nil {
		return nil, err
	}
	return s.jwtBearer(ctx, k, d, workloadJWT, c, "workload:"+c.ClientID)
}

// jwtBearer runs the RFC 7523 §2.1 JWT bearer grant at the discovered token endpoint with
// assertion, authenticated as c (its method, else one the server supports), and stores the
// grant. The resource parameter is sent as with every other grant.
func (s *Service) jwtBearer(ctx context.Context, k Key, d *discovery, assertion string, c Client, by string) (*Grant, error) {
	ep := d.ep
	ep.ClientID, ep.ClientSecret, ep.Registration = c.ClientID, c.ClientSecret, "preregistered"
	ep.AuthMethod = c.TokenEndpointAuth
	if ep.AuthMethod == "" {
		ep.AuthMethod = pickAuthMethod(d.authMethods, c.ClientSecret != "")
	}
	params := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}}
	if ep.Resource != "" {
		params.Set("resource", ep.Resource)
	}
	if len(d.scopes) > 0 {
		params.Set("scope", strings.Join(d.scopes, " "))
	}
	tok, err := s.tokenRequest(ctx, &ep, &c, params)
	if err != nil {
		return nil, flowErr("jwt_bearer", err, "the authorization server refused the JWT bearer grant%s", oauthReason(err))
	}
	g := s.grantFrom(k, &ep, tok, d.scopes, by)
	if err := s.store.GrantPut(ctx, g); err != nil {
		return nil, err
	}
	return g, nil
}
