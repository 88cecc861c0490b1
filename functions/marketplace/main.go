// Command marketplace is the marketplace REST Lambda function (docs/DESIGN.md §2): the catalog
// under /api/mcp-marketplace, connections under /api/mcp-connections, the event log, and
// the admin console at /admin.
package main

import (
	"context"
	"net/http"

	"github.com/agentpack/gateway/functions/marketplace/api"
	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/lambdaapp"
)

func main() {
	deps.Main("marketplace", func(ctx context.Context, d *deps.Deps) error {
		if err := d.RequireVerifier(); err != nil {
			return err
		}
		a := &api.API{Pool: d.Pool, Services: d.Services, Verifier: d.Verifier, Logger: d.Logger,
			SignIn: d.IdentityRoutes()}
		cc := console.Config{OAuth: console.FromConfig(d.Config)}
		if d.SigningKey != nil && d.Sessions != nil {
			// The gateway's own authorization server (docs/AUTH.md): on with a signing key
			// (AUTH_SIGNING_KMS_KEY_ID) and the browser session (SESSION_KEY).
			as, err := authserver.New(authserver.Options{Pool: d.Pool, Key: d.SigningKey,
				Sessions: authserver.IdentitySessions{Sessions: d.Sessions}, Members: d.People, Guard: d.Guard,
				PublicBaseURL: d.Config.PublicBaseURL, SignInOrigin: d.SignIn.Origin(), Logger: d.Logger})
			if err != nil {
				return err
			}
			// TRUSTED_IDPS adds enterprise identity providers not in the list yet.
			if err := d.IDPs.Seed(ctx, d.Config.TrustedIDPs); err != nil {
				return err
			}
			a.AuthServer = as.Handler()
			// The console signs in through it and the REST API takes its tokens.
			a.Console = httpapi.Bearer{PublicBaseURL: d.Config.PublicBaseURL, Grants: d.Grants}
			cc.AuthServer = console.OwnAuthServer(d.Config.PublicBaseURL)
		}
		// The admin console beside the REST API, on the same origin.
		mux := http.NewServeMux()
		console.Mount(mux, cc)
		mux.Handle("/", a.Handler())
		// Test and refresh keep upstream sessions: end them (DELETE) when the process stops.
		return lambdaapp.Start(ctx, mux, "127.0.0.1:"+d.Config.Port, d.Logger, d.EndUpstreamSessions)
	})
}
