package upstreamauth

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Settings are an admin's OAuth settings for a catalog entry or a connection (migrations/
// 00009_oauth_settings.sql; docs/UPSTREAM-AUTH.md "OAuth settings"). The zero value means
// "discover as the spec says".
type Settings struct {
	// Issuer is the authorization server's expected issuer (RFC 8414 §2): discovery refuses
	// any other, naming both. Without MetadataURL it is also the server whose metadata is
	// read when the resource publishes no protected resource metadata.
	Issuer string `json:"issuer,omitempty" format:"uri" maxLength:"2048" doc:"The authorization server's expected issuer (RFC 8414 §2); discovery refuses any other, naming both."`
	// MetadataURL is the authorization server metadata document to read (RFC 8414 or
	// OpenID Connect discovery), instead of the well-known URLs under the issuer.
	MetadataURL string `json:"metadataUrl,omitempty" format:"uri" maxLength:"2048" doc:"The authorization server metadata document to read instead of the well-known URLs."`
	// Scopes are requested in every authorization, with those the upstream's challenge or
	// scopes_supported name.
	Scopes []string `json:"scopes,omitempty" doc:"Requested in every authorization, with those the upstream asks for."`
	// AuthorizationParams are extra authorization request parameters (audience, prompt, …;
	// RFC 6749 §3.1 allows extensions). The protocol's own parameters cannot be overridden.
	AuthorizationParams map[string]string `json:"authorizationParams,omitempty" doc:"Extra authorization request parameters, e.g. audience, prompt. Names [A-Za-z0-9_.-]{1,64}; the flow's own parameters (response_type, client_id, redirect_uri, scope, state, code_challenge, code_challenge_method, resource, request, request_uri) are refused."`
}

// reservedParams are the authorization request parameters the flow itself sets (RFC 6749
// §4.1.1, RFC 7636 §4.3, RFC 8707 §2, RFC 9207): a setting cannot replace them.
var reservedParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state",
	"code_challenge", "code_challenge_method", "resource", "request", "request_uri"}

var paramName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// scopeToken is RFC 6749 §3.3 scope-token: %x21 / %x23-5B / %x5D-7E.
func scopeToken(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if r < 0x21 || r > 0x7e || r == '"' || r == '\\' {
			return false
		}
	}
	return true
}

// Validate checks s: URLs absolute http(s) (checkURL, when set, applies the URL guard), at
// most 50 scopes each an RFC 6749 §3.3 scope-token, at most 20 parameters named
// [A-Za-z0-9_.-]{1,64}, none of reservedParams, values at most 1024 characters without
// control characters. The error names the field.
func (s Settings) Validate(checkURL func(string) error) error {
	for _, f := range []struct{ name, v string }{{"issuer", s.Issuer}, {"metadataUrl", s.MetadataURL}} {
		if f.v == "" {
			continue
		}
		u, err := url.Parse(f.v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(f.v) > 2048 {
			return fmt.Errorf("%s must be an absolute http(s) URL (at most 2048 characters)", f.name)
		}
		if u.Fragment != "" || (f.name == "issuer" && u.RawQuery != "") {
			return fmt.Errorf("%s must not carry a query or fragment (RFC 8414 §2)", f.name)
		}
		if checkURL != nil {
			if err := checkURL(f.v); err != nil {
				return fmt.Errorf("%s is not allowed: %s", f.name, publicMsg(err))
			}
		}
	}
	if len(s.Scopes) > 50 {
		return fmt.Errorf("scopes: at most 50")
	}
	for _, sc := range s.Scopes {
		if !scopeToken(sc) {
			return fmt.Errorf("scopes: %q is not a scope token (RFC 6749 §3.3: printable ASCII, no space, quote or backslash)", clipName(sc))
		}
	}
	if len(s.AuthorizationParams) > 20 {
		return fmt.Errorf("authorizationParams: at most 20")
	}
	for k, v := range s.AuthorizationParams {
		if !paramName.MatchString(k) {
			return fmt.Errorf("authorizationParams: name %q must match [A-Za-z0-9_.-]{1,64}", clipName(k))
		}
		if slices.Contains(reservedParams, strings.ToLower(k)) {
			return fmt.Errorf("authorizationParams: %q is set by the flow itself and cannot be configured", k)
		}
		if len(v) > 1024 || strings.IndexFunc(v, unicode.IsControl) >= 0 {
			return fmt.Errorf("authorizationParams: value of %q must be at most 1024 characters without control characters", k)
		}
	}
	return nil
}

func clipName(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Over returns s with every field set in o replacing its own (a connection's settings over
// its catalog entry's).
func (s Settings) Over(o Settings) Settings {
	if o.Issuer != "" {
		s.Issuer = o.Issuer
	}
	if o.MetadataURL != "" {
		s.MetadataURL = o.MetadataURL
	}
	if o.Scopes != nil {
		s.Scopes = o.Scopes
	}
	if o.AuthorizationParams != nil {
		s.AuthorizationParams = o.AuthorizationParams
	}
	return s
}

// IsZero reports whether s sets nothing.
func (s Settings) IsZero() bool {
	return s.Issuer == "" && s.MetadataURL == "" && len(s.Scopes) == 0 && len(s.AuthorizationParams) == 0
}
