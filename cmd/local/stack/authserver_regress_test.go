package stack_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Issue 41 made the authorization server accept clients as they really behave (no state,
// scopes it does not offer, per-URL resources); what it must still refuse stays refused.
// PKCE (TestAuthServerBadAuthorizeRequests "PKCE missing", "PKCE plain"), code replay
// (TestAuthServerCodeReplay), refresh reuse (TestAuthServerFlowAndRefreshReuse) and the
// registration flood (TestAuthServerRegistration) have their own tests; this one covers
// exact redirect URIs outside loopback and the consent page's framing.

// Outside loopback a redirect URI matches only exactly (OAuth 2.1 §4.1.1 / RFC 9700 §4.1.3):
// an https or private-use-scheme URI registered by a client is refused with any other
// port, path, query, case or trailing slash, on a page (the redirect is not trusted), while
// the registered one reaches consent. A loopback URI may change its port only (RFC 8252
// §7.3), with and without a state.
func TestAuthServerExactRedirectURIs(t *testing.T) {
	w := newASWorld(t, nil)
	b := w.browser(t, "ada")
	for _, reg := range []struct {
		registered string
		refused    []string
	}{
		{"https://app.example/cb", []string{"https://app.example/cb/", "https://app.example:8443/cb", "https://app.example/cb?x=1",
			"https://APP.example/cb", "https://app.example/CB", "http://app.example/cb", "https://app.example/cb2"}},
		{"cursor://anysphere.cursor-mcp/oauth/callback", []string{"cursor://anysphere.cursor-mcp/oauth/callback/", "cursor://evil/oauth/callback",
			"cursor://anysphere.cursor-mcp/oauth/callbackx"}},
		{"http://127.0.0.1:9/callback", []string{"http://127.0.0.1:9/other", "http://127.0.0.2:9/callback", "http://127.0.0.1:9/callback?x=1"}},
	} {
		client := w.register(t, reg.registered)
		for _, bad := range reg.refused {
			t.Run(reg.registered+" → "+bad, func(t *testing.T) {
				u, _ := w.authorizeURL(client, reg.registered, url.Values{"redirect_uri": {bad}})
				resp, err := b.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				refusedPage(t, resp, body, "invalid_request", "redirect_uri")
			})
		}
		t.Run(reg.registered+" exactly", func(t *testing.T) {
			u, _ := w.authorizeURL(client, reg.registered, nil)
			if code := w.consent(t, b, u, reg.registered); code == "" {
				t.Fatal("no code for the registered redirect URI")
			}
		})
	}
	t.Run("loopback with another port and no state", func(t *testing.T) {
		client := w.register(t, "http://127.0.0.1:9/callback")
		u, _ := w.authorizeURL(client, "http://127.0.0.1:9/callback", url.Values{"redirect_uri": {"http://127.0.0.1:45678/callback"}, "state": {""}})
		back := w.consentRedirect(t, b, u, "http://127.0.0.1:45678/callback")
		if _, has := back.Query()["state"]; has || back.Query().Get("code") == "" {
			t.Fatalf("redirect %s, want a code and no state", back)
		}
	})
}

// The consent page (and the refusal page) cannot be framed: a page that frames it could
// trick the member into allowing (clickjacking, RFC 6819 §4.4.1.9). Both carry
// Content-Security-Policy frame-ancestors 'none' and X-Frame-Options DENY, for a client
// that sends a state and for one that does not.
func TestAuthServerConsentNotFramable(t *testing.T) {
	w := newASWorld(t, nil)
	b := w.browser(t, "ada")
	client := w.register(t, "http://127.0.0.1:9/callback")
	withState, _ := w.authorizeURL(client, "http://127.0.0.1:9/callback", nil)
	noState, _ := w.authorizeURL(client, "http://127.0.0.1:9/callback", url.Values{"state": {""}})
	refused, _ := w.authorizeURL(client, "http://127.0.0.1:9/callback", url.Values{"redirect_uri": {"https://evil.example/cb"}})
	for name, u := range map[string]string{"consent": withState, "consent without state": noState, "refusal page": refused} {
		t.Run(name, func(t *testing.T) {
			resp, err := b.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if name != "refusal page" && (resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="allow"`)) {
				t.Fatalf("want the consent page: %d %s", resp.StatusCode, body)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "frame-ancestors 'none'") || resp.Header.Get("X-Frame-Options") != "DENY" {
				t.Fatalf("framable: Content-Security-Policy %q, X-Frame-Options %q", csp, resp.Header.Get("X-Frame-Options"))
			}
		})
	}
}
