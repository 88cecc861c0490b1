package connections

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

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
