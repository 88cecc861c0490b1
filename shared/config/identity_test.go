package config

import (
	"strings"
	"testing"
)

// TestIdentity: the identity provider's settings are checked at load, deployed mode wants
// https and a secret source for the client secret and the session key.
func TestIdentity(t *testing.T) {
	for _, tc := range []struct {
		name, env, issuer, client, secretARN, sessionARN, sessionKey, trust, err string
	}{
		{"none", "deployed", "", "", "", "", "", "", ""},
		{"complete", "deployed", "https://idp.example/", "c", "arn:s", "arn:k", "", "true", ""},
		{"local http without secrets", "local", "http://127.0.0.1:9/oidc", "c", "", "", "", "", ""},
		{"http when deployed", "deployed", "http://idp.example", "c", "arn:s", "arn:k", "", "", "IDP_ISSUER"},
		{"relative", "local", "/oidc", "c", "", "", "", "", "IDP_ISSUER"},
		{"no client", "local", "https://idp.example", "", "", "", "", "", "IDP_CLIENT_ID"},
		{"no client secret deployed", "deployed", "https://idp.example", "c", "", "arn:k", "", "", "IDP_CLIENT_SECRET_ARN"},
		{"no session key deployed", "deployed", "https://idp.example", "c", "arn:s", "", "", "", "SESSION_KEY_SECRET_ARN"},
		{"short session key", "local", "", "", "", "", "short", "", "SESSION_KEY"},
		{"bad trust", "local", "", "", "", "", "", "maybe", "IDP_TRUST_EMAIL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("APP_ENV", tc.env)
			t.Setenv("JWT_SECRET", "s")
			t.Setenv("PUBLIC_BASE_URL", "https://gw.example")
			t.Setenv("IDP_ISSUER", tc.issuer)
			t.Setenv("IDP_CLIENT_ID", tc.client)
			t.Setenv("IDP_CLIENT_SECRET", "")
			t.Setenv("IDP_CLIENT_SECRET_ARN", tc.secretARN)
			t.Setenv("SESSION_KEY_SECRET_ARN", tc.sessionARN)
			t.Setenv("SESSION_KEY", tc.sessionKey)
			t.Setenv("IDP_TRUST_EMAIL", tc.trust)
			t.Setenv("IDP_SCOPES", "openid  email groups")
			c, err := Load()
			if tc.err == "" {
				if err != nil || c.Identity.Issuer != tc.issuer || len(c.Identity.Scopes) != 3 {
					t.Fatalf("Load: %+v %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want one naming %s", err, tc.err)
			}
		})
	}
}

// TestIdentityNeedsBaseURLDeployed: deployed, the sign-in through an identity provider
// needs PUBLIC_BASE_URL (its redirect URI); locally the loopback address serves.
func TestIdentityNeedsBaseURLDeployed(t *testing.T) {
	t.Setenv("JWT_SECRET", "s")
	t.Setenv("PUBLIC_BASE_URL", "")
	t.Setenv("IDP_ISSUER", "https://idp.example")
	t.Setenv("IDP_CLIENT_ID", "c")
	t.Setenv("IDP_CLIENT_SECRET_ARN", "arn:s")
	t.Setenv("SESSION_KEY_SECRET_ARN", "arn:k")
	t.Setenv("APP_ENV", "deployed")
	if _, err := Load(); err == nil || !strings.Contains(err.Error(), "PUBLIC_BASE_URL") {
		t.Fatalf("deployed without PUBLIC_BASE_URL: %v", err)
	}
	t.Setenv("APP_ENV", "local")
	if _, err := Load(); err != nil {
		t.Fatalf("local: %v", err)
	}
}
