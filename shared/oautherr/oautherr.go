// Package oautherr says what the gateway shows of an OAuth error code that an authorization
// server (an upstream's, or the identity provider the console signs in with) answered.
//
// The error member of an authorization or token response is text a third party chose, and
// the gateway shows it on its own origin (the callback pages, the console, a connection's
// status). A registered code is a fixed word from a short list and says what went wrong;
// anything else could be prose written to be read as the gateway's ("call +1-800-… to
// unlock"), so it is not shown. An error_description or error_uri is never shown at all
// (docs/UPSTREAM-AUTH.md "What the gateway shows of an authorization server's answers").
package oautherr

// registered are the OAuth error codes of the IANA "OAuth Extensions Error Registry" and
// the RFCs the gateway speaks: RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3.1, RFC 7591 §3.2.2,
// RFC 8707 §2, RFC 9449 §12, OpenID Connect Core 1.0 §3.1.2.6.
var registered = map[string]bool{
	"invalid_request": true, "unauthorized_client": true, "access_denied": true, "unsupported_response_type": true,
	"invalid_scope": true, "server_error": true, "temporarily_unavailable": true, "invalid_client": true,
	"invalid_grant": true, "unsupported_grant_type": true, "invalid_token": true, "insufficient_scope": true,
	"invalid_redirect_uri": true, "invalid_client_metadata": true, "invalid_software_statement": true,
	"unapproved_software_statement": true, "invalid_target": true, "invalid_dpop_proof": true, "use_dpop_nonce": true,
	"interaction_required": true, "login_required": true, "account_selection_required": true, "consent_required": true,
	"invalid_request_uri": true, "invalid_request_object": true, "request_not_supported": true,
	"request_uri_not_supported": true, "registration_not_supported": true,
}

// Unregistered is what Text answers for a code that is not a registered one.
const Unregistered = "an unregistered error code"

// Text is what the gateway shows of OAuth error code code: the code itself when it is a
// registered one (exact, case-sensitive, as RFC 6749 §5.2 defines them), else Unregistered.
func Text(code string) string {
	if registered[code] {
		return code
	}
	return Unregistered
}

// Registered reports whether code is a registered OAuth error code.
func Registered(code string) bool { return registered[code] }
