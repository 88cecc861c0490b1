package connections

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/upstreamauth"
)

// Consent is POST /api/oauth/consent {link}: the console's consent page, signed in as p,
// asks to continue the authorization its link names (docs/UPSTREAM-AUTH.md "Consent bound
// to its user"). Only the caller the link was made for gets through (same subject, in the
// flow's workspace; for a shared oauth grant an admin of it): the answer then carries the
// authorization server's URL and the cookie that binds this browser to the flow. A refusal
// stores nothing, leaves the link to its caller and, when the link's flow is known (every
// refusal but an unknown or used link), writes the event_log entry mcp.consent_refused on
// its connection (logRefusal). Errors: NOT_FOUND (unknown, used, expired or replaced
// link), FORBIDDEN (another user or workspace; a member for a shared grant), UNAVAILABLE
// (not configured).
func (s *Service) Consent(ctx context.Context, p *auth.Principal, link string) (_ *upstreamauth.ConsentStart, err error) {
	defer derrors.Wrap(&err, "connections: consent")
	if s.Auth == nil {
		return nil, apperr.New(apperr.Unavailable, "upstream authorization is not configured on this gateway")
	}
	who := &upstreamauth.Completer{Subject: p.Subject, Workspaces: p.Workspaces, AllWorkspaces: p.IsSuperuser(), Admin: p.IsAdmin()}
	start, err := s.Auth.Consent(ctx, link, who)
	if err == nil {
		return start, nil
	}
	if r, ok := errors.AsType[*upstreamauth.ConsentRefusal](err); ok {
		s.logRefusal(ctx, p, r)
	}
	switch {
	case errors.Is(err, upstreamauth.ErrStateUnknown), errors.Is(err, upstreamauth.ErrStateExpired):
		return nil, apperr.New(apperr.NotFound, "this authorization link is unknown, expired or already used").
			WithHint("call the tool again for a new link (links are valid for 10 minutes)")
	case errors.Is(err, upstreamauth.ErrStateReplaced):
		return nil, apperr.New(apperr.NotFound, "this authorization link was replaced by a newer one; nothing was stored").
			WithHint("open the newest link you received, or call the tool again for a new one")
	case errors.Is(err, upstreamauth.ErrStateForeign), errors.Is(err, upstreamauth.ErrNoSession):
		return nil, apperr.New(apperr.Forbidden, "this authorization link was made for another user; nothing was stored").
			WithHint("sign in as the user who received the link, or call the tool yourself for a link of your own")
	case errors.Is(err, upstreamauth.ErrNotAdmin):
		return nil, apperr.New(apperr.Forbidden, "only an admin of the workspace can complete the workspace's shared authorization; nothing was stored")
	default:
		return nil, err
	}
}

// refusalReasons are the event_log payload's reason per ConsentRefusal reason.
var refusalReasons = []struct {
	err    error
	reason string
}{
	{upstreamauth.ErrStateExpired, "expired"},
	{upstreamauth.ErrStateReplaced, "replaced"},
	{upstreamauth.ErrNoSession, "not signed in"},
	{upstreamauth.ErrStateForeign, "another user or workspace"},
	{upstreamauth.ErrNotAdmin, "not an admin"},
}

// logRefusal records a refused consent as mcp.consent_refused on the flow's connection, in
// the flow's workspace (so that its admins see who opened a link that was not theirs, or a
// stale one): actor the principal who opened it, payload {reason, sharedGrant}; never the
// link. The refusal is the answer whatever happens here: a failed write is logged.
func (s *Service) logRefusal(ctx context.Context, p *auth.Principal, r *upstreamauth.ConsentRefusal) {
	reason := "refused"
	for _, rr := range refusalReasons {
		if errors.Is(r.Err, rr.err) {
			reason = rr.reason
			break
		}
	}
	var ws *string
	if r.WorkspaceID != "" {
		ws = &r.WorkspaceID
	}
	err := db.EventInsert(ctx, s.Pool, &db.Event{EntityType: "mcp_connection", EntityID: r.Key.ConnectionID,
		Action: "mcp.consent_refused", Actor: p.Subject, WorkspaceID: ws,
		Payload: map[string]any{"reason": reason, "sharedGrant": r.Key.Subject == "" && !errors.Is(r.Err, upstreamauth.ErrStateReplaced)}})
	if err != nil {
		s.logger().ErrorContext(ctx, "consent refused; recording the refusal failed", "reason", reason, "connection_id", r.Key.ConnectionID, "err", err)
		return
	}
	s.logger().WarnContext(ctx, "consent refused", "reason", reason, "connection_id", r.Key.ConnectionID)
}

// OAuthSettings are an admin's OAuth settings of a catalog entry or a connection
// (upstreamauth.Settings; migrations/00009_oauth_settings.sql).
type OAuthSettings = upstreamauth.Settings

func (s *Service) settingsOf(ctx context.Context, q db.Querier, id string, entry bool) (upstreamauth.Settings, error) {
	var set upstreamauth.Settings
	raw, err := db.OAuthSettingsGet(ctx, q, id, entry)
	if err != nil || raw == nil {
		return set, err
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		return set, apperr.Wrap(err, apperr.Internal, "stored OAuth settings are unreadable")
	}
	return set, nil
}

// effectiveSettings are c's catalog entry's OAuth settings with c's own over them.
func (s *Service) effectiveSettings(ctx context.Context, c *db.Connection) (upstreamauth.Settings, error) {
	var set upstreamauth.Settings
	if c.CatalogEntryID != nil {
		es, err := s.settingsOf(ctx, s.Pool, *c.CatalogEntryID, true)
		if err != nil {
			return set, err
		}
		set = es
	}
	cs, err := s.settingsOf(ctx, s.Pool, c.ID, false)
	if err != nil {
		return set, err
	}
	return set.Over(cs), nil
}

func (s *Service) validSettings(in *upstreamauth.Settings) error {
	var check func(string) error
	if s.Guard != nil {
		check = s.Guard.CheckURL
	}
	if err := in.Validate(check); err != nil {
		return apperr.New(apperr.Validation, "oauth: %s", err.Error())
	}
	return nil
}

// ConnectionOAuthSettings is GET /api/mcp-connections/{id}/oauth-settings: the settings set
// on connection id itself and the effective ones (its catalog entry's with its own over
// them). Admins of the connection's workspace. Errors: NOT_FOUND, FORBIDDEN.
func (s *Service) ConnectionOAuthSettings(ctx context.Context, p *auth.Principal, id string) (own, effective *OAuthSettings, err error) {
	defer derrors.Wrap(&err, "connections: oauth settings of %s", id)
	c, err := s.writable(ctx, s.Pool, p, id)
	if err != nil {
		return nil, nil, err
	}
	o, err := s.settingsOf(ctx, s.Pool, c.ID, false)
	if err != nil {
		return nil, nil, err
	}
	e, err := s.effectiveSettings(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return &o, &e, nil
}

// SetConnectionOAuthSettings is PUT /api/mcp-connections/{id}/oauth-settings: replaces the
// OAuth settings of connection id (validated: upstreamauth.Settings.Validate, URLs through
// the URL guard) and logs mcp.connection_oauth_settings_updated. They apply to the next
// authorization (existing grants are kept). Errors: NOT_FOUND, FORBIDDEN, VALIDATION_ERROR.
func (s *Service) SetConnectionOAuthSettings(ctx context.Context, p *auth.Principal, id string, in OAuthSettings) (own, effective *OAuthSettings, err error) {
	defer derrors.Wrap(&err, "connections: set oauth settings of %s", id)
	c, err := s.writable(ctx, s.Pool, p, id)
	if err != nil {
		return nil, nil, err
	}
	if err := s.validSettings(&in); err != nil {
		return nil, nil, err
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, nil, err
	}
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := db.OAuthSettingsPut(ctx, tx, c.ID, false, raw); err != nil {
			return err
		}
		return logEvent(ctx, tx, p, "mcp.connection_oauth_settings_updated", c, map[string]any{"oauth": in})
	})
	if err != nil {
		return nil, nil, err
	}
	e, err := s.effectiveSettings(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return &in, &e, nil
}
