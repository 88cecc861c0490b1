package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/functions/healthcheck/health"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/config"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/jackc/pgx/v5"
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

func cmdMigrate(ctx context.Context) error {
	_, pool, err := openDB(ctx)
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
	return db.InTx(ctx, pool, func(tx pgx.Tx) error {
		if err := seed.Load(ctx, tx); err != nil {
			return err
		}
		return seedDemo(ctx, tx)
	})
}

// seedDemo creates the demo workspace with a default project and a chat.
func seedDemo(ctx context.Context, tx pgx.Tx) error {
	if err := db.WorkspaceUpsert(ctx, tx, demoWorkspace, "Demo workspace"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO projects (id, workspace_id, name) VALUES ($1, $2, 'Demo project')
		ON CONFLICT (id) DO NOTHING`, demoProject, demoWorkspace); err != nil {
		return db.Interpret(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE workspaces SET default_project_id = $2 WHERE id = $1`, demoWorkspace, demoProject); err != nil {
		return db.Interpret(err)
	}
	_, err := tx.Exec(ctx, `INSERT INTO chats (id, workspace_id, title) VALUES ($1, $2, 'Demo chat')
		ON CONFLICT (id) DO NOTHING`, demoChat, demoWorkspace)
	return db.Interpret(err)
}

func devTokens() (member, admin string, err error) {
	cfg, err := config.Load()
	if err != nil {
		return "", "", err
	}
	if cfg.JWTSecret == "" {
		return "", "", errors.New("tokens are minted with JWT_SECRET (HS256); none is configured")
	}
	ttl := 30 * 24 * time.Hour
	if member, err = auth.Mint(cfg.JWTSecret, auth.Principal{Subject: "dev-member", Role: auth.RoleMember, Workspaces: []string{demoWorkspace}}, ttl); err != nil {
		return "", "", err
	}
	admin, err = auth.Mint(cfg.JWTSecret, auth.Principal{Subject: "dev-admin", Role: auth.RoleAdmin, Workspaces: []string{demoWorkspace}}, ttl)
	return member, admin, err
}

func cmdToken(w io.Writer) error {
	member, admin, err := devTokens()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "workspace: %s\nmember token: %s\nadmin token:  %s\n", demoWorkspace, member, admin)
	return nil
}

func cmdServe(ctx context.Context) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	d, err := deps.Build(ctx, cfg, 8)
	if err != nil {
		return err
	}
	defer d.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	demoURL, stopDemo, err := startDemoUpstream(env("DEMO_UPSTREAM_PORT", "8090"))
	if err != nil {
		return err
	}
	defer stopDemo()

	st, err := stack.New(ctx, d, nil)
	if err != nil {
		return err
	}
	if err := ensureDemoConnection(ctx, d, demoURL); err != nil {
		return fmt.Errorf("demo connection: %w", err)
	}
	addr := "127.0.0.1:" + cfg.Port
	member, admin, _ := devTokens()
	base := "http://" + addr
	fmt.Printf(`
Agentpack MCP Gateway is running.

  MCP endpoint:   %[1]s/mcp/%[2]s
  REST API:       %[1]s/api/mcp-marketplace
  Demo upstream:  %[3]s (installed in the demo workspace as %[4]q)

  admin token:    %[5]s
  member token:   %[6]s

Try it:
  curl -s %[1]s/mcp/%[2]s -H 'Authorization: Bearer %[5]s' \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
  claude mcp add --transport http agentpack %[1]s/mcp/%[2]s --header "Authorization: Bearer %[5]s"
  npx @modelcontextprotocol/inspector   # Transport: Streamable HTTP, URL above, header Authorization: Bearer <admin token>

Ctrl-C stops the server.
`, base, demoWorkspace, demoURL, demoConnName, admin, member)
	return lambdaapp.Start(ctx, st.Handler, addr, d.Logger)
}

// startDemoUpstream serves the project's demo MCP server on 127.0.0.1:port.
func startDemoUpstream(port string) (string, func(), error) {
	h, err := testpeer.NewDemoHandler(testpeer.NewDemoServer(nil), testpeer.ModeStreamable)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return "", nil, fmt.Errorf("demo upstream: %w (set DEMO_UPSTREAM_PORT)", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/mcp", func() { _ = srv.Close() }, nil
}

// ensureDemoConnection makes the demo upstream a catalog entry (local data, never part
// of the curated seed) installed in the demo workspace, so that `make run` shows proxied
// tools at once and `make healthcheck` has an entry to check. An install whose URL no
// longer matches (another DEMO_UPSTREAM_PORT) is replaced; a current one is refreshed.
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
		if err := d.Connections.Uninstall(ctx, admin, entry.ID, demoWorkspace); err != nil {
			return err
		}
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

func env(k, def string) string {
	if v := strings.TrimSpace(os.Getenv(k)); v != "" {
		return v
	}
	return def
}

// cmdHealthcheck runs one health-check pass (DESIGN §9a) — what the EventBridge schedule
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
