package config

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Identity is the sign-in through the organisation's identity provider and the browser
// session (docs/AUTH.md "Signing in: the organisation's identity provider"):
//
//   - IDP_ISSUER, IDP_CLIENT_ID: the OpenID Connect provider and the gateway's client there
//     (no IDP_ISSUER: no sign-in through an identity provider);
//   - IDP_CLIENT_SECRET (local) or IDP_CLIENT_SECRET_ARN (deployed: a Secrets Manager
//     secret, read once at cold start, holding the secret as plain text or as JSON
//     {"client_secret": "…"});
//   - IDP_SCOPES (space-separated; default "openid email profile"), IDP_GROUPS_CLAIM (the
//     ID token claim listing the person's groups, e.g. groups or cognito:groups; "" reads
//     none), IDP_TRUST_EMAIL (bool: an email without email_verified counts as verified);
//   - SESSION_KEY (32+ bytes) or SESSION_KEY_SECRET_ARN (deployed: a Secrets Manager
//     secret), else locally SESSION_KEY_FILE (default .state/session.key, created on first
//     use): the key sealing the browser session cookie.
type Identity struct {
	Issuer              string
	ClientID            string
	ClientSecret        string
	ClientSecretARN     string
	Scopes              []string
	GroupsClaim         string
	TrustEmail          bool
	SessionKey          string
	SessionKeySecretARN string
	SessionKeyFile      string
}

// loadIdentity reads the Identity settings into c.Identity. Errors: an issuer that is not
// an absolute URL (https when deployed), an issuer without client id, a deployed issuer
// without a client secret or session key source, a bad IDP_TRUST_EMAIL, a SESSION_KEY
// shorter than 32 bytes.
func (c *Config) loadIdentity() error {
	id := Identity{
		Issuer:              strings.TrimSpace(os.Getenv("IDP_ISSUER")),
		ClientID:            os.Getenv("IDP_CLIENT_ID"),
		ClientSecret:        os.Getenv("IDP_CLIENT_SECRET"),
		ClientSecretARN:     os.Getenv("IDP_CLIENT_SECRET_ARN"),
		Scopes:              strings.Fields(os.Getenv("IDP_SCOPES")),
		GroupsClaim:         strings.TrimSpace(os.Getenv("IDP_GROUPS_CLAIM")),
		SessionKey:          os.Getenv("SESSION_KEY"),
		SessionKeySecretARN: os.Getenv("SESSION_KEY_SECRET_ARN"),
		SessionKeyFile:      env("SESSION_KEY_FILE", ".state/session.key"),
	}
	var err error
	if id.TrustEmail, err = boolEnv("IDP_TRUST_EMAIL", false); err != nil {
		return err
	}
	if id.SessionKey != "" && len(id.SessionKey) < 32 {
		return fmt.Errorf("config: SESSION_KEY must be at least 32 bytes")
	}
	if id.Issuer != "" {
		u, err := url.Parse(id.Issuer)
		if err != nil || u.Host == "" || (u.Scheme != "https" && (c.Deployed() || u.Scheme != "http")) {
			return fmt.Errorf("config: IDP_ISSUER must be an absolute https URL")
		}
		if id.ClientID == "" {
			return fmt.Errorf("config: IDP_ISSUER needs IDP_CLIENT_ID")
		}
		if c.Deployed() && id.ClientSecret == "" && id.ClientSecretARN == "" {
			return fmt.Errorf("config: IDP_ISSUER needs IDP_CLIENT_SECRET_ARN (or IDP_CLIENT_SECRET) when deployed")
		}
		if c.Deployed() && id.SessionKey == "" && id.SessionKeySecretARN == "" {
			return fmt.Errorf("config: IDP_ISSUER needs SESSION_KEY_SECRET_ARN (or SESSION_KEY) when deployed")
		}
		// The redirect URI is PUBLIC_BASE_URL + /auth/callback: without it a deployed
		// sign-in would send the provider a loopback URL (docs/DEPLOY.md: the stack's
		// CustomDomainName, or PublicBaseUrl set to the ApiUrl output).
		if c.Deployed() && c.PublicBaseURL == "" {
			return fmt.Errorf("config: IDP_ISSUER needs PUBLIC_BASE_URL when deployed (the redirect URI is PUBLIC_BASE_URL/auth/callback)")
		}
	}
	c.Identity = id
	return nil
}
