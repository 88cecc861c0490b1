package upstreamauth

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/agentpack/gateway/shared/oautherr"
	"github.com/agentpack/gateway/shared/text"
)

// What the gateway shows of an authorization server's words (docs/UPSTREAM-AUTH.md
// "What the gateway shows of an authorization server's answers").
//
// An authorization server's error, error_description and error_uri are text a third party
// wrote, and the gateway shows its pages (the callback page, the console fed by the API,
// the connection's events and status) on its own origin. Text there reads as the gateway's:
// "call +1-800-… to unlock" under the gateway's name is a phishing page. So:
//
//   - a response that does not carry the flow's issuer (iss mismatch, RFC 9207 §2.4), or
//     that cannot be tied to it (no iss from a server that does not advertise it), shows
//     none of its content: a fixed message, no token request (MCP authorization,
//     "Authorization Response Validation": a client MUST NOT act on or display error,
//     error_description or error_uri of such a response);
//   - even a response whose iss matches shows only its error code, and only when the code
//     is a registered one (oautherr.Text); error_description and error_uri are never shown.
//     A matching iss proves which server answered, not that it is honest: a compromised or
//     hostile upstream authorization server is exactly the one that would write the phishing
//     text, and a description adds little an admin needs that the code does not say. The
//     description goes to the gateway's log (clipped), for whoever debugs the upstream.

// ErrIssuerMismatch: the authorization response's iss is not the issuer of the flow's
// authorization server, or is missing where that server advertises it (RFC 9207 §2.4).
var ErrIssuerMismatch = errors.New("upstreamauth: authorization response issuer mismatch")

// deniedError is the FlowError of an authorization response that carries error (RFC 6749
// §4.1.2.1), after the issuer check: tied is true when its iss matched the flow's issuer.
// Its Reason is a fixed text with, when tied, the registered error code (oautherr.Text); the server's
// error_description and error_uri are kept in Err for the log only.
func deniedError(q url.Values, tied bool) *FlowError {
	if !tied {
		return &FlowError{Step: "authorization", Err: fmt.Errorf("%w (response without iss; not shown: error %q)", ErrDenied, text.Clip(q.Get("error"), 64)),
			Reason: "the authorization server answered with an error, but its response carries no issuer (iss) and the server does not advertise one, so the gateway cannot tie it to that server and shows none of its content; start the authorization again"}
	}
	code := q.Get("error")
	reason := "the authorization server refused the authorization (" + oautherr.Text(code) + ")"
	if code == "access_denied" {
		reason = "the authorization was declined at the authorization server (access_denied)"
	}
	return &FlowError{Step: "authorization", Reason: reason,
		Err: fmt.Errorf("%w: error %q, error_description %q", ErrDenied, text.Clip(code, 64), text.Clip(q.Get("error_description"), 200))}
}
