package authserver

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/ory/fosite"
)

// clientRefusal is why a client_id cannot be used: not registered here, or its Client ID
// Metadata Document could not be fetched, parsed or accepted. clients.get returns it wrapped
// in invalid_client; fosite wraps that once more with its own hint ("The requested OAuth 2.0
// Client does not exist."), so the reason is recovered with errors.As (clientReason) for the
// refusal page, the token endpoint's error_description and the log.
type clientRefusal struct {
	clientID string
	reason   string
}

func (e *clientRefusal) Error() string { return e.reason }

// refuseClient is invalid_client whose description names the reason (RFC 6749 §5.2).
func refuseClient(id, reason string) error {
	return fosite.ErrInvalidClient.WithHint(reason).WithWrap(&clientRefusal{clientID: id, reason: reason})
}

// withClientReason restores the reason of a client refusal that fosite re-wrapped (its own
// hint replaces ours), so that the person and the client read why; other errors are returned
// as they are.
func withClientReason(err error) error {
	var cr *clientRefusal
	if errors.As(err, &cr) {
		return fosite.ErrInvalidClient.WithHint(cr.reason).WithWrap(cr)
	}
	return err
}

// refusalPage answers an authorization request that cannot be redirected back to the client
// (no valid client or redirect URI: RFC 6749 §4.1.2.1 forbids the redirect) with an HTML page
// naming the error and its reason, and logs one line with the client id and the reason, so
// that the person in the browser and the operator both see why. The status is the error's
// (400, or 401 for invalid_client). Nothing is stored.
func (s *Server) refusalPage(w http.ResponseWriter, r *http.Request, err error) {
	err = withClientReason(err)
	rfc := fosite.ErrorToRFC6749Error(err)
	status := rfc.CodeField
	if status < 400 || status > 599 {
		status = http.StatusBadRequest
	}
	desc := rfc.GetDescription()
	if cr := (*clientRefusal)(nil); errors.As(err, &cr) {
		desc = cr.reason // fosite's generic "Client authentication failed (e.g. …)" says less
	}
	clientID := r.Form.Get("client_id")
	s.o.Logger.WarnContext(r.Context(), "authserver: authorization request refused",
		"error", rfc.ErrorField, "reason", desc, "client_id", logValue(clientID),
		"redirect_uri", logValue(r.Form.Get("redirect_uri")))
	if status >= 500 {
		s.logError(r, err)
	}
	msg := desc
	if clientID != "" {
		msg += " (client_id " + clientID + ")"
	}
	msg += " Nothing was sent back to the application: tell its developer, or the gateway's operator, what this page says."
	s.page(w, status, pageData{Title: "This sign-in cannot continue: " + rfc.ErrorField, Message: msg})
}

// logValue bounds a request value for a log line (a client_id or redirect URI can be any
// length) and drops control characters.
func logValue(v string) string {
	const max = 300
	v = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, v)
	if len(v) > max {
		v = v[:max] + "…"
	}
	return v
}

// offeredScopes keeps, of the space-separated scopes of f's scope parameter, those this
// server offers (Scope), once each, and drops the rest; a scope parameter left empty is
// removed. RFC 6749 §3.3 lets the server grant less than asked, and the token response says
// what was granted (its scope field, written by fosite from the granted scopes). Clients add
// scopes of their own — offline_access (a refresh token, which every grant gets anyway),
// openid, profile — and must not be refused for it (docs/AUTH.md "Scopes").
func offeredScopes(f url.Values) {
	vs, ok := f["scope"]
	if !ok {
		return
	}
	var keep []string
	for _, sc := range strings.Fields(strings.Join(vs, " ")) {
		if sc == Scope && !slices.Contains(keep, sc) {
			keep = append(keep, sc)
		}
	}
	if len(keep) == 0 {
		delete(f, "scope")
		return
	}
	f["scope"] = []string{strings.Join(keep, " ")}
}

// otherOrigin answers an authorization request that reached this server on a host name other
// than Options.SignInOrigin's (http://localhost:8080 for http://127.0.0.1:8080; the API's own
// domain beside a custom domain) with a 400 page naming the URL to give the client instead,
// and reports true. The sign-in would end on SignInOrigin, whose session cookie this host
// never sees, so the person would loop; and moving the request there would change the resource
// the client asked for, which its token must match. Nothing is stored.
func (s *Server) otherOrigin(w http.ResponseWriter, r *http.Request) bool {
	o := s.o.SignInOrigin
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || strings.EqualFold(u.Host, r.Host) {
		return false
	}
	here := s.base(r)
	use := o + "/mcp"
	if res, _, ok := auth.MCPResource(here, r.URL.Query().Get("resource")); ok {
		use = o + strings.TrimPrefix(res, here) // a path of the gateway's, never free text
	}
	s.o.Logger.WarnContext(r.Context(), "authserver: authorization request on another origin",
		"host", logValue(r.Host), "sign_in_origin", o, "client_id", logValue(r.URL.Query().Get("client_id")))
	w.Header().Set("Cache-Control", "no-store")
	s.page(w, http.StatusBadRequest, pageData{Title: "Use this gateway's own address",
		Message: "This gateway signs people in at " + o + ", and this request came to " + here +
			". A sign-in cannot carry over from one address to the other. Give your client the MCP URL " + use +
			" instead (the console's Client setup page lists it), and connect again."})
	return true
}
