package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/functions/healthcheck/health"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/config"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/registry"
	"github.com/agentpack/gateway/shared/seed"
)

// The demo workspace, project and chat that `seed` creates (fixed ids so that tokens and
// URLs printed once keep working).
const (
	demoWorkspace = "0a9e2f54-1c2b-4c1e-9f4a-6d0c8a1b2c3d"
	demoProject   = "5b7c3d12-8e4f-4a6b-9c0d-1e2f3a4b5c6d"
	demoChat      = "c4a8e1f0-2b3d-4e5f-8a9b-0c1d2e3f4a5b"
	demoConnName  = "Demo upstream"
)

func openDB(ctx context.Context) (*config.Config, *db.Pool, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, nil, err
	}
	if cfg.DatabaseURL == "" {
		return nil, nil, errors.New("DATABASE_URL is not set (make run sets it)")
	}
	pool, err := db.Open(ctx, cfg.DatabaseURL, 4)
	return cfg, pool, err
}

// cmdMigrate applies the migrations through DATABASE_MIGRATE_URL (default DATABASE_URL):
// the database itself, never a transaction pooler, since goose's lock is a session
// advisory lock (docs/DATABASE.md).
func cmdMigrate(ctx context.Context) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if cfg.DatabaseMigrateURL == "" {
		return errors.New("DATABASE_MIGRATE_URL or DATABASE_URL is not set (make run sets it)")
	}
	pool, err := db.Open(ctx, cfg.DatabaseMigrateURL, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	return db.Migrate(ctx, pool)
}

func cmdSeed(ctx context.Context) error {
	_, pool, err := openDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	return db.InTx(ctx, pool, func(tx db.Tx) error {
		if err := seed.Load(ctx, tx); err != nil {
			return err
		}
		return seedDemo(ctx, tx)
	})
}

// seedDemo creates the demo workspace with a default project and a chat.
func seedDemo(ctx context.Context, tx db.Tx) error {
	if err := db.WorkspaceUpsert(ctx, tx, demoWorkspace, "Demo workspace"); err != nil {
		return err
	}
	if err := db.ProjectEnsure(ctx, tx, demoProject, demoWorkspace, "Demo project"); err != nil {
		return err
	}
	if err := db.WorkspaceSetDefaultProject(ctx, tx, demoWorkspace, demoProject); err != nil {
		return err
	}
	return db.ChatEnsure(ctx, tx, demoChat, demoWorkspace, "Demo chat")
}

// devPrincipals are the demo workspace's local principals, by role: what `make token`
// prints and what the console's development sign-in link signs in as.
func devPrincipals() map[string]auth.Principal {
	ws := []string{demoWorkspace}
	return map[string]auth.Principal{
		auth.RoleMember:    {Subject: "dev-member", Role: auth.RoleMember, Workspaces: ws},
		auth.RoleAdmin:     {Subject: "dev-admin", Role: auth.RoleAdmin, Workspaces: ws},
		auth.RoleSuperuser: {Subject: "dev-superuser", Role: auth.RoleSuperuser, Workspaces: ws},
	}
}

// devTokenTTL is how long a development token lives.
const devTokenTTL = 30 * 24 * time.Hour

// devTokens mints a token per role of devPrincipals with JWT_SECRET (or the dev secret).
func devTokens() (map[string]string, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, err
	}
	if cfg.JWTSecret == "" {
		return nil, errors.New("tokens are minted with JWT_SECRET (HS256); none is configured")
	}
	out := map[string]string{}
	for role, p := range devPrincipals() {
		if out[role], err = auth.Mint(cfg.JWTSecret, p, devTokenTTL); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func cmdToken(w io.Writer) error {
	t, err := devTokens()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "workspace: %s\nmember token:    %s\nadmin token:     %s\nsuperuser token: %s (catalog editing)\n",
		demoWorkspace, t[auth.RoleMember], t[auth.RoleAdmin], t[auth.RoleSuperuser])
	return nil
}

func cmdServe(ctx context.Context) error {
	gateway.TuneRuntime() // the deployed function's GC settings, so local numbers match
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	// Every port is bound before anything touches the database: a second make run whose
	// ports are taken stops here, leaving the running one's connections as they are.
	demoIdP := cfg.Identity.Issuer == "" && !cfg.Deployed()
	lns, err := bindPorts(cfg.Port, demoIdP)
	if err != nil {
		return err
	}
	appLn := lns[0]
	defer func() { _ = appLn.Close() }()
	if demoIdP {
		stopIdP, err := startDemoIdP(cfg, lns[3])
		if err != nil {
			return err
		}
		defer stopIdP()
	}
	d, err := deps.Build(ctx, cfg, 8)
	if err != nil {
		return err
	}
	defer d.Close()
	if !cfg.Deployed() {
		db.SetLocalCluster(localCluster(cfg.DatabaseURL))
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	demoURL, stopDemo := startDemoUpstream(lns[1])
	defer stopDemo()

	protected, err := demoupstream.StartProtected("", &demoupstream.ProtectedOptions{Listener: lns[2], StateFile: oauthDemoState})
	if err != nil {
		return fmt.Errorf("OAuth demo upstream: %w", err)
	}
	defer protected.Close()

	code, err := randomCode()
	if err != nil {
		return err
	}
	signIn, err := console.DevSignInSession(cfg.Env, cfg.JWTSecret, code, 12*time.Hour, devPrincipals(), devSession(d))
	if err != nil {
		return err
	}
	progress("starting the gateway, the console, the demo upstream and the OAuth demo upstream")
	st, err := stack.New(ctx, d, &stack.Options{DevSignIn: signIn})
	if err != nil {
		return err
	}
	if err := ensureDemoConnection(ctx, d, demoURL); err != nil {
		return fmt.Errorf("demo connection: %w", err)
	}
	if err := ensureOAuthDemo(ctx, d, protected); err != nil {
		return fmt.Errorf("OAuth demo entry: %w", err)
	}
	if demoIdP {
		if err := inviteDemoPerson(ctx, d); err != nil {
			return fmt.Errorf("demo identity provider's person: %w", err)
		}
	}
	addr := "127.0.0.1:" + cfg.Port
	tok, _ := devTokens()
	idp := ""
	if cfg.Identity.Issuer != "" {
		// The console's own sign-in link: it signs in through the gateway's authorization
		// server, which sends the browser to the identity provider (docs/AUTH.md "The console").
		idp = "http://" + addr + console.SignInLink
		if demoIdP {
			idp += "\n                  (the demo identity provider, mockoidc at " + cfg.Identity.Issuer + ", signs in " + demoIdPEmail +
				",\n                  invited as an admin of the demo workspace)"
		}
	}
	fmt.Print(banner("http://"+addr, demoURL, protected.MCPURL(), code, demoHandle(ctx, d), tok, idp))
	progress("listening on http://" + addr)
	said := make(chan struct{})
	go func() {
		defer close(said)
		<-ctx.Done()
		progress("stopping: finishing requests in flight and ending upstream sessions")
	}()
	_ = appLn.Close() // lambdaapp.Start listens again, at once
	err = lambdaapp.Start(ctx, st.Handler, addr, d.Logger, d.EndUpstreamSessions, st.Gateway.CloseAudit)
	if err == nil {
		// Start returns once the signal ended ctx: "stopping" is printed first (bounded, in
		// case Start returned for another reason). scripts/run.sh prints "stopped".
		select {
		case <-said:
		case <-time.After(time.Second):
		}
	}
	return err
}

// oauthDemoState is where make run keeps the OAuth demo's authorization server (its
// signing key, client secret and sessions), so members' grants survive a restart.
const oauthDemoState = ".state/oauth-demo.json"

func env(k, def string) string {
	if v := strings.TrimSpace(os.Getenv(k)); v != "" {
		return v
	}
	return def
}

// cmdHealthcheck runs one health-check pass (docs/DESIGN.md §9a) — what the EventBridge schedule
// triggers in AWS — and prints its summary as JSON.
func cmdHealthcheck(ctx context.Context) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	d, err := deps.Build(ctx, cfg, 4)
	if err != nil {
		return err
	}
	defer d.Close()
	s, err := health.New(health.Options{Pool: d.Pool, Pinger: d.Upstreams, Logger: d.Logger, Metrics: os.Stdout,
		Target: func(ctx context.Context, c *db.Connection) mcpclient.Target {
			return d.Connections.TargetFor(ctx, c, c.CreatedBy)
		},
		Refresh: func(ctx context.Context, c *db.Connection) error {
			_, err := d.Connections.RefreshAndPublish(ctx, connections.HealthCheckActor, c)
			return err
		}}).Run(ctx)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// cmdImportRegistry is `local import-registry URL|FILE`: imports an MCP registry (its
// base URL, read through the v0.1 list API) or a file of its documents into the catalog
// as a superuser (docs/REGISTRY.md), and prints the report as JSON.
func cmdImportRegistry(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: local import-registry URL|FILE")
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	d, err := deps.Build(ctx, cfg, 2)
	if err != nil {
		return err
	}
	defer d.Close()
	im := d.Registry
	su := &auth.Principal{Subject: "local-import", Role: auth.RoleSuperuser}
	var rep *registry.Report
	if src := args[0]; strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		rep, err = im.FromURL(ctx, su, src)
	} else {
		raw, rerr := os.ReadFile(src)
		if rerr != nil {
			return rerr
		}
		rep, err = im.FromFile(ctx, su, "file:"+filepath.Base(src), raw)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// localCluster is the host:port of databaseURL when it names a loopback host (the local
// cluster of scripts/pg.sh, or another local Postgres), else "" (db.SetLocalCluster).
func localCluster(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	h := u.Hostname()
	if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(h, port)
}
