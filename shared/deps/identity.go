package deps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentpack/gateway/shared/dbsecret"
	"github.com/agentpack/gateway/shared/identity"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// buildIdentity builds d.Sessions and d.SignIn from cfg.Identity
// (docs/AUTH.md "Signing in: the organisation's identity provider"): the session key from
// SESSION_KEY, else the Secrets Manager secret SESSION_KEY_SECRET_ARN, else locally the key
// file (created on first use); deployed without a session key there are no browser
// sessions (and config refuses an identity provider without one). The identity provider's
// client secret comes from IDP_CLIENT_SECRET or the secret IDP_CLIENT_SECRET_ARN, read
// here, once per cold start. Errors name the setting, never a secret's value.
func (d *Deps) buildIdentity(ctx context.Context) error {
	idc := d.Config.Identity
	var sm dbsecret.SecretGetter
	secret := func(arn, what string) (string, error) {
		if sm == nil {
			var err error
			if sm, err = newSecretsClient(ctx); err != nil {
				return "", err
			}
		}
		return SecretString(ctx, sm, arn, what)
	}
	key := idc.SessionKey
	switch {
	case key != "":
	case idc.SessionKeySecretARN != "":
		var err error
		if key, err = secret(idc.SessionKeySecretARN, "session key"); err != nil {
			return err
		}
	case !d.Config.Deployed():
		var err error
		if key, err = localSessionKey(idc.SessionKeyFile); err != nil {
			return err
		}
	default:
		return nil
	}
	base := d.Config.PublicBaseURL
	if base == "" {
		base = "http://127.0.0.1:" + d.Config.Port
	}
	var err error
	if d.Sessions, err = identity.NewSessions([]byte(key), &identity.SessionOptions{Secure: strings.HasPrefix(base, "https://")}); err != nil {
		return fmt.Errorf("deps: session key: %w", err)
	}
	if idc.Issuer == "" {
		return nil
	}
	cs := idc.ClientSecret
	if cs == "" && idc.ClientSecretARN != "" {
		if cs, err = secret(idc.ClientSecretARN, "identity provider client secret"); err != nil {
			return err
		}
	}
	d.SignIn, err = identity.NewSignIn(identity.OIDCConfig{Issuer: idc.Issuer, ClientID: idc.ClientID, ClientSecret: cs,
		RedirectURL: base + identity.CallbackPath, Scopes: idc.Scopes, GroupsClaim: idc.GroupsClaim,
		TrustEmail: idc.TrustEmail}, d.Sessions, d.People, d.Logger)
	return err
}

// IdentityRoutes is the handler of the /auth/ routes: the identity provider's sign-in
// when one is configured, else the session's routes alone; nil without browser sessions.
func (d *Deps) IdentityRoutes() http.Handler {
	switch {
	case d.SignIn != nil:
		return d.SignIn.Handler()
	case d.Sessions != nil:
		return identity.SessionRoutes(d.Sessions, d.People)
	}
	return nil
}

// SecretString returns the secret arn's value: its SecretString, or its "client_secret" or
// "key" field when that is a JSON object holding one. what names it in errors (never the
// value).
func SecretString(ctx context.Context, sm dbsecret.SecretGetter, arn, what string) (string, error) {
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return "", fmt.Errorf("deps: read the %s secret: %w", what, err)
	}
	v := aws.ToString(out.SecretString)
	var obj map[string]any
	if json.Unmarshal([]byte(v), &obj) == nil {
		for _, k := range []string{"client_secret", "key"} {
			if s, ok := obj[k].(string); ok && s != "" {
				return s, nil
			}
		}
		return "", fmt.Errorf("deps: the %s secret is JSON without a client_secret or key field", what)
	}
	if v == "" {
		return "", fmt.Errorf("deps: the %s secret is empty", what)
	}
	return v, nil
}

// localSessionKey reads the local session key file, creating it (64 hex characters of
// 256 random bits, mode 0600) when it does not exist.
func localSessionKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if k := strings.TrimSpace(string(b)); len(k) >= identity.MinSessionKeyLen {
			return k, nil
		}
		return "", fmt.Errorf("deps: session key file %s holds fewer than 32 bytes", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("deps: session key file: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	k := hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("deps: session key file: %w", err)
	}
	if err := os.WriteFile(path, []byte(k+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("deps: session key file: %w", err)
	}
	return k, nil
}
