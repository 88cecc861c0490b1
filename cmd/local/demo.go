package main

// The demo upstreams: the demo-upstream command, and serve's demo connection and OAuth demo
// entry in the demo workspace.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/upstreamauth"
)

// cmdDemoUpstream serves only the demo upstream MCP server (stateless streamable HTTP,
// JSON responses) on 127.0.0.1:$DEMO_UPSTREAM_PORT until SIGINT/SIGTERM — the benchmark's
// upstream, run as its own process.
func cmdDemoUpstream(ctx context.Context) error {
	ln, err := net.Listen("tcp", "127.0.0.1:"+env("DEMO_UPSTREAM_PORT", "8090"))
	if err != nil {
		return fmt.Errorf("demo upstream: %w (set DEMO_UPSTREAM_PORT)", err)
	}
	url, stop := startDemoUpstream(ln)
	defer stop()
	fmt.Println(url)
	ctx, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()
	<-ctx.Done()
	return nil
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
