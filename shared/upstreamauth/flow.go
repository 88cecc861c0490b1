package upstreamauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/oautherr"
)

// Service runs upstream authorization flows and hands out tokens. Safe for concurrent use;
// create one per process with New.
type Service struct {
	store      Store
	http       *http.Client
	checkURL   func(string) error
	redirect   string
	cimdURL    string
	clientName string
	maxStepUps int
	consentURL string
	defaults   bool // Options.DefaultEndpoints
	now        func() time.Time
	log        *slog.Logger
	refreshes  singleflight.Group
	// scopeChallenges: Key.String() → the last 403 insufficient_scope challenge answered
	// to a request made with that grant, by any Credentials of it (TakeScopeChallenge).
	scopeChallenges sync.Map
}

// TakeScopeChallenge returns (and forgets) the last 403 insufficient_scope challenge an
// upstream answered to a request made with the grant under k, or nil: what a step-up
// authorization (Begin with that Challenge) needs. Sessions are shared, so the Credentials
// that saw the 403 may not be the caller's own instance; the challenge is kept per grant.
func (s *Service) TakeScopeChallenge(k Key) *Challenge {
	v, ok := s.scopeChallenges.LoadAndDelete(k.String())
	if !ok {
		return nil
	}
	return v.(*Challenge)
}

// New returns a Service. opts.Store is required.
func New(opts Options) *Service {
	s := &Service{store: opts.Store, http: opts.HTTPClient, checkURL: opts.CheckURL, redirect: opts.RedirectURL,
		cimdURL: opts.ClientMetadataURL, clientName: opts.ClientName, maxStepUps: opts.MaxStepUps, now: opts.Now, log: opts.Logger,
		consentURL: opts.ConsentURL, defaults: opts.DefaultEndpoints}
	if s.http == nil {
		s.http = &http.Client{Timeout: 15 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if s.clientName == "" {
		s.clientName = "Agentpack MCP Gateway"
	}
	if s.maxStepUps <= 0 {
		s.maxStepUps = 2
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// MaxStepUps is how many scope step-up authorizations one operation may run (Options.MaxStepUps).
func (s *Service) MaxStepUps() int { return s.maxStepUps }

func (s *Service) check(u string) error {
	if s.checkURL == nil || u == "" {
		return nil
	}
	return s.checkURL(u)
}

// BeginRequest is one authorization to start.
type BeginRequest struct {
	Caller    Caller
	Key       Key    // connection (+ subject for oauth_per_user)
	ServerURL string // the upstream MCP endpoint (the protected resource)
	// Challenge is the upstream's WWW-Authenticate; nil makes Begin probe ServerURL with an
	// unauthenticated initialize to get one.
	Challenge *Challenge
	// Client is the pre-registered client, if any.
	Client *Client
	// ReturnTo is shown as a link on the callback page ("" for none).
	ReturnTo string
	// Settings are the admin's OAuth settings of the connection (its catalog entry's with
	// the connection's over them); the zero value discovers as the spec says.
	Settings Settings
}

// Begin discovers the upstream's authorization server, settles the client identity, stores a
// Pending (state, PKCE verifier; single use, StateTTL; replacing the caller's earlier pending
// authorization of the connection) and returns the link for the caller's browser: with
// Options.ConsentURL, the gateway's consent page (ConsentURL + a random link id), else the
// authorization server's URL. Scopes: those an admin configured — the OAuth settings'
// scopes, else the pre-registered client's — and none other (plus a step-up challenge's);
// without any, the challenge's (else scopes_supported); offline_access when offered;
// step-up requests those already granted for the key with the new ones. Errors are
// *FlowError.
func (s *Service) Begin(ctx context.Context, r BeginRequest) (authURL string, err error) {
	defer derrors.Wrap(&err, "upstreamauth: begin %s", r.Caller.WorkspaceID)
	if s.redirect == "" {
		return "", flowErr("authorization", nil, "no redirect URL configured")
	}
	ch := Challenge{}
	if r.Challenge != nil {
		ch = *r.Challenge
	} else {
		probed, err := s.probe(ctx, r.ServerURL)
		if err != nil {
			return "", err
		}
		ch = probed
	}
	d, err := s.discover(ctx, r.ServerURL, ch, r.Settings)
	if err != nil {
		return "", err
	}
	if len(r.Settings.Scopes) == 0 && r.Client != nil && len(r.Client.Scopes) > 0 {
		// The pre-registered client's scopes, when no OAuth setting names any (discover
		// applied the settings').
		d.scopes = d.withOffline(requestedScopes(configuredScopes(r.Settings, r.Client), ch))
	}
	prev, _ := s.store.GrantGet(ctx, r.Key)
	var ep *Endpoint
	if prev != nil && prev.Endpoint.Registration == "dynamic" && prev.Endpoint.Issuer == d.ep.Issuer &&
		prev.Endpoint.TokenURL == d.ep.TokenURL && r.Client == nil {
		// Re-authorization or step-up with the same authorization server: keep the client
		// registered last time rather than register one more.
		e := d.ep
		e.ClientID, e.ClientSecret, e.AuthMethod, e.Registration = prev.Endpoint.ClientID, prev.Endpoint.ClientSecret,
			prev.Endpoint.AuthMethod, prev.Endpoint.Registration
		ep = &e
	} else if ep, err = s.register(ctx, r.Key.ConnectionID, d, r.Client); err != nil {
		return "", err
	}
	scopes := d.scopes
	if prev != nil && prev.Endpoint.Issuer == ep.Issuer {
		scopes = union(prev.Scopes, scopes) // step-up keeps what was granted (SEP-2350)
	}
	p := &Pending{State: rand.Text(), Caller: r.Caller, Key: r.Key, ServerURL: r.ServerURL,
		Verifier: oauth2.GenerateVerifier(), ExpiresAt: s.now().Add(StateTTL), Endpoint: *ep,
		Scopes: scopes, RedirectURL: s.redirect, ReturnTo: r.ReturnTo}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(p.Verifier)}
	if _, baked := bakedResource(ep.AuthURL); !baked {
		// An endpoint that carries its own resource gets no second one (RFC 8707 §2: two
		// resource parameters are invalid_target at a strict server); ep.Resource is that
		// one then (discover).
		opts = append(opts, oauth2.SetAuthURLParam("resource", ep.Resource))
	}
	names := slices.Sorted(maps.Keys(r.Settings.AuthorizationParams))
	for _, k := range names {
		if !slices.Contains(reservedParams, strings.ToLower(k)) { // Validate refused them; never let one through
			opts = append(opts, oauth2.SetAuthURLParam(k, r.Settings.AuthorizationParams[k]))
		}
	}
	p.AuthURL = oauthConfig(ep, s.redirect, scopes).AuthCodeURL(p.State, opts...)
	if s.consentURL != "" {
		p.Link = rand.Text()
	}
	if err := s.store.PendingPut(ctx, p); err != nil {
		return "", fmt.Errorf("upstreamauth: store pending state: %w", err)
	}
	if p.Link != "" {
		return s.consentURL + p.Link, nil
	}
	return p.AuthURL, nil
}

// probe sends an unauthenticated initialize to serverURL and returns its 401 challenge (a
// zero Challenge when the answer is another status or has none).
func (s *Service) probe(ctx context.Context, serverURL string) (Challenge, error) {
	if err := s.check(serverURL); err != nil {
		return Challenge{}, flowErr("discovery", err, "server URL refused: %s", publicMsg(err))
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"agentpack-gateway","version":"1.0.0"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, strings.NewReader(body))
	if err != nil {
		return Challenge{}, flowErr("discovery", err, "server URL is not usable")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := s.http.Do(req)
	if err != nil {
		return Challenge{}, flowErr("discovery", err, "upstream did not answer")
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusUnauthorized {
		return Challenge{}, nil
	}
	ch, err := ParseChallenge(resp.Header)
	if err != nil {
		return Challenge{}, flowErr("discovery", err, "upstream sent a malformed WWW-Authenticate header")
	}
	return ch, nil
}

// Result is what Complete did, for the callback page and the caller's status.
type Result struct {
	Key      Key
	Caller   Caller
	ReturnTo string
	Status   Status
}

// Completer is who finishes a flow when the callback request is authenticated: the
// subject must be the one who began it, and the flow's workspace one of theirs.
type Completer struct {
	Subject       string
	Workspaces    []string
	AllWorkspaces bool // a superuser
	// Admin is true when the principal may complete a workspace's shared grant (an admin or
	// superuser; the workspace itself is checked with Workspaces).
	Admin bool
}

// CompleterOf is the Completer of exactly caller c.
func CompleterOf(c Caller) *Completer {
	return &Completer{Subject: c.Subject, Workspaces: []string{c.WorkspaceID}}
}

func (c *Completer) began(p *Pending) bool {
	return c.Subject == p.Caller.Subject && (c.AllWorkspaces || slices.Contains(c.Workspaces, p.Caller.WorkspaceID))
}

// Complete finishes the flow with the callback's query (code, state, iss, or error). who,
// when non-nil (the callback request was authenticated), must be the one who began it, in a
// workspace of theirs. The state is consumed whatever the outcome. Errors: ErrStateUnknown,
// ErrStateExpired, ErrStateForeign, or a *FlowError wrapping ErrIssuerMismatch (the
// response's iss is not the flow's issuer: nothing of it is used) or ErrDenied (the server
// answered error; its Reason shows only a registered error code, and none when the response
// cannot be tied to the issuer: astext.go), all via errors.Is. On
// success the Grant is stored and its Status returned.
//
// With Options.ConsentURL the flow also needs the browser binding the consent page set:
// Complete (no binding) then refuses with ErrUnbound; the callback uses CompleteBound.
func (s *Service) Complete(ctx context.Context, who *Completer, q url.Values) (_ *Result, err error) {
	defer derrors.Wrap(&err, "upstreamauth: complete")
	return s.CompleteBound(ctx, who, "", q)
}

// CompleteBound is Complete for a callback that carried binding, the value of the cookie
// Consent set (BindingCookieName): with Options.ConsentURL it must hash to the binding the
// consent page recorded for this state, else ErrUnbound (the state is spent, nothing is
// stored). Without a consent page binding is ignored.
func (s *Service) CompleteBound(ctx context.Context, who *Completer, binding string, q url.Values) (_ *Result, err error) {
	defer derrors.Wrap(&err, "upstreamauth: complete bound")
	state := q.Get("state")
	if state == "" || len(state) > 256 {
		return nil, ErrStateUnknown
	}
	p, err := s.store.PendingTake(ctx, state)
	if err != nil {
		return nil, err
	}
	res := &Result{Key: p.Key, Caller: p.Caller, ReturnTo: p.ReturnTo}
	if who != nil && !who.began(p) {
		return res, ErrStateForeign
	}
	if s.consentURL != "" && (len(p.BindingHash) == 0 || binding == "" ||
		subtle.ConstantTimeCompare(bindingHash(binding), p.BindingHash) != 1) {
		return res, ErrUnbound
	}
	if !s.now().Before(p.ExpiresAt) {
		return res, ErrStateExpired
	}
	// RFC 9207 §2.4 (MCP authorization, "Authorization Response Validation"): the issuer is
	// checked before anything else in the response is read. A present iss must equal the
	// issuer the flow began with; an authorization server that advertises
	// authorization_response_iss_parameter_supported must send it. A mismatch is a mix-up or
	// a forged response: nothing of it is shown or acted on, and no token is requested.
	iss, hasIss := q.Get("iss"), q.Has("iss")
	if (hasIss || p.Endpoint.IssSupported) && iss != p.Endpoint.Issuer {
		return res, &FlowError{Step: "callback", Err: ErrIssuerMismatch,
			Reason: "the authorization response's issuer (iss) does not match this connection's authorization server: the response was ignored, none of its content is shown and no token was requested; start the authorization again"}
	}
	if q.Has("error") {
		return res, deniedError(q, hasIss)
	}
	code := q.Get("code")
	if code == "" {
		return res, flowErr("callback", nil, "the authorization response carries no code")
	}
	tok, err := oauthConfig(&p.Endpoint, p.RedirectURL, p.Scopes).Exchange(s.clientCtx(ctx), code,
		oauth2.VerifierOption(p.Verifier), oauth2.SetAuthURLParam("resource", p.Endpoint.Resource))
	if err != nil {
		return res, flowErr("exchange", err, "the token endpoint refused the code%s", oauthReason(err))
	}
	g := s.grantFrom(p.Key, &p.Endpoint, tok, p.Scopes, p.Caller.Subject)
	if err := s.store.GrantPut(ctx, g); err != nil {
		return res, fmt.Errorf("upstreamauth: store grant: %w", err)
	}
	res.Status = StatusOf(g)
	return res, nil
}

func (s *Service) grantFrom(k Key, ep *Endpoint, tok *oauth2.Token, requested []string, by string) *Grant {
	scopes := requested
	if sc, ok := tok.Extra("scope").(string); ok && sc != "" {
		// RFC 6749 §5.1 separates scopes by spaces; GitHub (and others) answer commas.
		scopes = strings.FieldsFunc(sc, func(r rune) bool { return r == ' ' || r == ',' })
	}
	var expiry time.Time
	if !tok.Expiry.IsZero() {
		// oauth2 stamps Expiry with the wall clock; carry the lifetime over to the Service's clock.
		expiry = s.now().Add(time.Until(tok.Expiry)).UTC()
	}
	return &Grant{Key: k, Endpoint: *ep, AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		TokenType: tok.TokenType, Expiry: expiry, Scopes: scopes, AuthorizedBy: by, AuthorizedAt: s.now().UTC()}
}

func (s *Service) clientCtx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, s.http)
}

// oauthReason is the OAuth error code of a token endpoint refusal, as " (code)" when it is
// a registered one (oautherr.Text), else " (an unregistered error code)"; "" without one.
// Never the response body nor its error_description: both are the authorization server's
// own text (and a body could echo a secret).
func oauthReason(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode != "" {
		return " (" + oautherr.Text(re.ErrorCode) + ")"
	}
	return ""
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
