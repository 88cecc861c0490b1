// Command marketplace is the marketplace REST Lambda function (docs/DESIGN.md §2): the catalog
// under /api/mcp-marketplace, connections under /api/mcp-connections, the event log, and
// the admin console at /admin.
package main

import (
	"context"

	"github.com/agentpack/gateway/functions/marketplace/api"
	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/grants"
	"github.com/agentpack/gateway/shared/lambdaapp"
)

func main() {
	deps.Main("marketplace", func(ctx context.Context, d *deps.Deps) error {
		a := &api.API{Pool: d.Pool, Connections: d.Connections, Verifier: d.Verifier, Logger: d.Logger,
			Console: &console.Config{OAuth: console.FromConfig(d.Config)}, SignIn: d.IdentityRoutes()}
		if d.SigningKey != nil && d.Sessions != nil && d.People != nil {
			// The gateway's own authorization server (docs/AUTH.md): on with a signing key
			// (AUTH_SIGNING_KMS_KEY_ID) and the browser session (SESSION_KEY).
			as, err := authserver.New(authserver.Options{Pool: d.Pool, Key: d.SigningKey,
				Sessions: authserver.IdentitySessions{Sessions: d.Sessions}, Members: d.People, Guard: d.Guard,
				PublicBaseURL: d.Config.PublicBaseURL, Logger: d.Logger})
			if err != nil {
				return err
			}
			a.AuthServer, a.Grants = as.Handler(), &grants.Service{Pool: d.Pool}
		}
		// Test and refresh keep upstream sessions: end them (DELETE) when the process stops.
		return lambdaapp.Start(ctx, a.Handler(), "127.0.0.1:"+d.Config.Port, d.Logger, d.EndUpstreamSessions)
	})
}
