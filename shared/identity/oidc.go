package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/oautherr"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Sign-in through the organisation's identity provider (docs/AUTH.md "Signing in: the
// organisation's identity provider"): OpenID Connect authorization code flow with PKCE
// (S256), state and nonce, as a confidential client (client id + secret). The OIDC client
// is github.com/coreos/go-oidc/v3 (discovery, JWKS fetching and rotation, ID token
// signature, issuer, audience and expiry checks) over golang.org/x/oauth2 (the code
// exchange, PKCE): the two libraries most Go services use against Cognito, Okta, Entra,
// Google and Keycloak, kept by CoreOS/Red Hat and the Go team. Written here is only what
// no library does: where the flow's state lives between the two redirects, and the mapping
// of claims to a Person (idclaims.go).
//
// The flow's state (state, nonce, PKCE verifier, return path) lives in a cookie sealed
// like the session (AES-256-GCM), one per flow, named after the state and scoped to the
// callback's path, for 10 minutes: nothing is stored before the identity provider
// answers, a callback without its browser's cookie (another browser, a replay after the
// first use, a forged link) is refused, and a Lambda function needs no table for it.

// OIDCConfig configures the sign-in (the IDP_* settings of docs/AUTH.md).
type OIDCConfig struct {
	// Issuer is the identity provider's issuer URL (https; discovery at
	// Issuer/.well-known/openid-configuration, and the ID token's iss).
	Issuer string
	// ClientID and ClientSecret are the gateway's client at the identity provider.
	ClientID     string
	ClientSecret string
	// RedirectURL is the gateway's callback: PUBLIC_BASE_URL + CallbackPath.
	RedirectURL string
	// Scopes are asked for; nil means openid, email and profile.
	Scopes []string
	// GroupsClaim is the ID token claim holding the person's groups ("groups" at Okta,
	// Entra and Keycloak, "cognito:groups" at Cognito); "" reads none.
	GroupsClaim string
	// TrustEmail treats the email claim as verified when the identity provider sends no
	// email_verified claim (Entra single-tenant applications; docs/AUTH.md).
	TrustEmail bool
	// HTTPClient talks to the identity provider; nil means a client with a 10 s timeout.
	HTTPClient *http.Client
}

// SignIn serves the sign-in routes: SignInPath, CallbackPath, SignOutPath, SessionPath and
// NoMembershipPath. Build it with NewSignIn.
type SignIn struct {
	cfg      OIDCConfig
	sessions *Sessions
	people   *Service
	logger   *slog.Logger
	client   *http.Client

	mu       sync.Mutex // guards the discovery below, done at the first sign-in
	oauth    *oauth2.Config
	verifier *oidc.IDTokenVerifier
}

// Further routes of the sign-in.
const (
	// SessionPath answers the signed-in person and memberships as JSON (GET), or 401.
	SessionPath = "/auth/session"
	// NoMembershipPath is the page of a signed-in person who is a member of no workspace.
	NoMembershipPath = "/auth/no-membership"
)

// flowTTL is how long a started sign-in may take at the identity provider.
const flowTTL = 10 * time.Minute

// NewSignIn checks cfg and returns the sign-in routes. Discovery (the identity provider's
// metadata and keys) happens at the first sign-in, not here, so that a cold start of the
// marketplace function does not wait on the identity provider. Errors: a missing issuer,
// client id or redirect URL, an issuer or redirect URL that is not an absolute http(s)
// URL, or a nil sessions or people.
func NewSignIn(cfg OIDCConfig, sessions *Sessions, people *Service, logger *slog.Logger) (*SignIn, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" || cfg.RedirectURL == "" {
		return nil, errors.New("identity: sign-in needs IDP_ISSUER, IDP_CLIENT_ID and the callback URL")
	}
	for _, u := range []string{cfg.Issuer, cfg.RedirectURL} {
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" || (pu.Scheme != "https" && pu.Scheme != "http") {
			return nil, fmt.Errorf("identity: %q is not an absolute http(s) URL", u)
		}
	}
	if sessions == nil || people == nil {
		return nil, errors.New("identity: sign-in needs the sessions and the people service")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Scopes == nil {
		cfg.Scopes = []string{oidc.ScopeOpenID, "email", "profile"}
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	return &SignIn{cfg: cfg, sessions: sessions, people: people, logger: logger, client: client}, nil
}

// discover returns the OAuth configuration and the ID token verifier, discovering the
// identity provider on first use (a failure is retried at the next sign-in).
func (s *SignIn) discover(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.oauth != nil {
		return s.oauth, s.verifier, nil
	}
	// The provider keeps this client for its key set (fetched in the background).
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), s.client), s.cfg.Issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("identity: discovery of %s: %w", s.cfg.Issuer, err)
	}
	s.oauth = &oauth2.Config{ClientID: s.cfg.ClientID, ClientSecret: s.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: s.cfg.RedirectURL, Scopes: s.cfg.Scopes}
	s.verifier = p.Verifier(&oidc.Config{ClientID: s.cfg.ClientID})
	return s.oauth, s.verifier, nil
}

// flow is the sealed state of one sign-in between the two redirects.
type flow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	ReturnTo string `json:"r"`
	Exp      int64  `json:"e"`
}

// flowCookieName is the cookie of the flow with state.
func flowCookieName(state string) string {
	h := sha256.Sum256([]byte("signin|" + state))
	return "agentpack_signin_" + hex.EncodeToString(h[:8])
}

// Handler serves GET SignInPath?return_to=PATH (starts a sign-in: 302 to the identity
// provider), GET CallbackPath (the identity provider's answer: 303 to the return path with
// the session cookie, or to NoMembershipPath), GET|POST SignOutPath (clears the session,
// 303 to return_to or /), GET SessionPath and GET NoMembershipPath. Every refusal is a
// page with a precise message and a 4xx status (5xx when the identity provider or the
// database fails), and stores nothing.
func (s *SignIn) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+SignInPath, s.start)
	mux.HandleFunc("GET "+CallbackPath, s.callback)
	mux.HandleFunc("GET "+SignOutPath, s.signOut)
	mux.HandleFunc("POST "+SignOutPath, s.signOut)
	mux.Handle("GET "+SessionPath, SessionHandler(s.sessions, s.people))
	mux.Handle("GET "+NoMembershipPath, NoMembershipHandler(s.sessions))
	return noStore(mux)
}

func noStore(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
		h.ServeHTTP(w, r)
	})
}

func (s *SignIn) start(w http.ResponseWriter, r *http.Request) {
	if to, ok := s.canonicalOrigin(r); ok {
		// One origin: the identity provider answers at RedirectURL's origin, and the flow
		// cookie, the session and the return path must all live there. A sign-in started on
		// another host name for the same server (localhost for 127.0.0.1, the API's own domain
		// beside a custom domain) moves there first, with the same return path; otherwise
		// the callback finds no flow cookie and the person loops (docs/AUTH.md "One origin").
		http.Redirect(w, r, to+r.URL.RequestURI(), http.StatusFound)
		return
	}
	rt := DefaultReturnTo
	if v, ok := r.URL.Query()["return_to"]; ok {
		var safe bool
		if rt, safe = SafeReturnTo(v[0]); !safe {
			page(w, http.StatusBadRequest, "Sign-in refused", "return_to must be a path of this site (it starts with a single /).")
			return
		}
	}
	oc, _, err := s.discover(r.Context())
	if err != nil {
		s.logger.ErrorContext(r.Context(), "identity provider discovery failed", "err", err)
		page(w, http.StatusBadGateway, "Sign-in unavailable", "The identity provider cannot be reached. Try again in a moment.")
		return
	}
	f := flow{State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier(), ReturnTo: rt,
		Exp: time.Now().Add(flowTTL).Unix()}
	name := flowCookieName(f.State)
	v, err := s.sessions.seal(name, f)
	if err != nil {
		page(w, http.StatusBadRequest, "Sign-in refused", "The return path is too long.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: v, Path: CallbackPath, MaxAge: int(flowTTL.Seconds()),
		HttpOnly: true, Secure: s.sessions.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, oc.AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusFound)
}

// Origin is the origin people sign in at: RedirectURL's scheme://host[:port], where the
// identity provider sends the browser back and the session cookie lives; "" for a nil SignIn
// or a RedirectURL that is not an absolute URL.
func (s *SignIn) Origin() string {
	if s == nil {
		return ""
	}
	u, err := url.Parse(s.cfg.RedirectURL)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// canonicalOrigin is Origin when r came to another host name; ok is false when r is
// already on it, or when there is no Origin.
func (s *SignIn) canonicalOrigin(r *http.Request) (string, bool) {
	o := s.Origin()
	if o == "" || strings.EqualFold(strings.SplitN(o, "://", 2)[1], r.Host) {
		return "", false
	}
	return o, true
}

func (s *SignIn) callback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" || len(state) > 256 {
		page(w, http.StatusBadRequest, "Sign-in refused", "The identity provider's answer has no state. Start the sign-in again.")
		return
	}
	name := flowCookieName(state)
	c, err := r.Cookie(name)
	var f flow
	if err != nil || !s.sessions.open(name, c.Value, &f) || subtle.ConstantTimeCompare([]byte(f.State), []byte(state)) != 1 ||
		time.Now().Unix() >= f.Exp {
		page(w, http.StatusBadRequest, "Sign-in refused",
			"This sign-in is unknown, expired or already finished (no matching state in this browser). Start the sign-in again.")
		return
	}
	// The flow is used once, whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: CallbackPath, MaxAge: -1, HttpOnly: true,
		Secure: s.sessions.secure, SameSite: http.SameSiteLaxMode})
	// RFC 9207 §2.4: an iss in the answer must be the configured identity provider's; a
	// mismatch is a mix-up or a forged answer and nothing of it is used or shown.
	if q.Has("iss") && q.Get("iss") != s.cfg.Issuer {
		page(w, http.StatusBadRequest, "Sign-in refused",
			"The answer's issuer (iss) is not this gateway's identity provider: it was ignored and nothing of it is shown. Start the sign-in again.")
		return
	}
	if e := q.Get("error"); e != "" {
		status := http.StatusBadRequest
		switch e {
		case "access_denied":
			status = http.StatusForbidden
		case "server_error", "temporarily_unavailable":
			status = http.StatusBadGateway
		}
		page(w, status, "Sign-in refused by the identity provider", "The identity provider answered "+oauthErrorCode(e)+".")
		return
	}
	code := q.Get("code")
	if code == "" || len(code) > 4096 {
		page(w, http.StatusBadRequest, "Sign-in refused", "The identity provider's answer has no authorization code.")
		return
	}
	oc, verifier, err := s.discover(ctx)
	if err != nil {
		s.logger.ErrorContext(ctx, "identity provider discovery failed", "err", err)
		page(w, http.StatusBadGateway, "Sign-in unavailable", "The identity provider cannot be reached. Try again in a moment.")
		return
	}
	tok, err := oc.Exchange(oidc.ClientContext(ctx, s.client), code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		s.logger.WarnContext(ctx, "identity provider refused the code", "err", exchangeError(err))
		page(w, http.StatusBadGateway, "Sign-in refused", "The identity provider did not accept the sign-in's code. Start the sign-in again.")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		page(w, http.StatusBadGateway, "Sign-in refused", "The identity provider sent no ID token (is the openid scope allowed for this client?).")
		return
	}
	idt, err := verifier.Verify(oidc.ClientContext(ctx, s.client), raw)
	if err != nil {
		s.logger.WarnContext(ctx, "ID token refused", "err", err)
		page(w, http.StatusBadGateway, "Sign-in refused", "The identity provider's ID token is invalid (signature, issuer, audience or expiry).")
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		page(w, http.StatusBadRequest, "Sign-in refused", "The ID token's nonce does not match this sign-in.")
		return
	}
	claims, err := s.claims(idt)
	if err != nil {
		page(w, http.StatusBadRequest, "Sign-in refused", err.Error())
		return
	}
	p, err := s.people.SignIn(ctx, claims)
	if err != nil {
		if e := apperr.As(err); e != nil && e.Code == apperr.Validation {
			page(w, http.StatusBadRequest, "Sign-in refused", e.Message)
			return
		}
		s.logger.ErrorContext(ctx, "sign-in not recorded", "err", err)
		page(w, http.StatusServiceUnavailable, "Sign-in failed", "The sign-in could not be recorded. Try again in a moment.")
		return
	}
	finish(w, r, s.sessions, s.people, p, f.ReturnTo, s.logger)
}

// finish starts p's session and sends the browser to returnTo, or to NoMembershipPath when
// p is a member of no workspace (and no superuser).
func finish(w http.ResponseWriter, r *http.Request, sessions *Sessions, people *Service, p Person, returnTo string, logger *slog.Logger) {
	if err := sessions.Set(w, p); err != nil {
		logger.ErrorContext(r.Context(), "session not set", "err", err)
		page(w, http.StatusInternalServerError, "Sign-in failed", "The session could not be started.")
		return
	}
	if _, err := people.Principal(r.Context(), p.ID, ""); errors.Is(err, ErrNoMembership) {
		returnTo = NoMembershipPath
	}
	http.Redirect(w, r, returnTo, http.StatusSeeOther)
}

func (s *SignIn) signOut(w http.ResponseWriter, r *http.Request) {
	s.sessions.Clear(w)
	rt, ok := SafeReturnTo(r.URL.Query().Get("return_to"))
	if !ok {
		rt = "/"
	}
	http.Redirect(w, r, rt, http.StatusSeeOther)
}

// oauthErrorCode is what a page shows of an OAuth error code the identity provider
// answered: a registered code, quoted, else oautherr.Unregistered (a free-form code could
// be text written to be read as the gateway's; package oautherr).
func oauthErrorCode(e string) string {
	if !oautherr.Registered(e) {
		return oautherr.Unregistered
	}
	return `"` + e + `"`
}

// exchangeError is what a log may say of a failed code exchange: the OAuth error code,
// never the response body (which may echo the code or a secret).
func exchangeError(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			return "token endpoint answered " + oauthErrorCode(re.ErrorCode)
		}
		if re.Response != nil {
			return "token endpoint answered HTTP " + re.Response.Status
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return "token endpoint unreachable: " + ue.Err.Error()
	}
	return "token exchange failed"
}
