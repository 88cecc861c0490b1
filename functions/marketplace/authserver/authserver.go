// Package authserver is the gateway's OAuth 2.1 authorization server for its own MCP
// endpoint (docs/AUTH.md): every MCP client signs in by itself with just the URL.
//
// Endpoints, on the API's origin:
//
//	GET  /.well-known/oauth-authorization-server   RFC 8414 metadata
//	GET  /oauth/jwks.json                           the access tokens' public key (RFC 7517)
//	GET  /oauth/authorize, POST (the consent form)  authorization code + PKCE S256 (OAuth 2.1)
//	POST /oauth/token                               code exchange, refresh with rotation
//	POST /oauth/register                            RFC 7591 dynamic registration
//	GET, DELETE /oauth/register/{client_id}         RFC 7592 client configuration (registration.go)
//	POST /oauth/revoke                              RFC 7009 revocation
//
// The protocol is ory/fosite's (request parsing and validation, PKCE, code replay,
// refresh-token rotation and reuse detection, revocation, the error responses); this
// package adds what fosite does not do: RFC 8707 resource indicators bound to the token's
// audience, Client ID Metadata Documents, RFC 7591 registration with a per-source limit,
// RFC 8414 metadata, the consent page, memberships read at every token, and storage in
// Postgres (store.go). Access tokens are RS256 JWTs signed by shared/signing (KMS or a
// key file) carrying sub, role, workspaces and sid (the grant) as shared/auth reads them.
package authserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/identity"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/signing"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/token/jwt"
)

// Paths of the server's endpoints.
const (
	MetadataPath  = "/.well-known/oauth-authorization-server"
	JWKSPath      = "/oauth/jwks.json"
	AuthorizePath = "/oauth/authorize"
	TokenPath     = "/oauth/token"
	RegisterPath  = "/oauth/register"
	RevokePath    = "/oauth/revoke"
)

// Person is who is signed in to the browser (shared/identity: the one session rule).
type Person = identity.Person

// Membership is a person's role in one workspace (shared/identity).
type Membership = identity.Membership

// Sessions is the browser session rule the authorize endpoint relies on.
type Sessions interface {
	// Person returns the person signed in on r, if any.
	Person(r *http.Request) (Person, bool)
	// SignInURL returns where to send a browser to sign in, coming back to returnTo (a
	// path on this origin) afterwards.
	SignInURL(returnTo string) string
}

// IdentitySessions is Sessions over shared/identity's session rule and sign-in route.
type IdentitySessions struct{ *identity.Sessions }

// SignInURL implements Sessions (identity.SignInURL: same-origin return paths only).
func (s IdentitySessions) SignInURL(returnTo string) string { return identity.SignInURL(returnTo) }

// Members reads memberships (at consent, at every code exchange and at every refresh) and
// the person's identity-provider groups as of the last sign-in (at every code exchange and
// refresh: the tokens' groups claim).
type Members interface {
	Memberships(ctx context.Context, personID string) ([]Membership, error)
	Groups(ctx context.Context, personID string) ([]string, error)
	// Superuser reports the platform flag (identity.Service.Superuser): the console's
	// tokens of a superuser carry auth.RoleSuperuser.
	Superuser(ctx context.Context, personID string) (bool, error)
}

// Bounds of the groups an access token carries: the token travels in a request header
// (API Gateway takes at most 10,240 bytes of request line and headers), so more than these
// refuse the token with invalid_grant rather than drop some groups, which would let a
// person escape a policy that forbids by group (docs/AUTH.md "Tokens").
const (
	maxTokenGroups     = 100
	maxTokenGroupBytes = 4096
)

// Options configure a Server. Pool, Key, Sessions, Members and Guard are required.
type Options struct {
	Pool     *db.Pool
	Key      *signing.Key
	Sessions Sessions
	Members  Members
	// Guard fetches Client ID Metadata Documents (its AllowPrivate, the test-only switch
	// of loopback upstreams, also admits http://127.0.0.1 documents).
	Guard *urlguard.Guard
	// PublicBaseURL is the issuer and the base of the resource (/mcp); "" derives it from
	// the request (local runs).
	PublicBaseURL string
	Logger        *slog.Logger
	// AccessTokenLifespan is at most one hour (default 15 minutes).
	AccessTokenLifespan time.Duration
	// RefreshTokenLifespan defaults to 30 days.
	RefreshTokenLifespan time.Duration
	// RegistrationsPerHour bounds the distinct clients (name, redirect URIs and auth
	// method) registered from one source address within an hour (default 20);
	// RegistrationsPerShapePerHour the registrations of one such client from one source
	// (default 300: a hosted client's many users behind one egress address);
	// RegistrationsGlobalPerHour all registrations (default 1000). docs/AUTH.md
	// "Registration limits".
	RegistrationsPerHour         int
	RegistrationsPerShapePerHour int
	RegistrationsGlobalPerHour   int
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// SignInOrigin is the origin people sign in at (identity.SignIn.Origin: where the
	// identity provider sends the browser back and the session cookie lives); "" when there
	// is none to keep to. An authorization request that reaches this server on another host
	// name (localhost for 127.0.0.1) cannot keep its session there, so it is answered with a
	// page naming the URL to use instead (docs/AUTH.md "One origin").
	SignInOrigin string
	// MetadataRootCAs, when set, are the roots trusted for https metadata documents
	// (tests serve one with their own certificate); nil: the system's.
	MetadataRootCAs *x509.CertPool
}

// Server is the authorization server.
type Server struct {
	o        Options
	provider fosite.OAuth2Provider
	store    *store
	clients  *clients
}

// New builds a Server. Errors: a required option is missing or a lifespan is over the
// bound.
func New(o Options) (*Server, error) {
	if o.Pool == nil || o.Key == nil || o.Sessions == nil || o.Members == nil || o.Guard == nil {
		return nil, errors.New("authserver: Pool, Key, Sessions, Members and Guard are required")
	}
	if o.AccessTokenLifespan == 0 {
		o.AccessTokenLifespan = 15 * time.Minute
	}
	if o.AccessTokenLifespan > time.Hour {
		return nil, errors.New("authserver: access tokens live at most one hour")
	}
	if o.RefreshTokenLifespan == 0 {
		o.RefreshTokenLifespan = 30 * 24 * time.Hour
	}
	if o.RegistrationsPerHour == 0 {
		o.RegistrationsPerHour = defaultShapesPerSource
	}
	if o.RegistrationsPerShapePerHour == 0 {
		o.RegistrationsPerShapePerHour = defaultPerShape
	}
	if o.RegistrationsGlobalPerHour == 0 {
		o.RegistrationsGlobalPerHour = defaultGlobal
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	hc := o.Guard.HTTPClient(metadataTimeout)
	if o.MetadataRootCAs != nil {
		tr := o.Guard.Transport().Clone() // the guard's dialer and its checks stay
		tr.TLSClientConfig = &tls.Config{RootCAs: o.MetadataRootCAs, MinVersion: tls.VersionTLS12}
		hc.Transport = tr
	}
	cs := &clients{pool: o.Pool, guard: o.Guard, http: hc, now: o.Now, cache: map[string]cachedDoc{}}
	st := &store{pool: o.Pool, clients: cs}
	cfg := &fosite.Config{
		AccessTokenLifespan:   o.AccessTokenLifespan,
		RefreshTokenLifespan:  o.RefreshTokenLifespan,
		AuthorizeCodeLifespan: 5 * time.Minute,
		EnforcePKCE:           true,
		// S256 only (OAuth 2.1 §4.1.1; MCP authorization "MUST use S256").
		EnablePKCEPlainChallengeMethod: false,
		// A refresh token with every code exchange, whatever the scopes (fosite's default
		// asks for offline_access, which MCP clients do not request).
		RefreshTokenScopes: []string{},
		ScopeStrategy:      fosite.ExactScopeStrategy,
		// The resource was checked and normalised before fosite sees it (resource()).
		AudienceMatchingStrategy: func([]string, []string) error { return nil },
		JWTScopeClaimKey:         jwt.JWTScopeFieldString, // "scope", RFC 9068 §2.2.3
		// state: see padState (consent.go).
		SendDebugMessagesToClients: false,
		ClientSecretsHasher:        secretHasher{}, // client secrets (registration.go)
	}
	strategy := &compose.CommonStrategy{CoreStrategy: &oauth2.DefaultJWTStrategy{
		Signer: &jwtSigner{key: o.Key}, HMACSHAStrategy: opaque{}, Config: cfg}}
	ij := newIDJAG(cfg, st, strategy)
	provider := compose.Compose(cfg, st, strategy,
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenRevocationFactory,
		compose.OAuth2PKCEFactory,
		ij.factory, // the JWT bearer grant for ID-JAGs (idjag.go)
	)
	s := &Server{o: o, provider: provider, store: st, clients: cs}
	ij.s = s
	return s, nil
}

// Handler returns the endpoints of the package doc.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+MetadataPath, s.metadata)
	mux.HandleFunc("GET "+MetadataPath+"/{rest...}", s.metadata)
	mux.HandleFunc("GET "+JWKSPath, s.jwks)
	mux.HandleFunc("GET "+AuthorizePath, s.authorize)
	mux.HandleFunc("POST "+AuthorizePath, s.authorize)
	mux.HandleFunc("POST "+TokenPath, s.token)
	s.registrationRoutes(mux)
	mux.HandleFunc("POST "+RevokePath, s.revoke)
	for _, p := range []string{MetadataPath, JWKSPath, TokenPath, RegisterPath, RevokePath} {
		mux.HandleFunc("OPTIONS "+p, s.preflight)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Browser-based clients (the Inspector, the console) call these cross-origin.
		if r.Header.Get("Origin") != "" && !strings.HasPrefix(r.URL.Path, AuthorizePath) {
			w.Header().Set("Access-Control-Allow-Origin", "*")
		}
		mux.ServeHTTP(w, s.withBase(r))
	})
}

func (s *Server) preflight(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, MCP-Protocol-Version")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// base is the issuer: PublicBaseURL, or the request's scheme and host.
func (s *Server) base(r *http.Request) string {
	if s.o.PublicBaseURL != "" {
		return s.o.PublicBaseURL
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Resource is the gateway's MCP resource for issuer base: every token's audience.
func Resource(base string) string { return base + "/mcp" }

// metadata serves RFC 8414 authorization server metadata.
func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	b := s.base(r)
	w.Header().Set("Cache-Control", "public, max-age=300")
	httpapi.JSON(w, http.StatusOK, map[string]any{
		"issuer":                                         b,
		"authorization_endpoint":                         b + AuthorizePath,
		"token_endpoint":                                 b + TokenPath,
		"registration_endpoint":                          b + RegisterPath,
		"revocation_endpoint":                            b + RevokePath,
		"jwks_uri":                                       b + JWKSPath,
		"scopes_supported":                               []string{Scope},
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token", GrantTypeJWTBearer},
		"authorization_grant_profiles_supported":         []string{IDJAGGrantProfile},
		"token_endpoint_auth_methods_supported":          AuthMethods,
		"revocation_endpoint_auth_methods_supported":     AuthMethods,
		"code_challenge_methods_supported":               []string{"S256"},
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	})
}

func (s *Server) jwks(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(s.o.Key.JWKS())
}

// resource checks the RFC 8707 resource parameters of r's form and replaces them with the
// audience fosite binds to the token. For an MCP client every resource must be one of the
// gateway's MCP URLs (auth.MCPResource: <base>/mcp, <base>/mcp/{workspaceId},
// <base>/mcp/{workspaceId}/servers/{connection}, exactly the URL the client was given and the
// resource of that URL's own protected resource metadata); the token's audience is the
// gateway's MCP resource <base>/mcp and the URL's workspace becomes the grant's workspace
// (ws: the person must be a member of it; consent.go), so the token works on every MCP URL of
// that workspace and is refused on another workspace's. No resource means the gateway's own
// (clients of the 2025-03-26 revision send none). For the console client (console.go) it is
// what it names of the REST API's resource, <base>/api, and the MCP resource, <base>/mcp
// (exactly; the token's aud lists them), and <base>/api when it names none. Any other
// resource is invalid_target (RFC 8707 §2): the REST resource for an MCP client, two
// workspaces in one request, anything but those two for the console.
func (s *Server) resource(r *http.Request) (hint string, err error) {
	base := s.base(r)
	res := Resource(base)
	aud := []string{res}
	if r.Form.Get("client_id") == ConsoleClientID {
		aud = nil
		for _, v := range r.Form["resource"] {
			v = strings.TrimSuffix(v, "/")
			if v != APIResource(base) && v != res {
				return "", errConsoleTarget
			}
			if !slices.Contains(aud, v) {
				aud = append(aud, v)
			}
		}
		if len(aud) == 0 {
			aud = []string{APIResource(base)}
		}
		hint = r.Form.Get("workspace_hint")
	} else {
		for _, v := range r.Form["resource"] {
			_, ws, ok := auth.MCPResource(base, v)
			if !ok {
				return "", errInvalidTarget
			}
			if ws != "" {
				if hint != "" && hint != ws {
					return "", errTwoWorkspaces
				}
				hint = ws
			}
		}
	}
	r.Form["audience"] = aud
	if r.PostForm != nil && r.Method == http.MethodPost {
		r.PostForm["audience"] = aud
	}
	return hint, nil
}

var errConsoleTarget = &fosite.RFC6749Error{ErrorField: "invalid_target",
	DescriptionField: "The console's tokens are for this gateway's REST API (<origin>/api) and MCP endpoint (<origin>/mcp) only.", CodeField: http.StatusBadRequest}

var errInvalidTarget = &fosite.RFC6749Error{ErrorField: "invalid_target",
	DescriptionField: "The requested resource is not one of this gateway's MCP URLs (<origin>/mcp, <origin>/mcp/{workspaceId}, <origin>/mcp/{workspaceId}/servers/{connection}).", CodeField: http.StatusBadRequest}

var errTwoWorkspaces = &fosite.RFC6749Error{ErrorField: "invalid_target",
	DescriptionField: "The requested resources name two workspaces; a grant is for one.", CodeField: http.StatusBadRequest}

// sourceOf is the registering client's address: API Gateway's sourceIp in Lambda, else the
// connection's peer.
func (s *Server) sourceOf(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.HTTP.SourceIP != "" {
		return rc.HTTP.SourceIP
	}
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return h
}

func (s *Server) now() time.Time { return s.o.Now() }

func (s *Server) serverError(w http.ResponseWriter, r *http.Request, err error) {
	id := httpapi.NewID()
	logx.Annotate(r.Context(), logx.FieldErrorID, id)
	s.o.Logger.ErrorContext(r.Context(), "authserver: request failed", "error_id", id, "err", err)
	oauthError(w, http.StatusInternalServerError, "server_error", "internal error (errorId "+id+")")
}

// oauthError writes an OAuth error body (RFC 6749 §5.2, RFC 7591 §3.2.2).
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}
