package connections

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/upstreamauth"
)

// Upstream authorization of connections (docs/UPSTREAM-AUTH.md): auth modes, the consent
// round trip (install or POST …/authorize answers an authorizationUrl; GET
// /api/oauth/callback finishes), the stored token in test and refresh, revocation on
// uninstall and delete.

// HealthCheckActor is the actor name the scheduled health check refreshes with.
const HealthCheckActor = "healthcheck"

// Authorization is what a client that started (or asked about) an authorization sees.
type Authorization struct {
	// Status: authorized | authorization_required | failed.
	Status string `json:"status" enum:"authorized,authorization_required,failed"`
	// AuthorizationURL is where the caller consents (status authorization_required).
	AuthorizationURL string `json:"authorizationUrl,omitempty" format:"uri" doc:"Open in a browser to consent at the upstream's authorization server; single use, valid 10 minutes. The browser returns to GET /api/oauth/callback."`
	// Reason says why it is not authorized (never a token or secret).
	Reason string `json:"reason,omitempty" doc:"Why it is not authorized. Never contains a token."`
}

// AuthorizationState is a connection's authorization as its status shows it: authorized,
// required or expired, who authorized it and when (no token).
type AuthorizationState struct {
	Mode string `json:"mode" enum:"none,headers,oauth,oauth_per_user,client_credentials"`
	upstreamauth.Status
	// AuthorizedByName names AuthorizedBy's person (email, else name) when the gateway
	// knows them (NameAuthorizers).
	AuthorizedByName string `json:"authorizedByName,omitempty" doc:"The email (else name) of the person authorizedBy names, when the gateway knows them; authorizedBy stays their token subject."`
}

// NameAuthorizers sets AuthorizedByName of each of states (nil ones skipped) whose
// AuthorizedBy is a person the gateway knows, with one statement for all of them
// (db.PersonLabels), so that pages show who authorized by email rather than by subject.
func (s *Service) NameAuthorizers(ctx context.Context, states ...*AuthorizationState) (err error) {
	defer derrors.Wrap(&err, "connections: name authorizers")
	var subjects []string
	for _, st := range states {
		if st != nil && st.AuthorizedBy != "" {
			subjects = append(subjects, st.AuthorizedBy)
		}
	}
	if len(subjects) == 0 {
		return nil
	}
	labels, err := db.PersonLabels(ctx, s.Pool, subjects)
	if err != nil {
		return err
	}
	for _, st := range states {
		if st != nil {
			st.AuthorizedByName = labels[st.AuthorizedBy]
		}
	}
	return nil
}

func validMode(m string) error {
	if !upstreamauth.Mode(m).Valid() {
		return apperr.New(apperr.Validation, "authMode must be one of none, headers, oauth, oauth_per_user, client_credentials")
	}
	return nil
}

// grantKey is the grant a principal's use of c reads: the connection's shared one, or for
// oauth_per_user the subject's own.
func grantKey(c *db.Connection, subject string) upstreamauth.Key {
	k := upstreamauth.Key{ConnectionID: c.ID}
	if upstreamauth.Mode(c.AuthMode) == upstreamauth.ModeOAuthPerUser {
		k.Subject = subject
	}
	return k
}

// TargetFor is TargetOf plus the upstream credentials of connection c for subject (the
// caller; used by oauth_per_user): for the OAuth modes the Target carries the stored
// token (refreshed as needed) and, for oauth_per_user, a session id of its own per subject
// ("<connection id>|<subject>") so that sessions never mix users.
func (s *Service) TargetFor(ctx context.Context, c *db.Connection, subject string) mcpclient.Target {
	t := TargetOf(c)
	if s.Auth == nil {
		return t
	}
	switch upstreamauth.Mode(c.AuthMode) {
	case upstreamauth.ModeOAuth:
		t.Credentials = s.Auth.Credentials(grantKey(c, subject))
	case upstreamauth.ModeOAuthPerUser:
		t.Credentials = s.Auth.Credentials(grantKey(c, subject))
		t.ConnectionID = c.ID + "|" + subject
	case upstreamauth.ModeClientCredentials:
		if cl, err := s.preregistered(ctx, c); err == nil && cl != nil {
			t.Credentials = s.Auth.ClientCredentials(grantKey(c, ""), c.URL, *cl)
		}
	}
	return t
}

// preregistered is the pre-registered client of c's catalog entry (nil when none).
func (s *Service) preregistered(ctx context.Context, c *db.Connection) (*upstreamauth.Client, error) {
	if c.CatalogEntryID == nil || s.AuthClients == nil {
		return nil, nil
	}
	return s.AuthClients(ctx, *c.CatalogEntryID)
}

// beginAuthorization starts the consent for c as p and answers the status to show.
func (s *Service) beginAuthorization(ctx context.Context, p *auth.Principal, c *db.Connection, returnTo string) *Authorization {
	return s.beginAuthorizationFor(ctx, p, c, returnTo, nil)
}

// beginAuthorizationFor is beginAuthorization answering the upstream's challenge ch (nil:
// probe the upstream for one); a 403 insufficient_scope challenge asks for its scopes on
// top of those already granted (step-up).
func (s *Service) beginAuthorizationFor(ctx context.Context, p *auth.Principal, c *db.Connection, returnTo string, ch *upstreamauth.Challenge) *Authorization {
	if s.Auth == nil {
		return &Authorization{Status: upstreamauth.OutcomeFailed, Reason: "upstream authorization is not configured on this gateway"}
	}
	pre, err := s.preregistered(ctx, c)
	if err != nil {
		s.logger().ErrorContext(ctx, "pre-registered client unreadable", "connection_id", c.ID, "err", err)
		return &Authorization{Status: upstreamauth.OutcomeFailed, Reason: "the catalog entry's OAuth client could not be read"}
	}
	set, err := s.effectiveSettings(ctx, c)
	if err != nil {
		s.logger().ErrorContext(ctx, "oauth settings unreadable", "connection_id", c.ID, "err", err)
		return &Authorization{Status: upstreamauth.OutcomeFailed, Reason: "the connection's OAuth settings could not be read"}
	}
	ws := ""
	if c.WorkspaceID != nil {
		ws = *c.WorkspaceID
	}
	u, err := s.Auth.Begin(ctx, upstreamauth.BeginRequest{Caller: upstreamauth.Caller{WorkspaceID: ws, Subject: p.Subject},
		Key: grantKey(c, p.Subject), ServerURL: c.URL, Client: pre, ReturnTo: returnTo, Challenge: ch, Settings: set})
	var fe *upstreamauth.FlowError
	switch {
	case err == nil:
		return &Authorization{Status: upstreamauth.OutcomeRequired, AuthorizationURL: u}
	case errors.As(err, &fe):
		s.logger().WarnContext(ctx, "upstream authorization could not start", "connection_id", c.ID, "step", fe.Step, "err", fe.Err)
		return &Authorization{Status: upstreamauth.OutcomeFailed, Reason: fe.Reason}
	default:
		s.logger().ErrorContext(ctx, "upstream authorization could not start", "connection_id", c.ID, "err", err)
		return &Authorization{Status: upstreamauth.OutcomeFailed, Reason: "internal error"}
	}
}

// Authorize (re-)starts the consent of connection id (POST /api/mcp-connections/{id}/authorize):
// an admin for oauth and client_credentials connections, any member of the connection's
// workspace for their own grant of an oauth_per_user connection. client_credentials fetches
// a token at once and connects. Errors: NOT_FOUND, FORBIDDEN, VALIDATION_ERROR (the
// connection does not use OAuth).
func (s *Service) Authorize(ctx context.Context, p *auth.Principal, id, returnTo string) (_ *Authorization, err error) {
	defer derrors.Wrap(&err, "connections: authorize %s", id)
	c, err := s.visible(ctx, s.Pool, p, id)
	if err != nil {
		return nil, err
	}
	mode := upstreamauth.Mode(c.AuthMode)
	if !mode.OAuth() {
		return nil, apperr.New(apperr.Validation, "this connection does not use OAuth (authMode %s)", c.AuthMode)
	}
	if mode != upstreamauth.ModeOAuthPerUser {
		if c, err = s.writable(ctx, s.Pool, p, id); err != nil {
			return nil, err
		}
	}
	if mode == upstreamauth.ModeClientCredentials {
		if s.Auth == nil {
			return &Authorization{Status: upstreamauth.OutcomeFailed, Reason: "upstream authorization is not configured on this gateway"}, nil
		}
		s.Upstreams.Disconnect(c.ID)
		res, err := s.Refresh(ctx, p.Subject, c)
		if err != nil {
			return nil, err
		}
		if !res.OK {
			return &Authorization{Status: upstreamauth.OutcomeFailed, Reason: res.Error}, nil
		}
		s.publish(ctx, c.WorkspaceID, c.ID)
		return &Authorization{Status: upstreamauth.OutcomeAuthorized}, nil
	}
	return s.beginAuthorization(ctx, p, c, returnTo), nil
}

// AuthorizationOf is the authorization state of c for subject (the shared grant, or the
// subject's own for oauth_per_user); nil for connections that do not use OAuth.
func (s *Service) AuthorizationOf(ctx context.Context, c *db.Connection, subject string) (_ *AuthorizationState, err error) {
	defer derrors.Wrap(&err, "connections: authorization of %s", c.ID)
	if !upstreamauth.Mode(c.AuthMode).OAuth() || s.Auth == nil {
		return nil, nil
	}
	st, err := s.Auth.Status(ctx, grantKey(c, subject))
	if err != nil {
		return nil, err
	}
	return &AuthorizationState{Mode: c.AuthMode, Status: st}, nil
}

// OAuthCallback serves GET /api/oauth/callback: the browser's return from the upstream's
// authorization server. With the consent page configured (upstreamauth Options.ConsentURL,
// the gateway's setting) it completes only in the browser the consent page bound to the
// flow (its HttpOnly cookie), else it refuses and stores nothing; a request that also
// carries a bearer token must be the caller who started the flow. On success the connection's tools are
// listed with the new token and the catalog rebuilt; mcp.authorized or
// mcp.authorization_failed is logged (status and reason only).
func (s *Service) OAuthCallback(v *auth.Verifier) http.Handler {
	caller := func(r *http.Request) (*upstreamauth.Completer, error) {
		h := r.Header.Get("Authorization")
		if h == "" {
			return nil, nil
		}
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || v == nil {
			return nil, errors.New("not a bearer token")
		}
		p, err := v.Verify(r.Context(), tok)
		if err != nil {
			return nil, err
		}
		return &upstreamauth.Completer{Subject: p.Subject, Workspaces: p.Workspaces, AllWorkspaces: p.IsSuperuser()}, nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Auth == nil { // read per request: the local stack wires Auth once its port is known
			http.Error(w, "upstream authorization is not configured", http.StatusNotFound)
			return
		}
		s.Auth.CallbackHandler(caller, s.afterCallback).ServeHTTP(w, r)
	})
}

func (s *Service) afterCallback(ctx context.Context, res *upstreamauth.Result, out *upstreamauth.Outcome) {
	if res == nil || !db.IsUUID(res.Key.ConnectionID) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	c, err := db.ConnectionGet(ctx, s.Pool, res.Key.ConnectionID)
	if err != nil {
		return
	}
	out.ConnectionName = c.Name // the callback page names it
	if labels, err := db.PersonLabels(ctx, s.Pool, []string{res.Caller.Subject}); err == nil && labels[res.Caller.Subject] != "" {
		out.Account = labels[res.Caller.Subject] // the person's email rather than their subject
	}
	o := *out
	action := "mcp.authorized"
	extra := map[string]any{"status": o.Status, "authMode": c.AuthMode}
	if o.Reason != "" {
		extra["reason"] = o.Reason
	}
	if o.Status != upstreamauth.OutcomeAuthorized {
		action = "mcp.authorization_failed"
	}
	p := &auth.Principal{Subject: res.Caller.Subject}
	if err := logEvent(ctx, s.Pool, p, action, c, extra); err != nil {
		s.logger().ErrorContext(ctx, "event log write failed", "connection_id", c.ID, "err", err)
	}
	if o.Status == upstreamauth.OutcomeAuthorized && c.Enabled {
		s.Upstreams.Disconnect(s.TargetFor(ctx, c, res.Caller.Subject).ConnectionID)
		if _, err := s.Refresh(ctx, res.Caller.Subject, c); err == nil {
			s.publish(ctx, c.WorkspaceID, c.ID)
		}
	}
}

// revokeGrants revokes (RFC 7009, where offered) and deletes every grant of c before the
// connection goes; failures are logged, never block the removal.
func (s *Service) revokeGrants(ctx context.Context, c *db.Connection) {
	if s.Auth == nil || !upstreamauth.Mode(c.AuthMode).OAuth() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.Auth.Revoke(ctx, c.ID); err != nil {
		s.logger().WarnContext(ctx, "upstream grants not revoked", "connection_id", c.ID, "err", err)
	}
}

// EntryAuthInput is the body of PUT /api/mcp-marketplace/{id}/auth: a catalog entry's
// default auth mode and, optionally, its pre-registered OAuth client.
type EntryAuthInput struct {
	AuthMode string       `json:"authMode" enum:"none,headers,oauth,oauth_per_user,client_credentials" doc:"Default auth mode of new installs of this entry."`
	Client   *EntryClient `json:"client,omitempty" doc:"A client pre-registered with the upstream's authorization server. clientSecret / privateKeyPem are stored encrypted and never returned (hasSecret says whether one is stored)."`
	// OAuth, when set, replaces the entry's OAuth settings (expected issuer or metadata URL,
	// scopes, extra authorization parameters), the default of its connections.
	OAuth *OAuthSettings `json:"oauth,omitempty"`
}

// EntryClient is a pre-registered client as written (secrets in) and shown (secrets out:
// only HasSecret).
type EntryClient struct {
	ClientID          string   `json:"clientId"`
	ClientSecret      string   `json:"clientSecret,omitempty"`
	PrivateKeyPEM     string   `json:"privateKeyPem,omitempty"`
	TokenEndpointAuth string   `json:"tokenEndpointAuth,omitempty"`
	SigningAlg        string   `json:"signingAlg,omitempty"`
	Issuer            string   `json:"issuer,omitempty"`
	Scopes            []string `json:"scopes,omitempty"`
	HasSecret         bool     `json:"hasSecret,omitempty"`
}

// SetEntryAuth sets catalog entry entryID's default auth mode and pre-registered client
// (superuser: the catalog is shared by every workspace). The answer never carries the
// secret. Existing connections keep their own mode. Errors: FORBIDDEN, NOT_FOUND,
// VALIDATION_ERROR.
func (s *Service) SetEntryAuth(ctx context.Context, p *auth.Principal, entryID string, in EntryAuthInput) (_ *EntryAuthInput, err error) {
	defer derrors.Wrap(&err, "connections: set authorization of entry %s", entryID)
	if !p.IsSuperuser() {
		return nil, apperr.New(apperr.Forbidden, "editing the shared catalog requires the superuser role")
	}
	if err := validMode(in.AuthMode); err != nil {
		return nil, err
	}
	if c := in.Client; c != nil {
		switch {
		case c.ClientID == "" || len(c.ClientID) > 512:
			return nil, apperr.New(apperr.Validation, "client.clientId is required (at most 512 characters)")
		case len(c.ClientSecret) > 4096 || len(c.PrivateKeyPEM) > 16384:
			return nil, apperr.New(apperr.Validation, "client secret or key too long")
		}
		switch c.TokenEndpointAuth {
		case "", upstreamauth.AuthNone, upstreamauth.AuthClientSecretBasic, upstreamauth.AuthClientSecretPost:
			if c.PrivateKeyPEM != "" {
				return nil, apperr.New(apperr.Validation, "client.privateKeyPem needs tokenEndpointAuth private_key_jwt")
			}
		case upstreamauth.AuthPrivateKeyJWT:
			if c.PrivateKeyPEM == "" {
				return nil, apperr.New(apperr.Validation, "private_key_jwt needs client.privateKeyPem")
			}
		default:
			return nil, apperr.New(apperr.Validation, "client.tokenEndpointAuth must be none, client_secret_basic, client_secret_post or private_key_jwt")
		}
		if c.Issuer != "" {
			if err := s.Guard.CheckURL(c.Issuer); err != nil {
				return nil, err
			}
		}
		if s.AuthClientPut == nil {
			return nil, apperr.New(apperr.Unavailable, "upstream authorization is not configured on this gateway")
		}
	}
	var settingsRaw []byte
	if in.OAuth != nil {
		if err := s.validSettings(in.OAuth); err != nil {
			return nil, err
		}
		if settingsRaw, err = json.Marshal(in.OAuth); err != nil {
			return nil, err
		}
	}
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if _, err := db.CatalogEntryGet(ctx, tx, entryID); err != nil {
			return err
		}
		if err := db.CatalogEntryAuthModeSet(ctx, tx, entryID, in.AuthMode); err != nil {
			return err
		}
		payload := map[string]any{"authMode": in.AuthMode}
		if settingsRaw != nil {
			if err := db.OAuthSettingsPut(ctx, tx, entryID, true, settingsRaw); err != nil {
				return err
			}
			payload["oauth"] = in.OAuth
		}
		if c := in.Client; c != nil {
			if err := s.AuthClientPut(ctx, tx, entryID, &upstreamauth.Client{ClientID: c.ClientID, ClientSecret: c.ClientSecret,
				PrivateKeyPEM: c.PrivateKeyPEM, TokenEndpointAuth: c.TokenEndpointAuth, SigningAlg: c.SigningAlg,
				Issuer: c.Issuer, Scopes: c.Scopes}); err != nil {
				return err
			}
			payload["clientId"] = c.ClientID
			payload["tokenEndpointAuth"] = c.TokenEndpointAuth
		}
		return db.EventInsert(ctx, tx, &db.Event{EntityType: "mcp_catalog_entry", EntityID: entryID,
			Action: "mcp.catalog_entry_auth_updated", Actor: p.Subject, Payload: payload})
	})
	if err != nil {
		return nil, err
	}
	out := &EntryAuthInput{AuthMode: in.AuthMode, OAuth: in.OAuth}
	if c := in.Client; c != nil {
		out.Client = &EntryClient{ClientID: c.ClientID, TokenEndpointAuth: c.TokenEndpointAuth, SigningAlg: c.SigningAlg,
			Issuer: c.Issuer, Scopes: c.Scopes, HasSecret: c.ClientSecret != "" || c.PrivateKeyPEM != ""}
	}
	return out, nil
}

// EntryAuth is GET /api/mcp-marketplace/{id}/auth: catalog entry entryID's default auth
// mode, its OAuth settings (omitted when none are set) and its pre-registered client
// (omitted when none; the secret and key never leave: only HasSecret). Superuser, as
// SetEntryAuth. Errors: FORBIDDEN, NOT_FOUND.
func (s *Service) EntryAuth(ctx context.Context, p *auth.Principal, entryID string) (_ *EntryAuthInput, err error) {
	defer derrors.Wrap(&err, "connections: authorization of entry %s", entryID)
	if !p.IsSuperuser() {
		return nil, apperr.New(apperr.Forbidden, "editing the shared catalog requires the superuser role")
	}
	mode, err := db.CatalogEntryAuthModeGet(ctx, s.Pool, entryID)
	if err != nil {
		return nil, err
	}
	out := &EntryAuthInput{AuthMode: mode}
	set, err := s.settingsOf(ctx, s.Pool, entryID, true)
	if err != nil {
		return nil, err
	}
	if !set.IsZero() {
		out.OAuth = &set
	}
	if s.AuthClients != nil {
		c, err := s.AuthClients(ctx, entryID)
		if err != nil {
			return nil, err
		}
		if c != nil && c.ClientID != "" {
			out.Client = &EntryClient{ClientID: c.ClientID, TokenEndpointAuth: c.TokenEndpointAuth, SigningAlg: c.SigningAlg,
				Issuer: c.Issuer, Scopes: c.Scopes, HasSecret: c.ClientSecret != "" || c.PrivateKeyPEM != ""}
		}
	}
	return out, nil
}

// StepUp is what the gateway calls when a request of principal p to connection c failed
// with callErr, and it returns the answer to give instead of the failure, as PrepareCall
// does (-32042 with the link at 2025-11-25+, or an isError result with it); ok is false for
// an ordinary failure. Two failures have such an answer:
//
//   - the upstream answered 403 insufficient_scope (MCP authorization, scope challenge
//     handling): it starts an authorization asking for the scopes the challenge names (with
//     those already granted). A member cannot step up a shared oauth grant (an admin's act)
//     and gets an isError result saying so;
//   - the upstream answered 401 to an OAuth connection's token even after the one refresh
//     the transport tries (mcpclient, Credentials.Unauthorized), e.g. the authorization
//     server forgot its grants: the grant is expired at once (upstreamauth Service.Expire,
//     unless the refused refresh already did) and the answer is the consent link — in the
//     same call, not the next one.
//
// The caller retries the call after consenting.
func (s *Service) StepUp(ctx context.Context, c *db.Connection, p *auth.Principal, protocolVersion string, callErr error) (answer *mcp.CallToolResult, answerErr error, ok bool) {
	if s.Auth == nil {
		return nil, nil, false
	}
	mode := upstreamauth.Mode(c.AuthMode)
	if mode != upstreamauth.ModeOAuth && mode != upstreamauth.ModeOAuthPerUser {
		return nil, nil, false
	}
	ch := s.Auth.TakeScopeChallenge(grantKey(c, p.Subject))
	if ch == nil {
		return s.afterUnauthorized(ctx, c, p, protocolVersion, callErr)
	}
	if mode == upstreamauth.ModeOAuth && !p.IsAdmin() {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: c.Name + " needs more permissions upstream (" + strings.Join(ch.Scopes, " ") + "): a workspace admin must authorize it again."}}}, nil, true
	}
	az := s.beginAuthorizationFor(ctx, p, c, "", ch)
	if az.AuthorizationURL == "" {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: c.Name + " needs more permissions upstream, but the authorization could not be started: " + az.Reason}}}, nil, true
	}
	answer, answerErr = upstreamauth.Answer(protocolVersion, upstreamauth.NeedsAuthorization{
		ConnectionName: c.Name, AuthorizationURL: az.AuthorizationURL})
	return answer, answerErr, true
}

// afterUnauthorized is StepUp's 401 case (see there); ok is false when callErr is not the
// upstream's 401 nor a missing grant.
func (s *Service) afterUnauthorized(ctx context.Context, c *db.Connection, p *auth.Principal, protocolVersion string, callErr error) (*mcp.CallToolResult, error, bool) {
	f := mcpclient.FailureOf(callErr)
	refused := f != nil && f.HTTPStatus == http.StatusUnauthorized
	if !refused && !errors.Is(callErr, upstreamauth.ErrAuthorizationRequired) {
		return nil, nil, false
	}
	k := grantKey(c, p.Subject)
	if refused {
		if err := s.Auth.Expire(ctx, k, "the upstream refused the access token (HTTP 401) after a refresh"); err != nil {
			s.logger().ErrorContext(ctx, "grant not expired", "connection_id", c.ID, "err", err)
		}
	}
	answer, answerErr := s.authorizationAnswer(ctx, c, p, protocolVersion, true)
	return answer, answerErr, true
}

// PrepareCall is what the gateway calls before forwarding a request of principal p to
// connection c (made with protocolVersion, the request's MCP protocol version). It returns
// the upstream target with its credentials — or, when the connection uses OAuth and p has no
// usable token (oauth_per_user before p authorized, or any OAuth grant whose refresh
// failed), the answer to give instead, in which case nothing must be sent upstream:
//
//   - answerErr, for 2025-11-25 and newer: the JSON-RPC error -32042 (URL elicitation
//     required) carrying an authorization URL started for p (upstreamauth.Answer);
//   - answer, for older versions: a tools/call result with isError and the link.
//
// For a shared oauth connection only an admin gets a link (re-authorizing the workspace's
// grant is an admin's act); a member gets an isError result saying an admin must
// re-authorize. err is for failures of the gateway itself (database).
func (s *Service) PrepareCall(ctx context.Context, c *db.Connection, p *auth.Principal, protocolVersion string) (t mcpclient.Target, answer *mcp.CallToolResult, answerErr error, err error) {
	defer derrors.Wrap(&err, "connections: prepare call to %s", c.ID)
	t = s.TargetFor(ctx, c, p.Subject)
	if t.Credentials == nil {
		return t, nil, nil, nil
	}
	if _, terr := t.Credentials.Token(ctx); !errors.Is(terr, upstreamauth.ErrAuthorizationRequired) {
		// A usable token (or a transient failure the call itself will report).
		return t, nil, nil, nil
	}
	st, err := s.AuthorizationOf(ctx, c, p.Subject)
	if err != nil {
		return t, nil, nil, err
	}
	expired := st != nil && st.Authorization == upstreamauth.Expired
	answer, answerErr = s.authorizationAnswer(ctx, c, p, protocolVersion, expired)
	return t, answer, answerErr, nil
}

// authorizationAnswer is the answer to p's request to c when p has no usable grant
// (PrepareCall, StepUp): for a shared oauth connection and a member, or client_credentials,
// an isError result saying who must act; else a consent link started for p, in the form of
// protocolVersion (upstreamauth.Answer: -32042 at 2025-11-25, the link in an isError
// result before). expired says the grant existed and lapsed (the text says so).
func (s *Service) authorizationAnswer(ctx context.Context, c *db.Connection, p *auth.Principal, protocolVersion string, expired bool) (*mcp.CallToolResult, error) {
	mode := upstreamauth.Mode(c.AuthMode)
	if mode == upstreamauth.ModeOAuth && !p.IsAdmin() {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: c.Name + " is not authorized upstream (or its authorization expired): a workspace admin must authorize it again."}}}, nil
	}
	if mode == upstreamauth.ModeClientCredentials {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: c.Name + " could not obtain a token with its client credentials: an admin must check the catalog entry's OAuth client."}}}, nil
	}
	az := s.beginAuthorization(ctx, p, c, "")
	if az.AuthorizationURL == "" {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: c.Name + " needs authorization, but it could not be started: " + az.Reason}}}, nil
	}
	return upstreamauth.Answer(protocolVersion, upstreamauth.NeedsAuthorization{
		ConnectionName: c.Name, AuthorizationURL: az.AuthorizationURL, Expired: expired})
}
