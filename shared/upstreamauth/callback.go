package upstreamauth

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Outcome is what a callback did, as the page and the flow's starter see it.
type Outcome struct {
	// Status is authorized, authorization_required or failed.
	Status string `json:"status"`
	// Reason says why (empty when authorized); never a token or secret.
	Reason       string `json:"reason,omitempty"`
	ConnectionID string `json:"connectionId,omitempty"`
	// ConnectionName and Account name, on the callback page, the connection the grant is
	// for (set by CallbackHandler's onDone) and the gateway account that consented (the
	// flow's caller).
	ConnectionName string `json:"connectionName,omitempty"`
	Account        string `json:"account,omitempty"`
}

// The three outcome statuses of a flow (issue "consent round trip").
const (
	OutcomeAuthorized = "authorized"
	OutcomeRequired   = "authorization_required"
	OutcomeFailed     = "failed"
)

// OutcomeOf maps Complete's answer to an Outcome: a refused, expired or foreign state is
// authorization_required (start again), other failures are failed with the flow's reason.
func OutcomeOf(res *Result, err error) Outcome {
	o := Outcome{Status: OutcomeAuthorized}
	if res != nil {
		o.ConnectionID = res.Key.ConnectionID
	}
	var fe *FlowError
	switch {
	case err == nil:
	case errors.Is(err, ErrStateUnknown):
		o = Outcome{Status: OutcomeRequired, Reason: "this authorization link is unknown or was already used; start the authorization again"}
	case errors.Is(err, ErrStateExpired):
		o.Status, o.Reason = OutcomeRequired, "this authorization link expired (links are valid for 10 minutes); start the authorization again"
	case errors.Is(err, ErrStateForeign):
		o = Outcome{Status: OutcomeFailed, Reason: "this authorization was started by another user or workspace"}
	case errors.Is(err, ErrUnbound):
		o.Status, o.Reason = OutcomeFailed, "this browser did not open the authorization link as the user it was made for; nothing was stored. Sign in to the console as that user and open the link again (or call the tool again for a new link)"
	case errors.As(err, &fe):
		o.Status, o.Reason = OutcomeFailed, fe.Reason
	default:
		o.Status, o.Reason = OutcomeFailed, "internal error"
	}
	return o
}

// CallbackHandler serves GET /api/oauth/callback: it finishes the flow with Complete and
// answers a small HTML page that says what happened (200 when authorized, 400 otherwise).
// caller, when non-nil, returns who the request is authenticated as (nil when it carries
// no credentials; an error answers 401); onDone, when non-nil, is told the
// outcome (for event logs) and may set its ConnectionName for the page. The page names the
// connection and the account (the flow's caller) and never shows a token.
func (s *Service) CallbackHandler(caller func(*http.Request) (*Completer, error), onDone func(context.Context, *Result, *Outcome)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		var c *Completer
		if caller != nil {
			var err error
			if c, err = caller(r); err != nil {
				writePage(w, http.StatusUnauthorized, Outcome{Status: OutcomeFailed, Reason: "the request's credentials are not valid"}, "", "")
				return
			}
		}
		cookie, binding := bindingOf(r)
		res, err := s.CompleteBound(r.Context(), c, binding, r.URL.Query())
		if cookie != "" && binding != "" {
			// Spent with the state: the browser forgets it.
			http.SetCookie(w, &http.Cookie{Name: cookie, Value: "", Path: r.URL.Path, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		}
		o := OutcomeOf(res, err)
		var fe *FlowError
		switch {
		case err != nil && o.Reason == "internal error":
			s.log.ErrorContext(r.Context(), "upstream authorization callback failed", "err", err)
		case errors.As(err, &fe):
			// The page shows fe.Reason; the cause (an authorization server's error code and
			// description, when its response was tied to it) is for the log only.
			s.log.InfoContext(r.Context(), "upstream authorization callback refused", "step", fe.Step, "err", fe.Err)
		}
		if res != nil {
			o.Account = res.Caller.Subject
		}
		if onDone != nil {
			onDone(r.Context(), res, &o)
		}
		status := http.StatusOK
		if o.Status != OutcomeAuthorized {
			status = http.StatusBadRequest
		}
		back := ""
		if res != nil {
			back = res.ReturnTo
		}
		writePage(w, status, o, back, r.Host)
	})
}

// writeCallbackPage writes the callback's page. It is built with html.EscapeString rather
// than html/template on purpose: a reachable template Execute makes the linker keep every
// exported method of every type in the binary (the method lookup by name defeats dead-code
// elimination), which grew the marketplace bootstrap by 7 MB (docs/OPERATIONS.md
// "Binary size"). Every value written is escaped; Back is also limited to this site.
func writeCallbackPage(w io.Writer, title string, o Outcome, back, backLabel string) {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + e(title) + `</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style></head>
<body><h1 data-status="` + e(o.Status) + `">` + e(title) + `</h1>
`)
	if o.ConnectionName != "" || o.Account != "" {
		what, who := "This connection", ""
		if o.ConnectionName != "" {
			what = o.ConnectionName
		}
		if o.Account != "" {
			who = " for " + o.Account
		}
		b.WriteString(`<p id="summary" data-connection="` + e(o.ConnectionName) + `" data-account="` + e(o.Account) + `">`)
		switch o.Status {
		case OutcomeAuthorized:
			b.WriteString("<strong>" + e(what) + "</strong> is authorized" + e(who) + ": calls made through the gateway with this account now use it.")
		default:
			b.WriteString("<strong>" + e(what) + "</strong> was not authorized" + e(who) + ".")
		}
		b.WriteString("</p>\n")
	}
	if o.Reason != "" {
		b.WriteString("<p>" + e(o.Reason) + "</p>\n")
	}
	if back != "" {
		b.WriteString(`<p><a id="back" href="` + e(back) + `">` + e(backLabel) + "</a></p>\n")
	} else {
		b.WriteString("<p>You can close this window.</p>\n")
	}
	b.WriteString("</body></html>\n")
	_, _ = io.WriteString(w, b.String())
}

// loopbackHost reports whether hostport names this machine (a local run, where the console
// and the API may listen on two loopback ports).
func loopbackHost(hostport string) bool {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func writePage(w http.ResponseWriter, status int, o Outcome, back, host string) {
	title := map[string]string{OutcomeAuthorized: "Connected", OutcomeRequired: "Authorization needed", OutcomeFailed: "Authorization failed"}[o.Status]
	// back: an http(s) URL on this site (the callback's own host), or a path on it
	// ("/admin/…"; never "//host"): the page never links a visitor elsewhere.
	u, err := url.Parse(back)
	switch {
	case err != nil:
		back = ""
	case (u.Scheme == "https" || u.Scheme == "http") && (strings.EqualFold(u.Host, host) || (loopbackHost(u.Host) && loopbackHost(host))):
	case u.Scheme == "" && u.Host == "" && strings.HasPrefix(back, "/") && !strings.HasPrefix(back, "//") && !strings.Contains(back, "\\"):
	default:
		back = ""
	}
	label := "Back"
	if back != "" && strings.HasPrefix(u.Path, "/admin") {
		label = "Back to the console" // the admin console started the flow (docs/CONSOLE.md)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer") // the URL carries the code and state
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	writeCallbackPage(w, title, o, back, label)
}

// ClientMetadataHandler serves the gateway's client ID metadata document
// (draft-ietf-oauth-client-id-metadata-document; MCP 2025-11-25 "Client ID Metadata
// Documents") at Options.ClientMetadataURL: the client_id is that URL itself, the redirect
// URI the callback, a public client (PKCE, no secret). 404 when no such URL is configured.
func (s *Service) ClientMetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cimdURL == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"client_id": s.cimdURL, "client_name": s.clientName, "redirect_uris": []string{s.redirect},
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
			"token_endpoint_auth_method": AuthNone, "application_type": applicationType(s.redirect),
		})
	})
}
