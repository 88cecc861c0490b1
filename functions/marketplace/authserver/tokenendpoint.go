package authserver

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/token/jwt"
)

// token handles the token endpoint: the authorization code (PKCE verified, a replayed code
// revokes what it issued) and refresh (rotated; a reused refresh token revokes its whole
// family). The person's membership is read again each time: a person no longer a member
// of the grant's workspace gets invalid_grant and the grant is revoked.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	w.Header().Set("Cache-Control", "no-store")
	if err := r.ParseForm(); err != nil {
		s.provider.WriteAccessError(ctx, w, fosite.NewAccessRequest(nil), fosite.ErrInvalidRequest.WithHint("The body is not a form."))
		return
	}
	offeredScopes(r.Form)
	offeredScopes(r.PostForm)
	if _, err := s.resource(r); err != nil {
		s.provider.WriteAccessError(ctx, w, fosite.NewAccessRequest(nil), err)
		return
	}
	// fosite answers an unknown grant type with invalid_request; RFC 6749 §5.2 names it.
	if g := r.PostForm.Get("grant_type"); g != "authorization_code" && g != "refresh_token" && g != GrantTypeJWTBearer {
		s.provider.WriteAccessError(ctx, w, fosite.NewAccessRequest(nil), fosite.ErrUnsupportedGrantType)
		return
	}
	sess := newSession()
	ar, err := s.provider.NewAccessRequest(ctx, r, sess)
	if err != nil {
		s.accessError(w, r, ar, err)
		return
	}
	js, ok := ar.GetSession().(*oauth2.JWTSession)
	if !ok || js.JWTClaims == nil {
		s.accessError(w, r, ar, fosite.ErrServerError)
		return
	}
	ws := workspaceOf(js)
	role, err := s.roleIn(ctx, js.JWTClaims.Subject, ws)
	if err != nil {
		s.accessError(w, r, ar, fosite.ErrServerError.WithWrap(err))
		return
	}
	if role == "" {
		if rerr := s.store.revoke(ctx, ar.GetID()); rerr != nil && !errors.Is(rerr, fosite.ErrNotFound) {
			s.o.Logger.WarnContext(ctx, "authserver: revoke after membership loss", "err", rerr)
		}
		s.accessError(w, r, ar, fosite.ErrInvalidGrant.WithHint("The person is no longer a member of the workspace this grant is for."))
		return
	}
	if isConsole(ar.GetClient()) {
		su, err := s.o.Members.Superuser(ctx, js.JWTClaims.Subject)
		if err != nil {
			s.accessError(w, r, ar, fosite.ErrServerError.WithWrap(err))
			return
		}
		if su {
			role = auth.RoleSuperuser
		}
	}
	js.JWTClaims.Extra["role"] = role
	groups, err := s.o.Members.Groups(ctx, js.JWTClaims.Subject)
	if err != nil {
		s.accessError(w, r, ar, fosite.ErrServerError.WithWrap(err))
		return
	}
	if n := groupBytes(groups); len(groups) > maxTokenGroups || n > maxTokenGroupBytes {
		s.accessError(w, r, ar, fosite.ErrInvalidGrant.WithHintf(
			"The identity provider sends %d groups (%d bytes) for this person, more than an access token carries (%d groups, %d bytes): narrow the groups claim at the identity provider.",
			len(groups), n, maxTokenGroups, maxTokenGroupBytes))
		return
	}
	delete(js.JWTClaims.Extra, "groups")
	if len(groups) > 0 {
		js.JWTClaims.Extra["groups"] = groups
	}
	js.JWTClaims.Issuer = s.base(r)
	js.JWTClaims.IssuedAt = time.Time{} // each token gets its own iat and jti
	js.JWTClaims.JTI = ""
	resp, err := s.provider.NewAccessResponse(ctx, ar)
	if err != nil {
		s.accessError(w, r, ar, err)
		return
	}
	s.provider.WriteAccessResponse(ctx, w, ar, resp)
}

// groupBytes is the total length of the group names.
func groupBytes(groups []string) int {
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	return n
}

// roleIn is person's role in workspace ws ("" when not a member).
func (s *Server) roleIn(ctx context.Context, person, ws string) (string, error) {
	ms, err := s.o.Members.Memberships(ctx, person)
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if m.WorkspaceID == ws && (m.Role == auth.RoleMember || m.Role == auth.RoleAdmin) {
			return m.Role, nil
		}
	}
	return "", nil
}

func (s *Server) accessError(w http.ResponseWriter, r *http.Request, ar fosite.AccessRequester, err error) {
	s.logError(r, err)
	if cerr := withClientReason(err); cerr != err {
		// A client that cannot be used (unregistered, its metadata document unusable): the
		// client reads why in error_description, the operator in the log.
		err = cerr
		s.o.Logger.WarnContext(r.Context(), "authserver: token request refused", "error", "invalid_client",
			"reason", fosite.ErrorToRFC6749Error(err).GetDescription(), "client_id", logValue(r.PostForm.Get("client_id")))
	}
	basicChallenge(w, r, err)
	s.provider.WriteAccessError(r.Context(), w, ar, err)
}

// logError logs a server-side failure once (client errors are the client's to read).
func (s *Server) logError(r *http.Request, err error) {
	rfc := fosite.ErrorToRFC6749Error(err)
	if rfc.CodeField < 500 {
		return
	}
	cause := rfc.DebugField
	if u := rfc.Unwrap(); u != nil {
		cause = u.Error()
	}
	s.o.Logger.ErrorContext(r.Context(), "authserver: request failed", "err", err, "cause", cause, "path", r.URL.Path)
}

// revoke handles RFC 7009 revocation: a refresh or access token revokes its whole grant.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	err := s.provider.NewRevocationRequest(ctx, r)
	if err != nil {
		s.logError(r, err)
		basicChallenge(w, r, err)
	}
	s.provider.WriteRevocationResponse(ctx, w, err)
}

// newSession is an empty session fosite fills from storage.
func newSession() *oauth2.JWTSession {
	return &oauth2.JWTSession{JWTClaims: &jwt.JWTClaims{Extra: map[string]any{}}, JWTHeader: &jwt.Headers{Extra: map[string]any{}}}
}
