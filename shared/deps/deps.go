// Package deps builds, from a config.Config, the dependencies every function wires the
// same way: logger, Postgres pool, catalog store, URL guard, upstream client pool, JWT
// verifier, and every domain service once (shared/services Services: connections, catalog
// entries, overrides, rate limits, policies, the registry importer, workspaces, pins,
// people, grants). Each function's main.go calls Build and hands what it needs to its own
// package; the local entry point builds once and serves all. Handlers and built-ins
// receive the services; only this package, cmd/ and the functions' main.go files
// construct one (test/rules/services_test.go), and only cmd/, the functions' main.go files
// and this package import it (test/rules/composition_test.go).
package deps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/budget"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/config"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbsecret"
	"github.com/agentpack/gateway/shared/identity"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/services"
	"github.com/agentpack/gateway/shared/signing"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/agentpack/gateway/shared/urlguard"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"
)

// Deps are the shared dependencies of a process. Close releases them.
type Deps struct {
	Config    *config.Config
	Logger    *slog.Logger
	Pool      *db.Pool
	Store     catalog.Store
	Guard     *urlguard.Guard
	Upstreams *mcpclient.Pool
	// Verifier checks bearer tokens; nil when nothing is configured to verify one with
	// (deployed with neither JWT_SECRET, JWT_JWKS_URL nor AUTH_SIGNING_KMS_KEY_ID: the
	// health-check function). Functions that serve bearer tokens call RequireVerifier.
	Verifier *auth.Verifier
	// Services are the domain services, built once by Build (services.NewServices).
	services.Services
	// Metrics receives shared EMF lines (catalog revalidation failures): os.Stdout from
	// Build, nil (discarded) when a test builds Deps itself.
	Metrics io.Writer

	telemetryShutdown func(context.Context) error
	// Auth is upstream authorization (nil when deployed without UPSTREAM_AUTH_KMS_KEY_ID).
	Auth *upstreamauth.Service
	// SigningKey signs (marketplace) and verifies (gateway) the access tokens of the
	// gateway's own authorization server; nil when deployed without
	// AUTH_SIGNING_KMS_KEY_ID (the server is then off).
	SigningKey *signing.Key
	// Sessions is the browser session rule (nil deployed without a session key); SignIn
	// the sign-in through the organisation's identity provider (nil without IDP_ISSUER).
	// buildIdentity. People (the memberships they rely on) is one of the Services.
	Sessions *identity.Sessions
	SignIn   *identity.SignIn
}

// Build connects everything cfg describes. maxConns bounds the pool (Lambda: 2).
func Build(ctx context.Context, cfg *config.Config, maxConns int32) (*Deps, error) {
	d := &Deps{Config: cfg, Logger: logx.New(os.Stdout, cfg.LogLevel), Metrics: os.Stdout}
	var err error
	// Tracing first: the pool takes its query tracer at construction.
	if d.telemetryShutdown, err = telemetry.Setup(ctx, serviceName()); err != nil {
		return nil, fmt.Errorf("deps: tracing: %w", err)
	}
	if cfg.DatabaseURL == "" {
		arn := os.Getenv("DATABASE_SECRET_ARN")
		if arn == "" {
			return nil, fmt.Errorf("deps: DATABASE_URL (or DATABASE_SECRET_ARN) is not set")
		}
		sm, err := newSecretsClient(ctx)
		if err != nil {
			return nil, err
		}
		if cfg.DatabaseURL, err = dbsecret.DatabaseURL(ctx, sm, arn); err != nil {
			return nil, err
		}
	}
	if d.Pool, err = db.Open(ctx, cfg.DatabaseURL, maxConns); err != nil {
		return nil, err
	}
	if d.Store, err = NewStore(ctx, cfg); err != nil {
		d.Pool.Close()
		return nil, err
	}
	d.Guard = urlguard.New(&urlguard.Options{AllowPrivate: cfg.AllowPrivateUpstreams, RequireHTTPS: cfg.Deployed()})
	d.Upstreams = mcpclient.New(&mcpclient.Options{Logger: d.Logger, Guard: d.Guard,
		MaxSessionBytes: budget.FromEnv().Sessions})
	if d.SigningKey, err = signingKey(ctx, cfg); err != nil {
		d.Close()
		return nil, err
	}
	vo := auth.Options{Secret: cfg.JWTSecret, JWKSURL: cfg.JWKSURL, Issuer: cfg.JWTIssuer, Audience: cfg.JWTAudience}
	if d.SigningKey != nil {
		vo.Issued = &auth.IssuedKey{KeyID: d.SigningKey.ID(), Key: d.SigningKey.Public(), Issuer: cfg.PublicBaseURL}
	}
	if vo.Secret != "" || vo.JWKSURL != "" || vo.Issued != nil {
		if d.Verifier, err = auth.NewVerifier(ctx, vo); err != nil {
			d.Close()
			return nil, err
		}
	}
	d.Services = services.NewServices(d.Pool, &connections.Service{Pool: d.Pool, Store: d.Store, Upstreams: d.Upstreams,
		Guard: d.Guard, Logger: d.Logger, NewToolsNeedApproval: cfg.NewToolsNeedApproval}, d.Guard, d.Logger)
	d.Grants.Key = d.SigningKey // MCP access tokens are the authorization server's (shared/grants)
	if err := d.buildAuth(ctx); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.buildIdentity(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// RequireVerifier returns an error naming the settings when d has no token verifier: a
// function that serves bearer tokens refuses to start without one.
func (d *Deps) RequireVerifier() error {
	if d.Verifier == nil {
		return errors.New("deps: no way to verify bearer tokens: set AUTH_SIGNING_KMS_KEY_ID (the stack does), JWT_JWKS_URL or JWT_SECRET")
	}
	return nil
}

// signingKey is the authorization server's key: KMS when AUTH_SIGNING_KMS_KEY_ID is set
// (kms:GetPublicKey here, kms:Sign per token), else locally the key file (created on first
// use); deployed without a KMS key, nil.
func signingKey(ctx context.Context, cfg *config.Config) (*signing.Key, error) {
	switch {
	case cfg.AuthSigningKMSKeyID != "":
		ac, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("deps: aws config: %w", err)
		}
		return signing.NewKMS(ctx, kms.NewFromConfig(ac), cfg.AuthSigningKMSKeyID)
	case cfg.Deployed():
		return nil, nil
	}
	return signing.LoadFile(cfg.AuthSigningKeyFile)
}

// NewStore returns the catalog store cfg selects: S3 when CATALOG_BUCKET is set, else a
// directory on disk (CATALOG_DIR).
func NewStore(ctx context.Context, cfg *config.Config) (catalog.Store, error) {
	if cfg.CatalogBucket != "" {
		return catalog.NewS3Store(ctx, cfg.CatalogBucket)
	}
	return &catalog.DiskStore{Dir: cfg.CatalogDir}, nil
}

// serviceName is the OpenTelemetry service.name (OTEL_SERVICE_NAME overrides it): the
// Lambda function's name in AWS, "agentpack" locally.
func serviceName() string {
	if fn := os.Getenv("AWS_LAMBDA_FUNCTION_NAME"); fn != "" {
		return fn
	}
	return "agentpack"
}

// Close releases the pool and upstream sessions, and flushes pending trace spans.
func (d *Deps) Close() {
	if d.telemetryShutdown != nil {
		ctx, cancel := context.WithTimeout(context.Background(), telemetry.FlushTimeout)
		_ = d.telemetryShutdown(ctx)
		cancel()
	}
	if d.Upstreams != nil {
		_ = d.Upstreams.Close()
	}
	if d.Pool != nil {
		d.Pool.Close()
	}
}

// EndUpstreamSessions ends the upstream MCP sessions this process opened — an HTTP DELETE
// with its Mcp-Session-Id to each stateful upstream (mcpclient.Pool.Close) — for use as a
// lambdaapp.Start shutdown hook. Later upstream calls fail with UPSTREAM_UNAVAILABLE.
func (d *Deps) EndUpstreamSessions(context.Context) {
	if d.Upstreams != nil {
		_ = d.Upstreams.Close()
	}
}

// CatalogCache returns a gateway-side catalog cache over d.Store (TTL CATALOG_TTL) that
// builds a workspace's document from Postgres when the store has none yet (docs/DESIGN.md §6: a
// workspace created after the last rebuild still sees the global connections), holding at
// most budget.FromEnv().Catalog bytes of snapshots (a share of the function's memory).
func (d *Deps) CatalogCache() *catalog.Cache {
	c := catalog.NewCache(d.Store, d.Config.CatalogTTL, d.Logger)
	c.SetMaxBytes(budget.FromEnv().Catalog)
	c.Metrics = d.Metrics
	c.Missing = func(ctx context.Context, ws string) (*catalog.Document, error) {
		return catalog.Build(ctx, d.Pool, ws)
	}
	return c
}
