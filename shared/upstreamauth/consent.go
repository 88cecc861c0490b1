package upstreamauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/derrors"
)

// Consent bound to its user (docs/UPSTREAM-AUTH.md "Consent bound to its user"; MCP
// 2026-07-28 elicitation, URL mode: the server MUST verify that the user who opens the URL
// is the user it was generated for). With Options.ConsentURL the link a caller receives
// names the flow by a random link id; the gateway's page establishes who the browser is
// (the console's sign-in) and calls Consent, which lets only the caller through, records a
// random binding and answers it as a cookie; the callback completes only with that cookie.

// ConsentStart is what Consent answers when the browser is the caller the link was made
// for: where to send the browser, and the cookie that binds it to the flow.
type ConsentStart struct {
	// AuthURL is the authorization server's URL (the flow's state, PKCE challenge,
	// resource, scopes and parameters).
	AuthURL string
	// Cookie binds this browser to the flow: HttpOnly, SameSite=Lax (sent on the
	// authorization server's top-level redirect back, never on cross-site subrequests),
	// scoped to the callback's path, Secure when the callback is https, expiring with the
	// state.
	Cookie *http.Cookie
	// Key is the grant the flow is for.
	Key Key
}

func bindingHash(binding string) []byte {
	h := sha256.Sum256([]byte("binding|" + binding))
	return h[:]
}

// ConsentRefusal is Consent's refusal of a link whose flow it knows: Err is the reason
// (ErrStateExpired, ErrStateReplaced, ErrNoSession, ErrStateForeign or ErrNotAdmin), Key
// and WorkspaceID the flow's connection, grant subject ("" for a shared grant or a replaced
// link) and workspace, so that the caller can record the refusal where that workspace's
// admins see it. Nothing of the link itself is carried.
type ConsentRefusal struct {
	Err         error
	Key         Key
	WorkspaceID string
}

func (r *ConsentRefusal) Error() string { return r.Err.Error() }

// Unwrap returns the reason.
func (r *ConsentRefusal) Unwrap() error { return r.Err }

// BindingCookieName is the name of the binding cookie of the flow with state: one per flow
// (a browser may have several pending), derived from the state so that the callback,
// which receives the state, knows which cookie to read.
func BindingCookieName(state string) string {
	h := sha256.Sum256([]byte("cookie|" + state))
	return "agentpack_oauth_" + hex.EncodeToString(h[:8])
}

// Consent checks that who (the browser's signed-in principal; nil: not signed in) is the
// caller the consent link link was made for — the same subject, in the flow's workspace,
// and for a connection's shared grant (oauth mode) an admin — and then binds the browser:
// it records the SHA-256 of a random binding on the pending authorization and answers the
// binding's cookie and the authorization server's URL. A refusal stores nothing and leaves
// the pending authorization to its caller. Errors: ErrStateUnknown (no such link, already
// used); a *ConsentRefusal naming the flow, whose reason is ErrStateExpired,
// ErrStateReplaced, ErrNoSession, ErrStateForeign (another user or workspace) or ErrNotAdmin
// (errors.Is sees the reason); or a store failure.
func (s *Service) Consent(ctx context.Context, link string, who *Completer) (_ *ConsentStart, err error) {
	defer derrors.Wrap(&err, "upstreamauth: consent")
	if s.consentURL == "" || link == "" || len(link) > 256 {
		return nil, ErrStateUnknown
	}
	p, err := s.store.PendingByLink(ctx, link)
	if err != nil {
		return nil, err
	}
	refuse := func(reason error) error {
		return &ConsentRefusal{Err: reason, Key: p.Key, WorkspaceID: p.Caller.WorkspaceID}
	}
	switch {
	case !s.now().Before(p.ExpiresAt):
		return nil, refuse(ErrStateExpired)
	case p.Replaced:
		return nil, refuse(ErrStateReplaced)
	case who == nil:
		return nil, refuse(ErrNoSession)
	case !who.began(p):
		return nil, refuse(ErrStateForeign)
	case p.Key.Subject == "" && !who.Admin:
		return nil, refuse(ErrNotAdmin)
	}
	binding := rand.Text()
	if err := s.store.PendingBind(ctx, link, bindingHash(binding)); err != nil {
		return nil, err
	}
	path, secure := "/", false
	if u, err := url.Parse(s.redirect); err == nil {
		path, secure = u.Path, u.Scheme == "https"
	}
	return &ConsentStart{AuthURL: p.AuthURL, Key: p.Key, Cookie: &http.Cookie{
		Name: BindingCookieName(p.State), Value: binding, Path: path, MaxAge: int(time.Until(p.ExpiresAt).Seconds()) + 1,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}}, nil
}

// bindingOf is the binding cookie of the callback request r for its state ("" when none).
func bindingOf(r *http.Request) (name, value string) {
	state := r.URL.Query().Get("state")
	if state == "" || len(state) > 256 {
		return "", ""
	}
	name = BindingCookieName(state)
	if c, err := r.Cookie(name); err == nil {
		value = strings.TrimSpace(c.Value)
	}
	return name, value
}
