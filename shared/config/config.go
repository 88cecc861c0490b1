// Package config loads the settings every function shares from the environment.
//
// Variables (all optional unless noted): APP_ENV (local|deployed, default local),
// DATABASE_URL, DATABASE_MIGRATE_URL (the database itself, not its pooler, for migrations;
// default DATABASE_URL), JWT_SECRET (HS256), JWT_JWKS_URL, JWT_ISSUER, JWT_AUDIENCE,
// AUTH_SERVER_URL, PUBLIC_BASE_URL, CATALOG_BUCKET (S3; empty → disk store in CATALOG_DIR),
// CATALOG_DIR (default .state/catalog), CATALOG_TTL (Go duration, default 5s),
// ALLOW_PRIVATE_UPSTREAMS (bool; default true locally, false when deployed),
// NEW_TOOLS_NEED_APPROVAL (bool, default false), LOG_LEVEL,
// ALLOWED_ORIGINS (comma list of browser origins allowed to call /mcp), PORT (local, 8080),
// and the admin console's OAuth sign-in: CONSOLE_OAUTH_CLIENT_ID, CONSOLE_OAUTH_AUTHORIZE_URL,
// CONSOLE_OAUTH_TOKEN_URL (https when deployed), CONSOLE_OAUTH_SCOPE, CONSOLE_OAUTH_AUDIENCE.
// UPSTREAM_AUTH_KMS_KEY_ID (the KMS key sealing upstream OAuth tokens; deployed) and
// UPSTREAM_AUTH_KEY_FILE (the local key file instead, default .state/upstream-auth.key).
// AUTH_SIGNING_KMS_KEY_ID (the KMS RSA key signing the access tokens of the gateway's own
// authorization server; deployed) and AUTH_SIGNING_KEY_FILE (the local PEM key instead,
// default .state/auth-signing.key); docs/AUTH.md.
// The identity provider and the session key: IDP_* and SESSION_KEY* (Identity).
package config

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is the loaded configuration. Zero values mean "not configured".
type Config struct {
	Env         string // "local" or "deployed"
	DatabaseURL string
	// DatabaseMigrateURL is DATABASE_MIGRATE_URL: where migrations go, the database itself
	// rather than a transaction pooler or RDS Proxy (goose holds a session advisory lock for
	// the run; docs/DATABASE.md). Load sets it to DatabaseURL when unset.
	DatabaseMigrateURL string
	JWTSecret          string
	JWKSURL            string
	JWTIssuer          string
	JWTAudience        string
	AuthServerURL      string
	// TrustedIDPs (TRUSTED_IDPS) seeds the trusted enterprise identity providers: a JSON
	// array of {"issuer", "jwksUrl", "allowedClientIds", "linkByEmail", "enabled"}
	// (shared/idp.Seed; docs/AUTH.md "The enterprise path").
	TrustedIDPs           string
	PublicBaseURL         string
	CatalogBucket         string
	CatalogDir            string
	CatalogTTL            time.Duration
	AllowPrivateUpstreams bool
	// NewToolsNeedApproval holds every tool that appears on a connection's refresh (the
	// first listing included) as pending until an admin approves it, like a drifted one
	// (NEW_TOOLS_NEED_APPROVAL; connections.Service.NewToolsNeedApproval).
	NewToolsNeedApproval bool
	AllowedOrigins       []string
	LogLevel             string
	Port                 string
	// DatabasePoolSize is DATABASE_POOL_SIZE: the most Postgres connections the process
	// keeps (1–100); 0 (unset) leaves the choice to the function (PoolSize).
	DatabasePoolSize int
	// UpstreamAuthKMSKeyID is the KMS key (id, ARN or alias) that seals upstream OAuth
	// tokens (docs/UPSTREAM-AUTH.md); "" uses UpstreamAuthKeyFile instead (local only).
	UpstreamAuthKMSKeyID string
	UpstreamAuthKeyFile  string
	// AuthSigningKMSKeyID is the KMS key (RSA, SIGN_VERIFY) that signs the access tokens
	// of the gateway's own authorization server (docs/AUTH.md); "" uses AuthSigningKeyFile
	// instead (local only). Deployed without it, the authorization server is off.
	AuthSigningKMSKeyID string
	AuthSigningKeyFile  string
	// UnauthenticatedLocal serves the gateway without a token as a fixed local admin; only
	// honoured when Env is "local" (conformance runner, which cannot send headers).
	UnauthenticatedLocal bool
	// Console* configure the admin console's OAuth 2.1 + PKCE sign-in (a public client of
	// the identity provider that issues the JWTs); empty ClientID means no OAuth sign-in.
	ConsoleClientID     string
	ConsoleAuthorizeURL string
	ConsoleTokenURL     string
	ConsoleScope        string
	ConsoleAudience     string
	// Identity is the sign-in through the organisation's identity provider and the
	// browser session (identity.go).
	Identity Identity
}

// Deployed reports whether the process runs in deployed (production) mode, which turns
// on the strict upstream URL guard (docs/DESIGN.md §9).
func (c *Config) Deployed() bool { return c.Env == "deployed" }

// Load reads the environment. It returns an error naming the variable when a value is
// malformed (a bad duration or boolean) or when APP_ENV is neither local nor deployed.
func Load() (*Config, error) {
	c := &Config{
		Env:                env("APP_ENV", "local"),
		DatabaseURL:        os.Getenv("DATABASE_URL"),
		DatabaseMigrateURL: env("DATABASE_MIGRATE_URL", os.Getenv("DATABASE_URL")),
		JWTSecret:          os.Getenv("JWT_SECRET"),
		JWKSURL:            os.Getenv("JWT_JWKS_URL"),
		JWTIssuer:          os.Getenv("JWT_ISSUER"),
		JWTAudience:        os.Getenv("JWT_AUDIENCE"),
		AuthServerURL:      os.Getenv("AUTH_SERVER_URL"),
		TrustedIDPs:        os.Getenv("TRUSTED_IDPS"),
		PublicBaseURL:      strings.TrimRight(os.Getenv("PUBLIC_BASE_URL"), "/"),
		CatalogBucket:      os.Getenv("CATALOG_BUCKET"),
		CatalogDir:         env("CATALOG_DIR", ".state/catalog"),
		LogLevel:           env("LOG_LEVEL", "info"),
		Port:               env("PORT", "8080"),

		ConsoleClientID:      os.Getenv("CONSOLE_OAUTH_CLIENT_ID"),
		ConsoleAuthorizeURL:  os.Getenv("CONSOLE_OAUTH_AUTHORIZE_URL"),
		ConsoleTokenURL:      os.Getenv("CONSOLE_OAUTH_TOKEN_URL"),
		ConsoleScope:         os.Getenv("CONSOLE_OAUTH_SCOPE"),
		ConsoleAudience:      os.Getenv("CONSOLE_OAUTH_AUDIENCE"),
		UpstreamAuthKMSKeyID: os.Getenv("UPSTREAM_AUTH_KMS_KEY_ID"),
		UpstreamAuthKeyFile:  env("UPSTREAM_AUTH_KEY_FILE", ".state/upstream-auth.key"),
		AuthSigningKMSKeyID:  os.Getenv("AUTH_SIGNING_KMS_KEY_ID"),
		AuthSigningKeyFile:   env("AUTH_SIGNING_KEY_FILE", ".state/auth-signing.key"),
	}
	if c.Env != "local" && c.Env != "deployed" {
		return nil, fmt.Errorf("config: APP_ENV must be local or deployed, got %q", c.Env)
	}
	var err error
	if c.CatalogTTL, err = time.ParseDuration(env("CATALOG_TTL", "5s")); err != nil {
		return nil, fmt.Errorf("config: CATALOG_TTL: %w", err)
	}
	if c.AllowPrivateUpstreams, err = boolEnv("ALLOW_PRIVATE_UPSTREAMS", !c.Deployed()); err != nil {
		return nil, err
	}
	if c.NewToolsNeedApproval, err = boolEnv("NEW_TOOLS_NEED_APPROVAL", false); err != nil {
		return nil, err
	}
	if c.UnauthenticatedLocal, err = boolEnv("MCP_UNAUTHENTICATED_LOCAL", false); err != nil {
		return nil, err
	}
	if c.UnauthenticatedLocal && c.Deployed() {
		return nil, fmt.Errorf("config: MCP_UNAUTHENTICATED_LOCAL cannot be enabled when APP_ENV=deployed")
	}
	if err := c.checkConsole(); err != nil {
		return nil, err
	}
	if err := c.loadIdentity(); err != nil {
		return nil, err
	}
	if v := os.Getenv("DATABASE_POOL_SIZE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return nil, fmt.Errorf("config: DATABASE_POOL_SIZE must be an integer from 1 to 100, got %q", v)
		}
		c.DatabasePoolSize = n
	}
	for _, o := range strings.Split(os.Getenv("ALLOWED_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.AllowedOrigins = append(c.AllowedOrigins, o)
		}
	}
	// Deployed, JWT_SECRET and JWT_JWKS_URL are optional: the gateway's own authorization
	// server issues the tokens, verified with AUTH_SIGNING_KMS_KEY_ID's public key
	// (docs/AUTH.md, docs/DEPLOY.md). A function that verifies tokens and has none of the
	// three refuses to start (deps.Deps.RequireVerifier).
	if c.JWTSecret == "" && c.JWKSURL == "" && !c.Deployed() {
		c.JWTSecret = DevJWTSecret
	}
	return c, nil
}

// PoolSize is the Postgres pool size a function opens: DATABASE_POOL_SIZE when set, else
// def (the function's own default, sized for how many requests one instance serves at
// once: one under Lambda, docs/OPERATIONS.md "Runtime settings").
func (c *Config) PoolSize(def int) int {
	if c.DatabasePoolSize > 0 {
		return c.DatabasePoolSize
	}
	return def
}

// DevJWTSecret is the HS256 secret used locally when JWT_SECRET is unset. Never used when
// APP_ENV=deployed.
const DevJWTSecret = "agentpack-local-dev-secret-change-me"

// checkConsole requires the console's OAuth settings to be all set or all empty, and
// https endpoints when deployed.
func (c *Config) checkConsole() error {
	set := 0
	for _, v := range []string{c.ConsoleClientID, c.ConsoleAuthorizeURL, c.ConsoleTokenURL} {
		if v != "" {
			set++
		}
	}
	if set != 0 && set != 3 {
		return fmt.Errorf("config: CONSOLE_OAUTH_CLIENT_ID, CONSOLE_OAUTH_AUTHORIZE_URL and CONSOLE_OAUTH_TOKEN_URL go together")
	}
	for k, v := range map[string]string{"CONSOLE_OAUTH_AUTHORIZE_URL": c.ConsoleAuthorizeURL, "CONSOLE_OAUTH_TOKEN_URL": c.ConsoleTokenURL} {
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || u.Host == "" || (u.Scheme != "https" && (c.Deployed() || u.Scheme != "http")) {
			return fmt.Errorf("config: %s must be an absolute https URL", k)
		}
	}
	return nil
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func boolEnv(k string, def bool) (bool, error) {
	v := os.Getenv(k)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("config: %s: %w", k, err)
	}
	return b, nil
}
