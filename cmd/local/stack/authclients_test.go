package stack_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentpack/gateway/functions/marketplace/authserver"
)

// state is optional (OAuth 2.1 §7.12 with PKCE; Cursor and the Inspector's web UI send none)
// and never judged by its length: none sent, none echoed; whatever was sent, echoed as sent.
func TestAuthServerStateOptional(t *testing.T) {
	t.Parallel()
	w := newASWorld(t, nil)
	const redirect = "http://127.0.0.1:9/callback"
	for _, tc := range []struct {
		name  string
		state []string // nil: no state parameter at all
	}{
		{"none", nil},
		{"one character", []string{"x"}},
		{"spaces, unicode and reserved characters", []string{"a b&c=d/é?#+%"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := w.register(t, redirect)
			authURL, verifier := w.authorizeURL(client, redirect, url.Values{"state": {""}})
			if tc.state != nil {
				u, _ := url.Parse(authURL)
				q := u.Query()
				q["state"] = tc.state
				u.RawQuery = q.Encode()
				authURL = u.String()
			}
			b := w.browser(t, "ada")
			loc := w.consentRedirect(t, b, authURL, redirect)
			q := loc.Query()
			if q.Get("code") == "" {
				t.Fatalf("no code: %s", loc)
			}
			if got, sent := q["state"], tc.state; (sent == nil) != (got == nil) || sent != nil && got[0] != sent[0] {
				t.Fatalf("state in the redirect %q, sent %q", got, sent)
			}
			if st, tok := w.exchange(t, client, redirect, q.Get("code"), verifier); st != 200 {
				t.Fatalf("token: %d %v", st, tok)
			}
		})
	}
}

// Scopes the server does not offer are ignored, not refused (RFC 6749 §3.3): at authorize,
// at the token endpoint and at refresh; the token response says what was granted.
func TestAuthServerScopesGrantWhatIsOffered(t *testing.T) {
	t.Parallel()
	w := newASWorld(t, nil)
	const redirect = "http://127.0.0.1:9/callback"
	for _, scope := range []string{"mcp offline_access", "openid profile", "offline_access mcp mcp admin", ""} {
		t.Run(scope, func(t *testing.T) {
			client := w.register(t, redirect)
			authURL, verifier := w.authorizeURL(client, redirect, url.Values{"scope": {scope}})
			loc := w.consentRedirect(t, w.browser(t, "ada"), authURL, redirect)
			if loc.Query().Get("error") != "" || loc.Query().Get("code") == "" {
				t.Fatalf("scope %q: %s, want a code", scope, loc)
			}
			st, tok := w.tokenReq(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {client},
				"code": {loc.Query().Get("code")}, "redirect_uri": {redirect}, "code_verifier": {verifier},
				"resource": {w.env.URL + "/mcp"}, "scope": {scope}})
			if st != 200 || tok["scope"] != "mcp" || tok["refresh_token"] == nil {
				t.Fatalf("token for scope %q: %d %v, want scope mcp and a refresh token", scope, st, tok)
			}
			st, r := w.tokenReq(t, url.Values{"grant_type": {"refresh_token"}, "client_id": {client},
				"refresh_token": {tok["refresh_token"].(string)}, "scope": {scope + " offline_access"}})
			if st != 200 || r["scope"] != "mcp" {
				t.Fatalf("refresh with scope %q: %d %v", scope, st, r)
			}
		})
	}
}

// Every MCP URL has its own protected resource metadata naming exactly that URL (RFC 9728
// §3.3: gemini-cli and VS Code refuse any other), and the 401 on each URL points at it. The
// token a client gets for that resource works there.
func TestResourceMetadataPerURL(t *testing.T) {
	t.Parallel()
	w := newASWorld(t, nil)
	a := w.ws["A"]
	for _, path := range []string{"/mcp", "/mcp/" + a.id, "/mcp/" + a.id + "/servers/" + a.handle} {
		t.Run(path, func(t *testing.T) {
			resp, _ := w.env.RPC(t, path, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
				map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
			want := w.env.URL + "/.well-known/oauth-protected-resource" + path
			if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(ch, `resource_metadata="`+want+`"`) {
				t.Fatalf("401 challenge %d %q, want resource_metadata=%q", resp.StatusCode, ch, want)
			}
			var prm map[string]any
			getJSON(t, want, &prm)
			if prm["resource"] != w.env.URL+path {
				t.Fatalf("resource %v, want exactly %s", prm["resource"], w.env.URL+path)
			}
			if as, _ := prm["authorization_servers"].([]any); len(as) != 1 || as[0] != w.env.URL {
				t.Fatalf("authorization_servers %v", prm["authorization_servers"])
			}
			// A client that asks for that resource gets a token that works there.
			const redirect = "http://127.0.0.1:9/callback"
			client := w.register(t, redirect)
			authURL, verifier := w.authorizeURL(client, redirect, url.Values{"resource": {w.env.URL + path}})
			code := w.consent(t, w.browser(t, "ada"), authURL, redirect)
			st, tok := w.tokenReq(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "code": {code},
				"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {w.env.URL + path}})
			if st != 200 {
				t.Fatalf("token: %d %v", st, tok)
			}
			if st, m := w.rpc(t, path, tok["access_token"].(string), "tools/list", nil, nil); st != 200 {
				t.Fatalf("tools/list at %s with its token: %d %v", path, st, m)
			}
			// Refused on another workspace's URL.
			if st, _ := w.rpc(t, "/mcp/"+w.ws["B"].id, tok["access_token"].(string), "tools/list", nil, nil); st != http.StatusForbidden {
				t.Fatalf("token of %s on workspace B: %d, want 403", path, st)
			}
		})
	}
	// The bare document names the gateway-wide resource, as before; a path the gateway does
	// not serve has none.
	var bare map[string]any
	getJSON(t, w.env.URL+"/.well-known/oauth-protected-resource", &bare)
	if bare["resource"] != w.env.URL+"/mcp" {
		t.Fatalf("bare document's resource %v", bare["resource"])
	}
	for _, p := range []string{"/api", "/mcp/not-a-uuid", "/mcp/" + a.id + "/other/x", "/mcp/" + a.id + "/servers/"} {
		resp, err := http.Get(w.env.URL + "/.well-known/oauth-protected-resource" + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("metadata for %s: %d, want 404", p, resp.StatusCode)
		}
	}
}

// A URL naming a workspace the person is not a member of gets a page saying so, not a token
// for another workspace that the URL would then refuse.
func TestAuthServerResourceOfAnotherWorkspace(t *testing.T) {
	t.Parallel()
	w := newASWorld(t, nil)
	const redirect = "http://127.0.0.1:9/callback"
	client := w.register(t, redirect)
	authURL, _ := w.authorizeURL(client, redirect, url.Values{"resource": {w.env.URL + "/mcp/" + w.ws["B"].id}})
	resp, err := w.browser(t, "ada").Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "not a member of it") ||
		!strings.Contains(string(body), w.ws["B"].id) {
		t.Fatalf("%d %s, want 403 naming the workspace", resp.StatusCode, body)
	}
}

// One origin: an authorization request on another host name than the one people sign in at
// is told which URL to use, before any sign-in; on the sign-in origin it proceeds.
func TestAuthServerOtherOrigin(t *testing.T) {
	t.Parallel()
	const origin = "http://gateway.example"
	w := newASWorld(t, func(o *authserver.Options) { o.SignInOrigin = origin })
	const redirect = "http://127.0.0.1:9/callback"
	client := w.register(t, redirect)
	ws := w.ws["A"].id
	authURL, _ := w.authorizeURL(client, redirect, url.Values{"resource": {w.env.URL + "/mcp/" + ws}})
	resp, err := w.browser(t, "ada").Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" ||
		!strings.Contains(string(body), origin+"/mcp/"+ws) {
		t.Fatalf("%d %s, want 400 naming %s/mcp/%s", resp.StatusCode, body, origin, ws)
	}
	// A resource that is not an MCP URL is never echoed as the URL to use.
	authURL, _ = w.authorizeURL(client, redirect, url.Values{"resource": {w.env.URL + "/call-us-at-555"}})
	resp, err = w.browser(t, "ada").Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "call-us") || !strings.Contains(string(body), origin+"/mcp ") {
		t.Fatalf("other-origin page echoes the request's resource: %s", body)
	}
	// On the sign-in origin's host name the request goes on (here: to the consent page).
	req, _ := http.NewRequest(http.MethodGet, authURL, nil)
	req.Host = "gateway.example"
	resp, err = w.browser(t, "ada").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusBadRequest && strings.Contains(resp.Header.Get("Content-Type"), "html") {
		t.Fatalf("request on the sign-in origin refused: %d", resp.StatusCode)
	}
}
