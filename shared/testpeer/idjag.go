package testpeer

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
)

// Names of draft-ietf-oauth-identity-assertion-authz-grant-04 (the ID-JAG) and RFC 8693.
const (
	tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	tokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
	// IDJAGTyp is the ID-JAG's JOSE typ header (draft §3.1).
	IDJAGTyp = "oauth-id-jag+jwt"
)

// IdP is an enterprise identity provider that issues ID-JAGs, on loopback, for the
// enterprise-managed authorization tests. No identity provider that issues ID-JAGs installs
// from the registries this project reaches (Okta's Cross App Access is a hosted service; the
// Go, npm, PyPI and Debian package lists have nothing for "id-jag" or "cross app access";
// mockoidc, already a dependency, does no token exchange), so this one implements the
// draft's identity-provider side in Go:
//
//   - single sign-on by OpenID Connect (draft §4.1, the extension's §3): /authorize signs
//     in the user named by login_hint at once (a real provider shows its login page) and
//     redirects with a code; /token exchanges it for an ID token (aud = the client);
//   - the token exchange (draft §4.3, RFC 8693 §2.1) at /token: client authentication
//     (client_secret_post or _basic; the extension's §7.7 requires it), the subject token
//     an ID token it issued to that client (§4.3.3), requested_token_type id-jag, an
//     audience and resource the policy pairs (the extension's §7.6.1), then the ID-JAG
//     (§3.1: typ oauth-id-jag+jwt; iss, sub, aud, client_id, jti, exp, iat, resource, scope,
//     email) in the response of §4.3.4 (issued_token_type, token_type N_A, expires_in);
//     errors as RFC 8693 §2.2.2 (invalid_request, invalid_grant, invalid_target);
//   - RFC 8414 and OpenID discovery, and its JWKS.
//
// Mint signs any claims and header a test wants (expired, wrong typ, another audience),
// and MintForeign signs with a key the JWKS does not hold.
type IdP struct {
	srv     *httptest.Server
	key     *rsa.PrivateKey
	foreign *rsa.PrivateKey
	kid     string
	o       IdPOptions

	mu    sync.Mutex
	codes map[string]idpCode
	// Exchanges counts the ID-JAGs issued by token exchange.
	exchanges int
}

// IdPUser is a person of the identity provider.
type IdPUser struct {
	Subject, Email string
}

// IdPClient is a client of the identity provider: its secret and its client id at the
// resource authorization server (draft §5: the provider maps its client to the client id
// the resource authorization server knows, which goes into the ID-JAG's client_id).
type IdPClient struct {
	Secret           string
	ResourceClientID string
}

// IdPOptions configure NewIdP.
type IdPOptions struct {
	Users   map[string]IdPUser   // by login (login_hint)
	Clients map[string]IdPClient // by client id at the provider
	// Audiences are the resource authorization servers (issuer URLs) the policy lets its
	// clients reach; a resource, when sent, must start with the audience.
	Audiences []string
	// Lifetime of an ID-JAG (default 300 s, as Okta's).
	Lifetime time.Duration
}

type idpCode struct {
	user, client, nonce string
}

// NewIdP starts an identity provider on loopback (stopped in t.Cleanup).
func NewIdP(t testing.TB, o IdPOptions) *IdP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if o.Lifetime == 0 {
		o.Lifetime = 300 * time.Second
	}
	p := &IdP{key: key, foreign: foreign, kid: "idp-key-1", o: o, codes: map[string]idpCode{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.metadata)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", p.metadata)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// Issuer is the provider's issuer (its URL).
func (p *IdP) Issuer() string { return p.srv.URL }

// JWKSURL is where its keys are.
func (p *IdP) JWKSURL() string { return p.srv.URL + "/jwks" }

// Exchanges is how many ID-JAGs token exchange issued.
func (p *IdP) Exchanges() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exchanges
}

func (p *IdP) metadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": p.Issuer(), "authorization_endpoint": p.Issuer() + "/authorize",
		"token_endpoint": p.Issuer() + "/token", "jwks_uri": p.JWKSURL(),
		"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"grant_types_supported":                 []string{"authorization_code", tokenExchangeGrant},
		"token_endpoint_auth_methods_supported": []string{"client_secret_post", "client_secret_basic"},
	})
}

func (p *IdP) jwks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &p.key.PublicKey, KeyID: p.kid, Algorithm: "RS256", Use: "sig"}}})
}

// authorize is single sign-on (draft §4.1): the user of login_hint is signed in at once.
func (p *IdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c, ok := p.o.Clients[q.Get("client_id")]
	if !ok || c.Secret == "" || q.Get("response_type") != "code" || q.Get("redirect_uri") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	if _, ok := p.o.Users[q.Get("login_hint")]; !ok {
		http.Error(w, "unknown user", http.StatusForbidden)
		return
	}
	code := randomToken()
	p.mu.Lock()
	p.codes[code] = idpCode{user: q.Get("login_hint"), client: q.Get("client_id"), nonce: q.Get("nonce")}
	p.mu.Unlock()
	u, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	v := u.Query()
	v.Set("code", code)
	if s := q.Get("state"); s != "" {
		v.Set("state", s)
	}
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (p *IdP) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if err := r.ParseForm(); err != nil {
		oauthErr(w, http.StatusBadRequest, "invalid_request", "not a form")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c, known := p.o.Clients[id]
	if !known || c.Secret == "" || secret != c.Secret {
		oauthErr(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		p.mu.Lock()
		code, ok := p.codes[r.PostForm.Get("code")]
		delete(p.codes, r.PostForm.Get("code"))
		p.mu.Unlock()
		if !ok || code.client != id {
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "unknown code")
			return
		}
		u := p.o.Users[code.user]
		now := time.Now()
		idt := p.sign(p.key, "JWT", map[string]any{"iss": p.Issuer(), "sub": u.Subject, "aud": id,
			"email": u.Email, "email_verified": true, "nonce": code.nonce,
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
		writeJSON(w, http.StatusOK, map[string]any{"id_token": idt, "access_token": randomToken(),
			"token_type": "Bearer", "expires_in": 3600, "scope": "openid email"})
	case tokenExchangeGrant:
		p.exchange(w, r, id, c)
	default:
		oauthErr(w, http.StatusBadRequest, "unsupported_grant_type", "authorization_code or token exchange")
	}
}

// exchange is the token exchange for an ID-JAG (draft §4.3.3 processing rules).
func (p *IdP) exchange(w http.ResponseWriter, r *http.Request, clientID string, c IdPClient) {
	f := r.PostForm
	if f.Get("requested_token_type") != tokenTypeIDJAG {
		oauthErr(w, http.StatusBadRequest, "invalid_request", "requested_token_type must be "+tokenTypeIDJAG)
		return
	}
	if f.Get("subject_token_type") != tokenTypeIDToken {
		oauthErr(w, http.StatusBadRequest, "invalid_request", "subject_token_type must be "+tokenTypeIDToken)
		return
	}
	// The subject token: an ID token this provider issued to this client, unexpired.
	tok, err := josejwt.ParseSigned(f.Get("subject_token"), []jose.SignatureAlgorithm{jose.RS256})
	var idt josejwt.Claims
	var extra struct {
		Email string `json:"email"`
	}
	if err != nil || tok.Claims(&p.key.PublicKey, &idt, &extra) != nil ||
		idt.ValidateWithLeeway(josejwt.Expected{Issuer: p.Issuer(), AnyAudience: josejwt.Audience{clientID}, Time: time.Now()}, time.Minute) != nil {
		oauthErr(w, http.StatusBadRequest, "invalid_grant", "the subject token is not a valid ID token of this client")
		return
	}
	// Policy (the extension's §7.6.1): the audience must be an authorization server the
	// policy names and the resource one of its resources.
	aud, res := f.Get("audience"), f.Get("resource")
	allowed := false
	for _, a := range p.o.Audiences {
		if aud == a && (res == "" || strings.HasPrefix(res, strings.TrimSuffix(a, "/")+"/")) {
			allowed = true
		}
	}
	if !allowed {
		oauthErr(w, http.StatusBadRequest, "invalid_target", "the policy grants no access to that audience and resource")
		return
	}
	now := time.Now()
	claims := map[string]any{"iss": p.Issuer(), "sub": idt.Subject, "aud": aud, "client_id": c.ResourceClientID,
		"jti": randomToken(), "iat": now.Unix(), "exp": now.Add(p.o.Lifetime).Unix(), "email": extra.Email}
	if res != "" {
		claims["resource"] = res
	}
	if sc := f.Get("scope"); sc != "" {
		claims["scope"] = sc
	}
	jag := p.sign(p.key, IDJAGTyp, claims)
	p.mu.Lock()
	p.exchanges++
	p.mu.Unlock()
	out := map[string]any{"issued_token_type": tokenTypeIDJAG, "access_token": jag, "token_type": "N_A",
		"expires_in": int(p.o.Lifetime / time.Second)}
	if sc := f.Get("scope"); sc != "" {
		out["scope"] = sc
	}
	writeJSON(w, http.StatusOK, out)
}

// Mint signs claims with the provider's key, typ as the typ header ("" for none).
func (p *IdP) Mint(t testing.TB, typ string, claims map[string]any) string {
	t.Helper()
	return p.sign(p.key, typ, claims)
}

// MintForeign signs claims with a key that is not in the provider's JWKS (the same kid).
func (p *IdP) MintForeign(t testing.TB, typ string, claims map[string]any) string {
	t.Helper()
	return p.sign(p.foreign, typ, claims)
}

// IDJAGClaims are the claims of a valid ID-JAG for subject at audience and resource for
// clientID, issued now (a base for tests to change).
func (p *IdP) IDJAGClaims(subject, audience, resource, clientID string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": p.Issuer(), "sub": subject, "aud": audience, "resource": resource,
		"client_id": clientID, "jti": randomToken(), "iat": now.Unix(), "exp": now.Add(p.o.Lifetime).Unix(),
		"scope": "mcp"}
}

func (p *IdP) sign(key *rsa.PrivateKey, typ string, claims map[string]any) string {
	opts := (&jose.SignerOptions{}).WithHeader("kid", p.kid)
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, opts)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(claims)
	obj, err := s.Sign(b)
	if err != nil {
		panic(err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		panic(err)
	}
	return out
}

func randomToken() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func oauthErr(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
