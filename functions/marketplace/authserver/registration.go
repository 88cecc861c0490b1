package authserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/go-jose/go-jose/v3"
	"github.com/ory/fosite"
)

// Registration: RFC 7591 dynamic registration (public and confidential clients), RFC 7592
// client configuration (read and delete with the registration access token), and the
// registration limits (docs/AUTH.md "Registration").
//
//	POST   /oauth/register               RFC 7591 §3.1: client metadata in, 201 client information out
//	GET    /oauth/register/{client_id}   RFC 7592 §2.1: the registration as stored (no secret, no token)
//	DELETE /oauth/register/{client_id}   RFC 7592 §2.3: 204; every grant and token of the client revoked
//	PUT    /oauth/register/{client_id}   RFC 7592 §2.2: refused, 405 (delete and register again)

// Token endpoint authentication methods (RFC 7591 §2; RFC 6749 §2.3.1 for the two secrets).
const (
	AuthMethodNone        = "none"
	AuthMethodSecretPost  = "client_secret_post"
	AuthMethodSecretBasic = "client_secret_basic"
)

// AuthMethods are the token endpoint authentication methods this server accepts (metadata's
// token_endpoint_auth_methods_supported and revocation_endpoint_auth_methods_supported).
var AuthMethods = []string{AuthMethodNone, AuthMethodSecretPost, AuthMethodSecretBasic}

// scopesOffered are the scopes a client may register with (RFC 7591 §2 scope): those it
// asks for that are here are kept, the others ignored (RFC 6749 §3.3: the server may grant
// less than asked). Scope is always registered: it is the resource's own.
var scopesOffered = []string{Scope}

// secretHasher is fosite's client secret hasher here (fosite.Config.ClientSecretsHasher):
// a secret is stored as "sha256:" and the base64url SHA-256 of it, and compared in
// constant time. fosite's own hasher is bcrypt, made for passwords a person chose: a client
// secret here is 256 random bits, which no work factor makes harder to guess, and bcrypt
// would cost every confidential client's token request tens of milliseconds of Lambda CPU
// (seconds under the race detector). The same reasoning stores codes and refresh tokens by
// their SHA-256 (opaque).
type secretHasher struct{}

const secretHashPrefix = "sha256:"

// Hash implements fosite.Hasher.
func (secretHasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	sum := sha256.Sum256(data)
	return []byte(secretHashPrefix + base64.RawURLEncoding.EncodeToString(sum[:])), nil
}

// Compare implements fosite.Hasher: nil when hash is data's; an error otherwise (also for
// an empty hash, which no secret matches).
func (h secretHasher) Compare(ctx context.Context, hash, data []byte) error {
	want, _ := h.Hash(ctx, data)
	if len(hash) == 0 || subtle.ConstantTimeCompare(hash, want) != 1 {
		return errors.New("the client secret does not match")
	}
	return nil
}

// Registration limits per hour (Options): distinct client shapes per source, registrations
// of one shape per source, and registrations in all (docs/AUTH.md "Registration limits").
const (
	defaultShapesPerSource = 20
	defaultPerShape        = 300
	defaultGlobal          = 1000
)

// RegistrationURI is the RFC 7592 client configuration endpoint of client id for issuer
// base: <base>/oauth/register/<id>.
func RegistrationURI(base, id string) string { return base + RegisterPath + "/" + id }

// registrationRoutes adds the RFC 7591 and RFC 7592 endpoints to mux.
func (s *Server) registrationRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST "+RegisterPath, s.register)
	p := RegisterPath + "/{client_id}"
	mux.HandleFunc("GET "+p, s.clientConfiguration)
	mux.HandleFunc("DELETE "+p, s.clientConfiguration)
	mux.HandleFunc("PUT "+p, s.clientConfiguration)
	mux.HandleFunc("OPTIONS "+p, func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Methods", "GET, PUT, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
	})
}

// GetTokenEndpointAuthMethod implements fosite.OpenIDConnectClient, which fosite's client
// authentication (fosite.DefaultClientAuthenticationStrategy) reads to hold a client to its
// registered method: a client_secret in the body for client_secret_post, HTTP Basic for
// client_secret_basic, neither for none. Metadata-document and console clients are none.
func (c *client) GetTokenEndpointAuthMethod() string {
	if c.authMethod == "" {
		return AuthMethodNone
	}
	return c.authMethod
}

// GetRequestURIs implements fosite.OpenIDConnectClient: no request objects here.
func (c *client) GetRequestURIs() []string { return nil }

// GetJSONWebKeys implements fosite.OpenIDConnectClient: no client keys (no private_key_jwt).
func (c *client) GetJSONWebKeys() *jose.JSONWebKeySet { return nil }

// GetJSONWebKeysURI implements fosite.OpenIDConnectClient (see GetJSONWebKeys).
func (c *client) GetJSONWebKeysURI() string { return "" }

// GetRequestObjectSigningAlgorithm implements fosite.OpenIDConnectClient (see GetRequestURIs).
func (c *client) GetRequestObjectSigningAlgorithm() string { return "" }

// GetTokenEndpointAuthSigningAlgorithm implements fosite.OpenIDConnectClient (see GetJSONWebKeys).
func (c *client) GetTokenEndpointAuthSigningAlgorithm() string { return "" }

// clientFromRow is the fosite client of a registered client: public with method none, or
// confidential with its secret's hash, which fosite's hasher compares.
func clientFromRow(row *db.ASClient) *client {
	c := newClient(row.ClientID, row.RedirectURIs)
	c.Name, c.LogoURI, c.ClientURI = row.ClientName, row.LogoURI, row.ClientURI
	if len(row.Scopes) > 0 {
		c.Scopes = slices.Clone(row.Scopes)
	}
	if row.AuthMethod != "" && row.AuthMethod != AuthMethodNone {
		c.authMethod = row.AuthMethod
		c.Public = false
		c.Secret = []byte(row.SecretHash)
	}
	return c
}

// basicChallenge adds RFC 6749 §5.2's WWW-Authenticate to an invalid_client answer (fosite
// answers 401 without it) when the request authenticated with HTTP Basic.
func basicChallenge(w http.ResponseWriter, r *http.Request, err error) {
	if _, _, ok := r.BasicAuth(); ok && errors.Is(err, fosite.ErrInvalidClient) {
		w.Header().Set("WWW-Authenticate", `Basic realm="oauth", charset="UTF-8"`)
	}
}

// registeredAuthMethod is the method a client registers with: the one it names among
// AuthMethods; none when it names none. RFC 7591 §2's default for an absent field is
// client_secret_basic, but the clients that omit it (VS Code among them) are public PKCE
// clients that never send a secret, so a secret they were not asked about would lock them
// out at the token endpoint (docs/AUTH.md "Registration").
func registeredAuthMethod(m string) (string, error) {
	if m == "" {
		return AuthMethodNone, nil
	}
	if !slices.Contains(AuthMethods, m) {
		return "", fmt.Errorf("token_endpoint_auth_method %q is not supported (supported: %s)", m, strings.Join(AuthMethods, ", "))
	}
	return m, nil
}

// registeredScopes is Scope and every scope of asked (space-separated) that the server
// offers; the rest is ignored.
func registeredScopes(asked string) []string {
	out := []string{Scope}
	for _, sc := range strings.Fields(asked) {
		if slices.Contains(scopesOffered, sc) && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out
}

// shapeOf is what registrations of one hosted client share: its name, its set of redirect
// URIs (order and repeats aside) and its auth method, hashed.
func shapeOf(name string, redirects []string, method string) string {
	set := slices.Clone(redirects)
	slices.Sort(set)
	set = slices.Compact(set)
	b, _ := json.Marshal([]any{name, set, method})
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// tokenHash is the stored form of a registration access token: its SHA-256, base64url (the
// token is 256 random bits, as codes and refresh tokens are: opaque.sig).
func tokenHash(t string) string { return opaque{}.sig(t) }

// register handles RFC 7591 dynamic registration: client metadata in (application/json),
// the registered client out, 201 (RFC 7591 §3.2.1): client_id, the metadata as registered
// (token_endpoint_auth_method, scope), for a confidential client client_secret and
// client_secret_expires_at 0 (it does not expire), and RFC 7592 §3's
// registration_client_uri and registration_access_token. The secret and the token are in
// this response only; the row holds their hashes. Errors (RFC 7591 §3.2.2):
// invalid_redirect_uri, invalid_client_metadata (400); a registration limit reached: 429
// with Retry-After. A refused registration stores nothing.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var md clientMetadata
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the registration must be application/json")
		return
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxMetadataBytes))
	if err := dec.Decode(&md); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body is not a JSON object of client metadata")
		return
	}
	if err := md.check(); err != nil {
		code := "invalid_client_metadata"
		if errors.As(err, new(redirectError)) {
			code = "invalid_redirect_uri"
		}
		oauthError(w, http.StatusBadRequest, code, err.Error())
		return
	}
	method, err := registeredAuthMethod(md.TokenEndpointAuthMethod)
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", err.Error())
		return
	}
	scopes := registeredScopes(md.Scope)
	id, regToken := randomID(), "apg_"+randomID()+randomID()
	row := &db.ASClient{ClientID: id, ClientName: md.ClientName, LogoURI: md.LogoURI, ClientURI: md.ClientURI,
		RedirectURIs: slices.Clone(md.RedirectURIs), SourceIP: s.sourceOf(r), AuthMethod: method,
		RegistrationTokenHash: tokenHash(regToken), Scopes: scopes, Shape: shapeOf(md.ClientName, md.RedirectURIs, method)}
	var secret string
	if method != AuthMethodNone {
		secret = randomID() + randomID()
		h, err := secretHasher{}.Hash(r.Context(), []byte(secret))
		if err != nil {
			s.serverError(w, r, err)
			return
		}
		row.SecretHash = string(h)
	}
	stored := map[string]any{
		"client_id": id, "client_id_issued_at": s.now().Unix(), "redirect_uris": md.RedirectURIs,
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": method, "scope": strings.Join(scopes, " "),
	}
	for k, v := range map[string]string{"client_name": md.ClientName, "client_uri": md.ClientURI, "logo_uri": md.LogoURI,
		"software_id": md.SoftwareID, "software_version": md.SoftwareVersion} {
		if v != "" {
			stored[k] = v
		}
	}
	row.Metadata, _ = json.Marshal(stored)
	refused, err := db.ASClientRegister(r.Context(), s.o.Pool, row, db.ASRegistrationLimits{Since: s.now().Add(-time.Hour),
		ShapesPerSource: s.o.RegistrationsPerHour, PerShape: s.o.RegistrationsPerShapePerHour, Global: s.o.RegistrationsGlobalPerHour})
	if err != nil {
		s.serverError(w, r, err)
		return
	}
	if refused != "" {
		s.o.Logger.WarnContext(r.Context(), "authserver: registration refused", "limit", refused, "source", row.SourceIP)
		w.Header().Set("Retry-After", "3600")
		oauthError(w, http.StatusTooManyRequests, "invalid_request", s.limitMessage(refused))
		return
	}
	out := stored
	out["registration_client_uri"] = RegistrationURI(s.base(r), id)
	out["registration_access_token"] = regToken
	if secret != "" {
		out["client_secret"], out["client_secret_expires_at"] = secret, 0
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(out)
}

// limitMessage is the error_description of a 429 for limit (a db.ASLimit*).
func (s *Server) limitMessage(limit string) string {
	switch limit {
	case db.ASLimitShape:
		return fmt.Sprintf("too many registrations of this client from this source (at most %d an hour)", s.o.RegistrationsPerShapePerHour)
	case db.ASLimitGlobal:
		return fmt.Sprintf("too many client registrations on this server (at most %d an hour)", s.o.RegistrationsGlobalPerHour)
	}
	return fmt.Sprintf("too many different clients registered from this source (at most %d an hour)", s.o.RegistrationsPerHour)
}

// clientConfiguration is RFC 7592's client configuration endpoint, authenticated by the
// registration access token (Authorization: Bearer): GET returns the registration as
// stored with registration_client_uri (200; never the secret or the token again: RFC 7592
// §2.1 lets the server leave them out, and neither is kept); DELETE removes the client and
// revokes every grant and token issued to it (204, RFC 7592 §2.3); PUT is refused with 405
// and Allow (updates are not supported: delete and register again). A missing or wrong
// token, or a token of another client, is 401 invalid_token (RFC 6750 §3.1), the same
// answer as for an unknown client (RFC 7592 §2: existence is never revealed).
func (s *Server) clientConfiguration(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	row, ok := s.registrationAuth(w, r)
	if !ok {
		return
	}
	switch r.Method {
	case http.MethodGet:
		var out map[string]any
		if err := json.Unmarshal(row.Metadata, &out); err != nil {
			s.serverError(w, r, err)
			return
		}
		out["registration_client_uri"] = RegistrationURI(s.base(r), row.ClientID)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	case http.MethodDelete:
		err := db.ASClientDelete(r.Context(), s.o.Pool, row.ClientID)
		if apperr.CodeOf(err) == apperr.NotFound {
			invalidToken(w, "the registration access token is not valid")
			return
		} else if err != nil {
			s.serverError(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, DELETE")
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request",
			"updating a registration is not supported: delete it and register again")
	}
}

// registrationAuth returns the client of the request's path when the request carries its
// registration access token; otherwise it answers 401 and returns false. A client
// registered before registration access tokens existed has none, and no token matches it.
func (s *Server) registrationAuth(w http.ResponseWriter, r *http.Request) (*db.ASClient, bool) {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="oauth"`)
		invalidToken(w, "a registration access token is required (Authorization: Bearer)")
		return nil, false
	}
	row, err := db.ASClientGet(r.Context(), s.o.Pool, r.PathValue("client_id"))
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		s.serverError(w, r, err)
		return nil, false
	}
	want := ""
	if row != nil {
		want = row.RegistrationTokenHash
	}
	got := tokenHash(tok)
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		invalidToken(w, "the registration access token is not valid")
		return nil, false
	}
	return row, true
}

// invalidToken answers 401 invalid_token with a Bearer challenge (RFC 6750 §3).
func invalidToken(w http.ResponseWriter, desc string) {
	if w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="oauth", error="invalid_token"`)
	}
	oauthError(w, http.StatusUnauthorized, "invalid_token", desc)
}
