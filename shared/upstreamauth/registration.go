package upstreamauth

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// The client identity the gateway uses at an upstream's authorization server (a client ID
// metadata document, a pre-registered client, or one dynamic registration per connection
// and authorization server) and how it authenticates at the token endpoint.

// register settles the client identity: a client ID metadata document when the server
// supports it and one is configured, else the pre-registered client, else dynamic
// registration (RFC 7591) when the server offers it.
//
// A dynamic registration is made once per connection and authorization server and reused
// by every member (Store.RegistrationGet/Put, under the store's lock when it is a Locker),
// rather than once per unauthorized call.
func (s *Service) register(ctx context.Context, connectionID string, d *discovery, pre *Client) (*Endpoint, error) {
	ep := d.ep
	switch {
	case d.cimd && s.cimdURL != "":
		ep.ClientID, ep.AuthMethod, ep.Registration = s.cimdURL, AuthNone, "cimd"
	case pre != nil && pre.ClientID != "":
		if pre.Issuer != "" && strings.TrimRight(pre.Issuer, "/") != strings.TrimRight(ep.Issuer, "/") {
			return nil, flowErr("registration", nil, "the pre-registered client is for issuer %q, the server uses %q", pre.Issuer, ep.Issuer)
		}
		ep.ClientID, ep.ClientSecret, ep.Registration = pre.ClientID, pre.ClientSecret, "preregistered"
		ep.AuthMethod = pre.TokenEndpointAuth
		if ep.AuthMethod == "" {
			ep.AuthMethod = pickAuthMethod(d.authMethods, pre.ClientSecret != "")
		}
	case d.registration != "":
		return s.registerOnce(ctx, connectionID, d)
	default:
		return nil, flowErr("registration", nil, "the authorization server supports none of the client identities configured (no client ID metadata document support, no pre-registered client, no registration endpoint)")
	}
	return &ep, nil
}

// registerOnce returns the client registered for connectionID at d's issuer, registering
// one (RFC 7591) when there is none yet.
func (s *Service) registerOnce(ctx context.Context, connectionID string, d *discovery) (*Endpoint, error) {
	var out *Endpoint
	run := func(st Store) error {
		prev, err := st.RegistrationGet(ctx, connectionID, d.ep.Issuer)
		if err != nil {
			return fmt.Errorf("upstreamauth: read registration: %w", err)
		}
		if prev != nil && prev.TokenURL == d.ep.TokenURL {
			ep := d.ep
			ep.ClientID, ep.ClientSecret, ep.AuthMethod, ep.Registration = prev.ClientID, prev.ClientSecret, prev.AuthMethod, prev.Registration
			out = &ep
			return nil
		}
		ep, err := s.registerDynamic(ctx, d)
		if err != nil {
			return err
		}
		if err := st.RegistrationPut(ctx, connectionID, d.ep.Issuer, ep); err != nil {
			return fmt.Errorf("upstreamauth: store registration: %w", err)
		}
		out = ep
		return nil
	}
	var err error
	if l, ok := s.store.(Locker); ok {
		err = l.WithLock(ctx, "register|"+connectionID+"|"+d.ep.Issuer, run)
	} else {
		err = run(s.store)
	}
	return out, err
}

// registerDynamic registers a client with d's registration endpoint (RFC 7591).
func (s *Service) registerDynamic(ctx context.Context, d *discovery) (*Endpoint, error) {
	ep := d.ep
	{
		meta := &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{s.redirect}, ClientName: s.clientName,
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			ApplicationType: applicationType(s.redirect)}
		res, err := oauthex.RegisterClient(ctx, d.registration, meta, s.http)
		if err != nil {
			return nil, flowErr("registration", err, "dynamic client registration failed")
		}
		ep.ClientID, ep.ClientSecret, ep.Registration = res.ClientID, res.ClientSecret, "dynamic"
		ep.AuthMethod = res.TokenEndpointAuthMethod
		if ep.AuthMethod == "" {
			// Not echoed: what the server's metadata supports (post, then basic), else the
			// RFC 7591 §2 default, client_secret_basic; none for a client without a secret.
			ep.AuthMethod = pickAuthMethod(d.authMethods, res.ClientSecret != "")
		}
	}
	return &ep, nil
}

// applicationType is the RFC 7591 / OIDC application_type for redirect (SEP-837): "native"
// for a loopback redirect (a local tool such as the conformance client), else "web".
func applicationType(redirect string) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return "web"
	}
	switch h := u.Hostname(); {
	case h == "localhost":
		return "native"
	default:
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			return "native"
		}
	}
	return "web"
}

// pickAuthMethod chooses a token endpoint authentication method from the server's list
// (OAuth 2.1 prefers client_secret_post).
func pickAuthMethod(supported []string, hasSecret bool) string {
	if !hasSecret {
		return AuthNone
	}
	for _, m := range []string{AuthClientSecretPost, AuthClientSecretBasic} {
		if slices.Contains(supported, m) {
			return m
		}
	}
	return AuthClientSecretBasic
}

func authStyle(method string) oauth2.AuthStyle {
	switch method {
	case AuthClientSecretBasic:
		return oauth2.AuthStyleInHeader
	default: // none, client_secret_post, private_key_jwt: everything in the form
		return oauth2.AuthStyleInParams
	}
}

func oauthConfig(ep *Endpoint, redirect string, scopes []string) *oauth2.Config {
	secret := ep.ClientSecret
	if ep.AuthMethod == AuthNone {
		secret = ""
	}
	return &oauth2.Config{ClientID: ep.ClientID, ClientSecret: secret, RedirectURL: redirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: ep.AuthURL, TokenURL: ep.TokenURL, AuthStyle: authStyle(ep.AuthMethod)}}
}
