package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/clientsetup"
	"github.com/agentpack/gateway/shared/config"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/registry"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/upstreamauth"
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

// demoHandle is the handle of the demo upstream's connection in the demo workspace (what
// its single-server URL names), "demoupstream" when it cannot be read.
func demoHandle(ctx context.Context, d *deps.Deps) string {
	rows, err := db.ConnectionList(ctx, d.Pool, db.ConnectionFilter{WorkspaceIDs: []string{demoWorkspace}})
	if err == nil {
		for _, c := range rows {
			if c.Name == demoConnName && c.Handle != "" {
				return c.Handle
			}
		}
	}
	return "demoupstream"
}

// oauthDemoState is where make run keeps the OAuth demo's authorization server (its
// signing key, client secret and sessions), so members' grants survive a restart.
const oauthDemoState = ".state/oauth-demo.json"

// localPorts are the environment variables of the ports serve binds, with their defaults,
// in the order bindPorts returns their listeners.
// IDP_DEMO_PORT, the demo identity provider's, comes last and only when it runs.
var localPorts = [][2]string{{"PORT", ""}, {"DEMO_UPSTREAM_PORT", "8090"}, {"OAUTH_DEMO_PORT", "8091"}, {"IDP_DEMO_PORT", "8092"}}

// bindPorts listens on 127.0.0.1 at PORT (port), DEMO_UPSTREAM_PORT, OAUTH_DEMO_PORT and,
// with demoIdP, IDP_DEMO_PORT, and returns the listeners in that order; on the first port
// taken it closes the others and says which variable to change.
func bindPorts(port string, demoIdP bool) ([]net.Listener, error) {
	var out []net.Listener
	for i, p := range localPorts {
		if i == 3 && !demoIdP {
			break
		}
		v := env(p[0], p[1])
		if p[0] == "PORT" {
			v = port
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+v)
		if err != nil {
			for _, l := range out {
				_ = l.Close()
			}
			return nil, fmt.Errorf("port %s (%s) is not free: %w (another make run? set %s to a free port)", v, p[0], err, p[0])
		}
		out = append(out, ln)
	}
	return out, nil
}

// cmdCheckPorts is `local check-ports`: bindPorts, then release them (scripts/run.sh runs
// it before migrating and seeding).
func cmdCheckPorts() error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	lns, err := bindPorts(cfg.Port, cfg.Identity.Issuer == "" && !cfg.Deployed())
	for _, l := range lns {
		_ = l.Close()
	}
	return err
}

// progress prints one "make run:" progress line (so that a cold start is not silent for
// minutes; the script prints the steps before this binary runs).
func progress(msg string) { fmt.Fprintln(os.Stderr, "make run: "+msg) }

// randomCode returns 128 random bits, hex-encoded: the development sign-in link's code.
func randomCode() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// banner is what `make run` prints once the stack is up. It leads with what to paste
// where: the MCP URL (the aggregate endpoint; the demo upstream's single-server endpoint
// beside it) and each client's URL-only set-up (shared/clientsetup.URLOnly: the client
// signs the person in through the gateway's authorization server), then the identity
// provider's sign-in line (idp; "" when there is none), then the console's links, the
// REST API, the demos, and last, under their own heading, the development tokens for
// clients without OAuth and for the REST API (each printed once; the commands read the
// admin token from $AGENTPACK_TOKEN), and where the console makes MCP-only tokens.
func banner(base, demoURL, oauthURL, code, demoHandle string, tok map[string]string, idp string) string {
	signIn := base + console.DevSignInPath + "?code=" + code + "&as="
	mcpURL := base + "/mcp/" + demoWorkspace
	var b strings.Builder
	fmt.Fprintf(&b, "\nAgentpack MCP Gateway is running on %s.\n\n", base)
	fmt.Fprintf(&b, "Connect an MCP client: paste the URL; the client signs you in by itself (OAuth).\n")
	fmt.Fprintf(&b, "  MCP URL:        %s   (every installed server's tools)\n", mcpURL)
	fmt.Fprintf(&b, "  One server:     %s/servers/%s   (only %q)\n", mcpURL, demoHandle, demoConnName)
	for _, c := range clientsetup.URLOnly(mcpURL, "") {
		label := c.Label
		if c.ID == "claude-desktop" {
			label = "Claude Desktop"
		}
		lines := strings.Split(c.Text, "\n")
		fmt.Fprintf(&b, "  %-15s %s\n", label+":", lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "  %-15s %s\n", "", l)
		}
	}
	if idp != "" {
		fmt.Fprintf(&b, "  Sign in with the identity provider: %s\n", idp)
	}
	fmt.Fprintf(&b, `
  Admin console:  %[2]s   (sign in as the demo admin; valid while this process runs)
                  member: %[3]s   superuser: %[4]s
  Client setup:   %[6]s/admin/#/setup (every client's set-up; MCP access tokens for header-only clients)
  REST API:       %[6]s/api/mcp-marketplace   (OpenAPI: %[6]s/api/openapi.json)
  Demo upstream:  %[7]s (installed in the demo workspace as %[8]q)
  OAuth demo:     %[13]s (catalog entry %[14]q, auth mode oauth_per_user; its
                  authorization server approves a demo user at once: Install it, then each
                  member connects their own account on the console's Authorizations page)
  Demo chat:      %[9]s

Clients without OAuth (a header) and the REST API: development tokens (valid 30 days;
make token prints them again; the console's Client setup makes MCP-only ones instead).
  export AGENTPACK_TOKEN=%[10]s   # admin
  member token:    %[11]s
  superuser token: %[12]s
  curl -s %[5]s -H "Authorization: Bearer $AGENTPACK_TOKEN" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
  npx @modelcontextprotocol/inspector --cli %[5]s --transport http --method tools/list --header "Authorization: Bearer $AGENTPACK_TOKEN"
  (MCP Inspector, Claude Code and mcp-remote need Node >= 22.)

Ctrl-C stops the server.
`, base, signIn+auth.RoleAdmin, signIn+auth.RoleMember, signIn+auth.RoleSuperuser, mcpURL, base, demoURL, demoConnName,
		demoChat, tok[auth.RoleAdmin], tok[auth.RoleMember], tok[auth.RoleSuperuser],
		oauthURL, seed.OAuthDemoName)
	return b.String()
}

// startDemoUpstream serves the project's demo MCP server on ln.
func startDemoUpstream(ln net.Listener) (string, func()) {
	h, err := demoupstream.NewHandler(demoupstream.NewServer(nil), demoupstream.ModeStreamable)
	if err != nil {
		panic(err) // ModeStreamable is a known mode
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/mcp", func() { _ = srv.Close() }
}

// ensureDemoConnection makes the demo upstream a catalog entry (local data, never part
// of the curated catalog) installed in the demo workspace, so that `make run` shows proxied
// tools at once and `make healthcheck` has an entry to check. An install whose URL no
// longer matches (another DEMO_UPSTREAM_PORT) is pointed at the new URL in place (same id,
// name and settings; never uninstalled); a current one is refreshed.
func ensureDemoConnection(ctx context.Context, d *deps.Deps, url string) error {
	admin := &auth.Principal{Subject: "make-run", Role: auth.RoleAdmin, Workspaces: []string{demoWorkspace}}
	if err := db.CatalogEntryUpsertSeed(ctx, d.Pool, &db.CatalogSeedEntry{
		Name: demoConnName, URL: url, TransportType: "streamable-http", Category: "demo", Author: "agentpack",
		Version: "local", VerificationTier: "unverified",
		Description: "The project's own demo MCP server (echo, add, slow, big, fail), served by make run on loopback. Local development only.",
	}); err != nil {
		return err
	}
	entry, err := db.CatalogEntryGetByName(ctx, d.Pool, demoConnName)
	if err != nil {
		return err
	}
	rows, err := db.ConnectionList(ctx, d.Pool, db.ConnectionFilter{WorkspaceIDs: []string{demoWorkspace}})
	if err != nil {
		return err
	}
	for i := range rows {
		c := &rows[i]
		if c.Source != "marketplace" || c.CatalogEntryID == nil || *c.CatalogEntryID != entry.ID {
			continue
		}
		if c.URL == url {
			if _, err := d.Connections.Refresh(ctx, admin.Subject, c); err != nil {
				return err
			}
			// Always rewrite the document: .state/catalog may have been deleted while the
			// database was kept.
			return catalog.Rebuild(ctx, d.Pool, d.Store, []string{demoWorkspace})
		}
		_, err := d.Connections.Update(ctx, admin, c.ID, connections.UpdateInput{URL: &url})
		return err
	}
	out, err := d.Connections.Install(ctx, admin, entry.ID, connections.InstallInput{WorkspaceID: demoWorkspace})
	if err != nil {
		return err
	}
	if out.Connect != nil && !out.Connect.OK {
		return fmt.Errorf("connect: %s", out.Connect.Error)
	}
	return nil
}

// ensureOAuthDemo seeds the OAuth demo entry (seed.LoadOAuthDemo) for p, with p's client as
// the entry's pre-registered client. Installs of it whose URL no longer matches (another
// OAUTH_DEMO_PORT) are pointed at the new URL in place, as ensureDemoConnection does: the
// seed never uninstalls what a user installed, and members' grants stay (a grant the moved
// server refuses answers its consent link on the next call). Without upstream
// authorization configured it does nothing.
func ensureOAuthDemo(ctx context.Context, d *deps.Deps, p *demoupstream.Protected) error {
	if d.Connections.AuthClientPut == nil {
		progress("upstream authorization is not configured: the OAuth demo entry is not seeded")
		return nil
	}
	entry, err := seed.LoadOAuthDemo(ctx, d.Pool, p.MCPURL(), &upstreamauth.Client{ClientID: demoupstream.ProtectedClientID,
		ClientSecret: p.ClientSecret(), TokenEndpointAuth: upstreamauth.AuthClientSecretPost, Issuer: p.Issuer()},
		d.Connections.AuthClientPut)
	if err != nil {
		return err
	}
	rows, err := db.ConnectionList(ctx, d.Pool, db.ConnectionFilter{WorkspaceIDs: []string{demoWorkspace}})
	if err != nil {
		return err
	}
	admin := &auth.Principal{Subject: "make-run", Role: auth.RoleAdmin, Workspaces: []string{demoWorkspace}}
	for i := range rows {
		c := &rows[i]
		if c.Source == "marketplace" && c.CatalogEntryID != nil && *c.CatalogEntryID == entry && c.URL != p.MCPURL() {
			u := p.MCPURL()
			if _, err := d.Connections.Update(ctx, admin, c.ID, connections.UpdateInput{URL: &u}); err != nil {
				return err
			}
		}
	}
	return nil
}

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
