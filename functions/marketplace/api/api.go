// Package api is the marketplace REST function (docs/DESIGN.md §2): the
// curated catalog under /api/mcp-marketplace (browse for any valid token, writes for
// admins), install and uninstall, and connections CRUD under /api/mcp-connections
// (admin), plus the OpenAPI 3.1 description of every REST route at /api/openapi.json.
//
// Routes: the table Routes (routes.go, which concatenates the tables of routes_*.go, one per
// area) is the one list (method, path, operation, statuses), and GET /api/openapi.json is
// generated from it; `make run` then
// `curl -s localhost:8080/api/openapi.json | jq '.paths | keys'` prints them. No list is kept
// here: it fell behind the table more than once.
//
// Every authenticated route may also answer 503 (UNAVAILABLE: the database is unreachable).
// Errors are {"error": {"code", "message", "hint"?, "errorId"?, "details"?}} with the
// status of their code (shared/httpapi). Header values are never returned (§9).
package api

import (
	"log/slog"
	"net/http"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalogentries"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/services"
)

// API serves the marketplace routes. Pool, Verifier and the Services (services.NewServices:
// built once per process, never per request) are required; Services.Connections may be
// nil only where no connection route is called (the OpenAPI test).
type API struct {
	Pool     *db.Pool
	Verifier *auth.Verifier
	Logger   *slog.Logger
	// Services are what the handlers act through (a.Connections, a.Overrides, …).
	services.Services
	// AuthServer, when set, is the gateway's own authorization server
	// (functions/marketplace/authserver): served under /oauth/ and its RFC 8414 metadata,
	// with its connected clients at /api/connected-clients (Services.Grants); nil answers
	// 404 there.
	AuthServer http.Handler
	// Console, when its Grants is set, also admits the console's access tokens of the
	// gateway's authorization server for the REST resource (httpapi.Bearer; its Verifier
	// is Verifier): main and the local stack set it with the authorization server.
	Console httpapi.Bearer
	// SignIn, when set, serves the browser sign-in and session routes under /auth/
	// (shared/identity: deps.Deps.IdentityRoutes).
	SignIn http.Handler
}

// AuthServerPaths are the patterns Handler routes to API.AuthServer (template.yaml routes
// the same paths to this function).
var AuthServerPaths = []string{"/oauth/", "/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/"}

// handlerFunc is a REST handler that returns its error for the edge to map.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p *auth.Principal) error

// OpenAPIPath is where the OpenAPI description is served, without authentication.
const OpenAPIPath = "/api/openapi.json"

// OAuthCallbackPath is the redirect URI of upstream authorization (docs/UPSTREAM-AUTH.md).
const OAuthCallbackPath = "/api/oauth/callback"

// OAuthConsentPath is where the console's consent page continues an authorization link as
// the signed-in user (docs/UPSTREAM-AUTH.md "Consent bound to its user").
const OAuthConsentPath = "/api/oauth/consent"

// ClientMetadataPath serves the gateway's OAuth client ID metadata document (public).
const ClientMetadataPath = "/api/oauth/client-metadata.json"

// Handler returns the routes, each behind bearer authentication (the OpenAPI document
// excepted), with request ids and panic recovery.
func (a *API) Handler() http.Handler {
	logger := a.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	bearer := a.Console
	bearer.Verifier = a.Verifier
	for _, rt := range Routes {
		h := rt.handler(a)
		mux.Handle(rt.Pattern, bearer.Authenticate(logger, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r, auth.FromContext(r.Context())); err != nil {
				httpapi.Error(w, r, logger, err)
			}
		})))
	}
	mux.HandleFunc("GET "+OpenAPIPath, serveOpenAPI)
	if a.Connections != nil {
		// The browser's return from an upstream's authorization server: no bearer token needed
		// (the state binds it), one is checked when present (shared/connections/oauth.go).
		mux.Handle("GET "+OAuthCallbackPath, a.Connections.OAuthCallback(a.Verifier))
		if a.Connections.Auth != nil {
			mux.Handle("GET "+ClientMetadataPath, a.Connections.Auth.ClientMetadataHandler())
		}
	}
	if a.AuthServer != nil {
		for _, p := range AuthServerPaths {
			mux.Handle(p, a.AuthServer)
		}
	}
	if a.SignIn != nil {
		mux.Handle("/auth/", a.SignIn)
	}
	return httpapi.Recover(logger, httpapi.RequestID(httpapi.Routes(mux)))
}

// requireCatalogWriter allows catalog writes to superusers only
// (catalogentries.RequireWriter). Handlers check it before reading the body, so that a
// non-superuser gets 403 whatever the body holds.
func requireCatalogWriter(p *auth.Principal) error { return catalogentries.RequireWriter(p) }

// requireAdmin is auth.RequireAdmin (one rule and one message for every write).
var requireAdmin = auth.RequireAdmin
