package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/config"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/oauth2-proxy/mockoidc"
)

// demoIdPEmail is the person `make run`'s identity provider signs in (mockoidc's default
// user), invited as an admin of the demo workspace until it first signs in.
const demoIdPEmail = "jane.doe@example.com"

// startDemoIdP plays the organisation's identity provider for `make run` when IDP_ISSUER is
// unset (docs/AUTH.md): mockoidc on 127.0.0.1:port, which signs in its default user at
// once (no login form). It points cfg.Identity at it and returns a stop function.
func startDemoIdP(cfg *config.Config, port string) (func(), error) {
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex // mockoidc's session store is a plain map
	if err := m.AddMiddleware(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return nil, fmt.Errorf("demo identity provider: %w (set IDP_DEMO_PORT)", err)
	}
	if err := m.Start(ln, nil); err != nil {
		ln.Close()
		return nil, err
	}
	cfg.Identity.Issuer, cfg.Identity.ClientID, cfg.Identity.ClientSecret = m.Issuer(), m.ClientID, m.ClientSecret
	cfg.Identity.Scopes = []string{"openid", "email", "profile", "groups"}
	cfg.Identity.GroupsClaim = "groups"
	return func() { _ = m.Shutdown() }, nil
}

// inviteDemoPerson invites demoIdPEmail as an admin of the demo workspace unless that
// person has signed in already (an admin may have changed their role since).
func inviteDemoPerson(ctx context.Context, d *deps.Deps) error {
	_, err := db.InvitationEnsure(ctx, d.Pool, demoWorkspace, demoIdPEmail, auth.RoleAdmin)
	return err
}

// devSession starts the browser session of a development principal (console.DevSession):
// the same session rule as a sign-in through the identity provider.
func devSession(d *deps.Deps) console.DevSession {
	if d.Sessions == nil {
		return nil
	}
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
		person, err := d.People.DevSignIn(r.Context(), p)
		if err != nil {
			return err
		}
		return d.Sessions.Set(w, person)
	}
}
