// Package api is the marketplace REST function (docs/DESIGN.md §2): the
// curated catalog under /api/mcp-marketplace (browse for any valid token, writes for
// admins), install and uninstall, and connections CRUD under /api/mcp-connections
// (admin), plus the OpenAPI 3.1 description of every REST route at /api/openapi.json.
//
// Routes: the table Routes in routes.go is the one list (method, path, operation, statuses),
// and GET /api/openapi.json is generated from it; `make run` then
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

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalogentries"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/grants"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
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

// connectedClientList is GET /api/connected-clients[?workspaceId=…] (shared/grants).
func (a *API) connectedClientList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if a.AuthServer == nil {
		return apperr.New(apperr.NotFound, "this gateway's authorization server is not configured")
	}
	var items []grants.View
	var err error
	if ws := r.URL.Query().Get("workspaceId"); ws != "" {
		items, err = a.Grants.InWorkspace(r.Context(), p, ws)
	} else {
		items, err = a.Grants.Mine(r.Context(), p)
	}
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, connectedClientList{Items: items})
	return nil
}

// connectedClientRevoke is DELETE /api/connected-clients/{id} (shared/grants).
func (a *API) connectedClientRevoke(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if a.AuthServer == nil {
		return apperr.New(apperr.NotFound, "this gateway's authorization server is not configured")
	}
	if err := a.Grants.Revoke(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// mcpTokenList is GET /api/mcp-tokens (shared/grants, tokens.go).
func (a *API) mcpTokenList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if a.AuthServer == nil {
		return apperr.New(apperr.NotFound, "this gateway's authorization server is not configured")
	}
	items, err := a.Grants.Tokens(r.Context(), p, httpapi.BaseURL(a.Console.PublicBaseURL, r))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, mcpTokenList{Items: items})
	return nil
}

// mcpTokenCreate is POST /api/mcp-tokens: the token is in this answer only (Cache-Control
// no-store, as the token endpoint's, RFC 6749 §5.1).
func (a *API) mcpTokenCreate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if a.AuthServer == nil {
		return apperr.New(apperr.NotFound, "this gateway's authorization server is not configured")
	}
	var in grants.TokenInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	out, err := a.Grants.CreateToken(r.Context(), p, httpapi.BaseURL(a.Console.PublicBaseURL, r), in)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.JSON(w, http.StatusCreated, out)
	return nil
}

// mcpTokenRevoke is DELETE /api/mcp-tokens/{id}.
func (a *API) mcpTokenRevoke(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if a.AuthServer == nil {
		return apperr.New(apperr.NotFound, "this gateway's authorization server is not configured")
	}
	if err := a.Grants.RevokeToken(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// requireCatalogWriter allows catalog writes to superusers only
// (catalogentries.RequireWriter). Handlers check it before reading the body, so that a
// non-superuser gets 403 whatever the body holds.
func requireCatalogWriter(p *auth.Principal) error { return catalogentries.RequireWriter(p) }

// requireAdmin is auth.RequireAdmin (one rule and one message for every write).
var requireAdmin = auth.RequireAdmin

// ---- install ----

func (a *API) install(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in connections.InstallInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	if err := notOwnRESTURL(r, in.URL); err != nil {
		return err
	}
	out, err := a.Connections.Install(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusCreated, outcomeView(out))
	return nil
}

// uninstall is DELETE /api/mcp-marketplace/{id}/install?workspaceId=... (a query
// parameter, not a body: DELETE bodies are dropped by some clients and proxies; it may be
// left out when the token names exactly one workspace).
func (a *API) uninstall(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	ws := connections.DefaultWorkspace(p, r.URL.Query().Get("workspaceId"))
	if ws == "" {
		return apperr.New(apperr.Validation, "query parameter workspaceId is required").
			WithHint("the token names no single workspace")
	}
	if err := a.Connections.Uninstall(r.Context(), p, r.PathValue("id"), ws); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ---- connections ----

func (a *API) connectionList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	ws := r.URL.Query().Get("workspaceId")
	rows, err := a.Connections.List(r.Context(), p, ws)
	if err != nil {
		return err
	}
	logx.Annotate(r.Context(), logx.FieldWorkspace, ws) // checked by List
	// Only the detail (and a write's answer to the admin who sent the URL) shows the URL
	// whole: a query may hold the upstream's API key.
	out := make([]connections.View, 0, len(rows))
	for i := range rows {
		out = append(out, connections.NewView(&rows[i], false))
	}
	httpapi.JSON(w, http.StatusOK, connectionList{Connections: out})
	return nil
}

func (a *API) connectionStatuses(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	st, err := a.Connections.Statuses(r.Context(), p, r.URL.Query().Get("workspaceId"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, statusList{Statuses: st})
	return nil
}

// myAuthorizations is GET /api/mcp-connections/authorizations[?workspaceId=]: the caller's
// upstream authorization state of every OAuth connection they may use (any role).
func (a *API) myAuthorizations(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	out, err := a.Connections.MyAuthorizations(r.Context(), p, r.URL.Query().Get("workspaceId"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, authorizationList{Authorizations: out})
	return nil
}

func (a *API) connectionCreate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in connections.CreateInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	if err := notOwnRESTURL(r, in.URL); err != nil {
		return err
	}
	out, err := a.Connections.Create(r.Context(), p, in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusCreated, outcomeView(out))
	return nil
}

func (a *API) connectionGet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	c, err := a.Connections.Get(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	st, err := a.Connections.AuthorizationOf(r.Context(), c, p.Subject)
	if err != nil {
		return err
	}
	if err := a.Connections.NameAuthorizers(r.Context(), st); err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, connections.DetailView{View: connections.NewView(c, true), Authorization: st})
	return nil
}

// catalogEntryAuth is PUT /api/mcp-marketplace/{id}/auth (superuser): the entry's default
// auth mode and pre-registered OAuth client; the secret is stored sealed and never answered.
// catalogEntryAuthGet is GET /api/mcp-marketplace/{id}/auth (superuser): what PUT wrote,
// without secrets.
func (a *API) catalogEntryAuthGet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireCatalogWriter(p); err != nil {
		return err
	}
	out, err := a.Connections.EntryAuth(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, out)
	return nil
}

func (a *API) catalogEntryAuth(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireCatalogWriter(p); err != nil {
		return err
	}
	var in connections.EntryAuthInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	out, err := a.Connections.SetEntryAuth(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, out)
	return nil
}

// connectionAuthorize is POST /api/mcp-connections/{id}/authorize {returnTo?}: (re-)start
// the upstream consent; answers {status, authorizationUrl?, reason?}.
func (a *API) connectionAuthorize(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in authorizeInput
	if r.ContentLength != 0 {
		if err := httpapi.Decode(w, r, &in); err != nil {
			return err
		}
	}
	out, err := a.Connections.Authorize(r.Context(), p, r.PathValue("id"), in.ReturnTo)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, out)
	return nil
}

// oauthConsent is POST /api/oauth/consent {link}: the consent page, signed in, continues the
// authorization its link names. Only the caller the link was made for gets through: 200
// {authorizationUrl} with the HttpOnly binding cookie the callback requires; another user,
// another workspace or a member for a shared grant is 403 and nothing is stored.
func (a *API) oauthConsent(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in consentInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	if in.Link == "" || len(in.Link) > 256 {
		return apperr.New(apperr.Validation, "link is required (the id at the end of the authorization link)")
	}
	start, err := a.Connections.Consent(r.Context(), p, in.Link)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	http.SetCookie(w, start.Cookie)
	httpapi.JSON(w, http.StatusOK, consentAnswer{AuthorizationURL: start.AuthURL, ConnectionID: start.Key.ConnectionID})
	return nil
}

// connectionOAuthSettings is GET /api/mcp-connections/{id}/oauth-settings (admin):
// {oauth, effective}.
func (a *API) connectionOAuthSettings(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	own, eff, err := a.Connections.ConnectionOAuthSettings(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, oauthSettingsAnswer{OAuth: own, Effective: eff})
	return nil
}

// connectionOAuthSettingsSet is PUT /api/mcp-connections/{id}/oauth-settings (admin): the
// body is the connection's OAuth settings; answers {oauth, effective}.
func (a *API) connectionOAuthSettingsSet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in connections.OAuthSettings
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	own, eff, err := a.Connections.SetConnectionOAuthSettings(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, oauthSettingsAnswer{OAuth: own, Effective: eff})
	return nil
}

func (a *API) connectionUpdate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in connections.UpdateInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	if in.URL != nil {
		if err := notOwnRESTURL(r, *in.URL); err != nil {
			return err
		}
	}
	out, err := a.Connections.Update(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, outcomeView(out))
	return nil
}

func (a *API) connectionDelete(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := a.Connections.Delete(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) connectionToggle(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	out, err := a.Connections.Toggle(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, outcomeView(out))
	return nil
}

func (a *API) connectionTest(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	res, err := a.Connections.Test(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, res)
	return nil
}

func (a *API) connectionRefresh(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	res, err := a.Connections.RefreshByID(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, res)
	return nil
}

func (a *API) connectionTools(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	tools, err := a.Connections.Tools(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	if tools == nil {
		tools = []db.ConnectionTool{}
	}
	notes, err := a.Connections.SchemaNotes(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, toolList{Tools: tools, SchemaNotes: notes})
	return nil
}

// connectionSkills is GET /api/mcp-connections/{id}/skills: the skills (SEP-2640) the
// connection's upstream served at its last refresh (docs/SKILLS.md), for the Marketplace.
func (a *API) connectionSkills(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	skills, err := a.Connections.Skills(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, skillList{Skills: skills})
	return nil
}

func (a *API) toolApprove(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.Connections.ApproveTool(r.Context(), p, r.PathValue("id"), r.PathValue("name"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, t)
	return nil
}

// outcomeView is a write's outcome as REST answers it: the URL whole, to the admin who
// may have sent it (connections.NewOutcomeView).
func outcomeView(out *connections.Outcome) connections.OutcomeView {
	return connections.NewOutcomeView(out, true)
}
