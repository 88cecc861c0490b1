// Package stack composes every function's HTTP handler on one mux, the way API Gateway
// routes them in AWS (template.yaml): the local entry point serves it, and end-to-end
// tests run it on a loopback port.
package stack

import (
	"context"
	"io"
	"net/http"

	"github.com/agentpack/gateway/functions/marketplace/api"
	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/functions/mcp/gateway"
	pinsapi "github.com/agentpack/gateway/functions/pins/api"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/httpapi"
)

// Stack is the composed application.
type Stack struct {
	Gateway *gateway.Gateway
	Catalog *catalog.Cache
	Handler http.Handler
}

// Options tweak the composition (nil = defaults).
type Options struct {
	// Metrics receives the gateway's EMF lines (nil = discarded).
	Metrics io.Writer
	// Gateway, when set, edits the gateway options before the gateway is built.
	Gateway func(*gateway.Options)
	// DevSignIn, when set, is mounted at console.DevSignInPath (cmd/local's development
	// sign-in link; console.DevSignIn refuses to build one when APP_ENV=deployed).
	DevSignIn http.Handler
	// Identity, when set (and the deps hold a signing key), turns on the gateway's own
	// authorization server (functions/marketplace/authserver, docs/AUTH.md): the browser
	// session and the memberships it relies on. Nil uses the deps' (d.Sessions, d.People)
	// when they are built.
	Identity *Identity
	// AuthServer, when set, edits the authorization server's options before it is built.
	AuthServer func(*authserver.Options)
}

// Identity is what the authorization server needs of the identity half.
type Identity struct {
	Sessions authserver.Sessions
	Members  authserver.Members
}

// New builds the stack on d. Catalog changes made through d.Connections are visible to
// the gateway at once (its cache entry is invalidated), as they would be within
// CATALOG_TTL in AWS.
func New(ctx context.Context, d *deps.Deps, o *Options) (*Stack, error) {
	if o == nil {
		o = &Options{}
	}
	metrics := o.Metrics
	if metrics == nil {
		metrics = io.Discard
	}
	gopts := gateway.Options{
		Pool: d.Pool, Catalog: d.CatalogCache(), Upstreams: d.Upstreams, Verifier: d.Verifier,
		Services: d.Services, Logger: d.Logger, Metrics: metrics,
		PublicBaseURL: d.Config.PublicBaseURL, AuthServerURL: d.Config.AuthServerURL,
		AllowedOrigins: d.Config.AllowedOrigins,
	}
	if d.Config.UnauthenticatedLocal && !d.Config.Deployed() { // config refuses it deployed, too
		gopts.UnauthenticatedPrincipal = &auth.Principal{Subject: "local-unauthenticated", Role: auth.RoleAdmin}
	}
	id := o.Identity
	if id == nil && d.Sessions != nil && d.People != nil {
		// make run: the identity half's session rule and memberships (shared/identity).
		id = &Identity{Sessions: authserver.IdentitySessions{Sessions: d.Sessions}, Members: d.People}
	}
	var as *authserver.Server
	if id != nil && d.SigningKey != nil {
		ao := authserver.Options{Pool: d.Pool, Key: d.SigningKey, Sessions: id.Sessions,
			Members: id.Members, Guard: d.Guard, PublicBaseURL: d.Config.PublicBaseURL, Logger: d.Logger,
			SignInOrigin: d.SignIn.Origin()}
		if o.AuthServer != nil {
			o.AuthServer(&ao)
		}
		var err error
		if as, err = authserver.New(ao); err != nil {
			return nil, err
		}
		if err := d.IDPs.Seed(ctx, d.Config.TrustedIDPs); err != nil {
			return nil, err
		}
		gopts.OwnAuthServer = true
	}
	if o.Gateway != nil {
		o.Gateway(&gopts)
	}
	cache := gopts.Catalog
	// Every service that rebuilds documents (connections, overrides, policies) invalidates
	// the in-process gateway cache.
	d.SetOnCatalogChange(func(ws []string) { invalidate(ctx, d.Pool, cache, ws) })
	g, err := gateway.New(gopts)
	if err != nil {
		return nil, err
	}
	market := &api.API{Pool: d.Pool, Services: d.Services, Verifier: d.Verifier, Logger: d.Logger,
		SignIn: d.IdentityRoutes()}
	cc := console.Config{OAuth: console.FromConfig(d.Config), DevSignIn: o.DevSignIn != nil}
	var bearer httpapi.Bearer
	if as != nil {
		market.AuthServer = as.Handler()
		// The console signs in through the authorization server; the REST APIs take its
		// tokens (docs/AUTH.md "The console").
		bearer = httpapi.Bearer{PublicBaseURL: d.Config.PublicBaseURL, Grants: d.Grants}
		market.Console = bearer
		cc.AuthServer = console.OwnAuthServer(d.Config.PublicBaseURL)
	}
	mux := http.NewServeMux()
	console.Mount(mux, cc)
	gh, mh := g.Handler(), market.Handler()
	if as != nil {
		for _, p := range api.AuthServerPaths {
			mux.Handle(p, mh)
		}
	}
	for _, p := range []string{"/mcp", "/mcp/", "/.well-known/", "/health"} {
		mux.Handle(p, gh)
	}
	for _, p := range []string{"/api/mcp-marketplace", "/api/mcp-marketplace/", "/api/mcp-connections", "/api/mcp-connections/", "/api/openapi.json", "/api/events", "/api/oauth/", "/api/rate-limits", "/api/rate-limits/", "/api/policies", "/api/policies/", "/api/usage", "/api/me", "/api/workspaces", "/api/workspaces/", "/auth/", "/api/connected-clients", "/api/connected-clients/", "/api/mcp-tokens", "/api/mcp-tokens/", "/api/trusted-idps"} {
		mux.Handle(p, mh)
	}
	pinsAPI := &pinsapi.API{Pins: d.Pins, Catalog: cache,
		Verifier: d.Verifier, Logger: d.Logger, Console: bearer}
	if o.DevSignIn != nil {
		mux.Handle(console.DevSignInPath, o.DevSignIn)
	}
	// Locally, / leads to the console (in AWS only the routes of template.yaml exist).
	mux.Handle("GET /{$}", http.RedirectHandler(console.Prefix+"/", http.StatusFound))
	ph := pinsAPI.Handler()
	mux.Handle("/api/chats", ph)
	mux.Handle("/api/chats/", ph)
	// Any other /api path answers the REST error body, not net/http's plain text (in AWS
	// API Gateway answers routes that template.yaml does not declare).
	mux.Handle("/api/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.NotMatched(w, r, http.StatusNotFound, "")
	}))
	return &Stack{Gateway: g, Catalog: cache, Handler: mux}, nil
}

func invalidate(ctx context.Context, pool *db.Pool, cache *catalog.Cache, ws []string) {
	if ws == nil {
		all, err := db.WorkspaceList(context.WithoutCancel(ctx), pool)
		if err != nil {
			return
		}
		for _, w := range all {
			ws = append(ws, w.ID)
		}
	}
	for _, w := range ws {
		cache.Invalidate(w)
	}
}
