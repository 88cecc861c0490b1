package stack_test

// Real MCP clients against the gateway's own authorization server, each as it really behaves
// (issue 41; the client-behaviour matrix in docs/AUTH.md names the test of every row). Each
// is given only the URL the banner prints, `…/mcp/<workspace>`, and must sign in by itself:
// discovery from the 401, the protected resource metadata whose `resource` is that URL
// (RFC 9728 §3.3), registration, the authorization request as the client builds it, consent
// in the member's browser, the token, then tools/list.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/testpeer"
	gosdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// checkSignedIn fails unless res listed the workspace's tools as the signed-in member, the
// SDK's authorization request named the URL it was given as the `resource` (RFC 8707, from
// protected resource metadata whose resource is exactly that URL), and the token response
// said what it granted (`scope`, RFC 6749 §5.1).
func checkSignedIn(t *testing.T, w *asWorld, res *oauthClientResult, mcpURL string) {
	t.Helper()
	a := w.ws["A"]
	if !hasPrefix(res.Tools, "mcp_"+a.handle+"_") {
		t.Fatalf("tools/list as the signed-in member: %v", res.Tools)
	}
	if got := res.Authorize.Query().Get("resource"); got != mcpURL {
		t.Errorf("the SDK asked for resource %q, want the URL it was given %q (its protected resource metadata must name it)", got, mcpURL)
	}
	if res.Authorize.Query().Get("code_challenge_method") != "S256" {
		t.Errorf("authorization request without PKCE S256: %v", res.Authorize.Query())
	}
	if !strings.Contains(" "+res.Scope+" ", " mcp ") {
		t.Errorf("token response scope %q, want the granted scope mcp", res.Scope)
	}
}

// The TypeScript SDK sends `state` only when its OAuthClientProvider implements the optional
// state(); the SDK's own example provider (simpleOAuthClientProvider) does not, and neither
// do Cursor and the Inspector's web UI (docs/AUTH.md, the matrix). OAuth 2.1 §4.1.1 makes
// `state` optional with PKCE: the v1 client (1.32.2) and the v2 client (2.3.1) sign in
// without one, and a state of any length is echoed exactly as sent (RFC 6749 §4.1.2).
func TestTypeScriptSDKStateOptional(t *testing.T) {
	w := newASWorld(t, nil)
	a := w.ws["A"]
	mcpURL := w.env.URL + "/mcp/" + a.id
	for _, tc := range []struct {
		name string
		env  []string
		// state is what the SDK must send and get back; "" none at all.
		state string
	}{
		{"v1 without state()", []string{"MCP_NO_STATE=1"}, ""},
		{"v1 with a three-character state", []string{"MCP_STATE=a+b"}, "a+b"},
		{"v2 without state()", []string{"MCP_SDK=v2", "MCP_NO_STATE=1"}, ""},
		// VS Code's loopback flow sends randomBytes(16).toString('base64'): '+', '/', '='.
		{"v2 with a base64 state", []string{"MCP_SDK=v2", "MCP_STATE=q8/Zx+1Qm0c9Q2w4Tz+s7A=="}, "q8/Zx+1Qm0c9Q2w4Tz+s7A=="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := w.runOAuthClient(t, mcpURL, "ada", tc.env...)
			checkSignedIn(t, w, res, mcpURL)
			sent, hasSent := res.Authorize.Query()["state"]
			back, hasBack := res.Redirect.Query()["state"]
			switch {
			case tc.state == "" && (hasSent || hasBack):
				t.Fatalf("state sent %v and answered %v, want none either way", sent, back)
			case tc.state != "" && (len(sent) != 1 || sent[0] != tc.state):
				t.Fatalf("the SDK sent state %v, want %q", sent, tc.state)
			case tc.state != "" && (len(back) != 1 || back[0] != tc.state):
				t.Fatalf("the redirect carried state %v, want it echoed exactly: %q", back, tc.state)
			}
		})
	}
}

// prmRecorder is an http.RoundTripper that keeps the body of every protected resource
// metadata document (RFC 9728) a client fetched, by URL.
type prmRecorder struct {
	mu   sync.Mutex
	docs map[string]map[string]any
}

func (r *prmRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !strings.HasPrefix(req.URL.Path, "/.well-known/oauth-protected-resource") {
		return resp, err
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	var doc map[string]any
	_ = json.Unmarshal(raw, &doc)
	r.mu.Lock()
	r.docs[req.URL.String()] = doc
	r.mu.Unlock()
	return resp, nil
}

// The Go SDK's client auth (go-sdk auth.AuthorizationCodeHandler, the version in go.mod)
// given the banner's URL: it takes the 401's resource_metadata, checks the document's
// `resource` against the URL (oauthex.GetProtectedResourceMetadata, RFC 9728 §3.3), reads
// the authorization server metadata, registers (RFC 7591), checks RFC 9207 `iss` and `state`,
// and exchanges the code with PKCE and `resource`. Registered as a public client
// (`none`) and as RFC 7591's default confidential client (`client_secret_basic`, the secret
// sent by HTTP Basic).
func TestGoSDKClientSignsIn(t *testing.T) {
	w := newASWorld(t, nil)
	a := w.ws["A"]
	mcpURL := w.env.URL + "/mcp/" + a.id
	for _, tc := range []struct{ name, method string }{
		{"public client", "none"},
		{"RFC 7591 default, client_secret_basic", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &prmRecorder{docs: map[string]map[string]any{}}
			hc := &http.Client{Transport: rec}
			redirect := "http://127.0.0.1:9/go-sdk/callback"
			var asked *url.URL
			h, err := gosdkauth.NewAuthorizationCodeHandler(&gosdkauth.AuthorizationCodeHandlerConfig{
				DynamicClientRegistrationConfig: &gosdkauth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
					RedirectURIs: []string{redirect}, ClientName: "Go SDK test client", TokenEndpointAuthMethod: tc.method,
					GrantTypes: []string{"authorization_code", "refresh_token"},
				}},
				RedirectURL: redirect,
				AuthorizationCodeFetcher: func(ctx context.Context, args *gosdkauth.AuthorizationArgs) (*gosdkauth.AuthorizationResult, error) {
					asked, _ = url.Parse(args.URL)
					back := w.consentRedirect(t, w.browser(t, "ada"), args.URL, redirect)
					q := back.Query()
					return &gosdkauth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
				},
				Client: hc,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), testpeer.Scaled(60*time.Second))
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-oauth", Version: "1.0.0"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL, OAuthHandler: h, HTTPClient: hc}, nil)
			if err != nil {
				t.Fatalf("connect with the Go SDK's OAuth handler: %v\n%s", err, tailLogs(w))
			}
			defer cs.Close()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
			}
			if !hasPrefix(names, "mcp_"+a.handle+"_") {
				t.Fatalf("tools/list as the signed-in member: %v", names)
			}
			if asked == nil || asked.Query().Get("resource") != mcpURL {
				t.Fatalf("the Go SDK's authorization request %v, want resource %s", asked, mcpURL)
			}
			// The SDK falls back to the origin as the authorization server when no metadata
			// document passes its check, so success alone does not prove the document: the
			// one it fetched first (the 401's resource_metadata) must name the URL itself.
			prm := w.env.URL + "/.well-known/oauth-protected-resource/mcp/" + a.id
			if doc := rec.docs[prm]; doc == nil || doc["resource"] != mcpURL {
				t.Fatalf("protected resource metadata the Go SDK fetched %v; %s must answer resource %s", rec.docs, prm, mcpURL)
			}
		})
	}
}

// tailLogs is the end of the stack's log, for failure messages.
func tailLogs(w *asWorld) string {
	l := w.env.Logs.String()
	return l[max(0, len(l)-4000):]
}

// A client that sends no `state` (the TypeScript SDK with a provider without state(), as
// Cursor and the Inspector's web UI behave), with a real browser: headless Chromium, the
// member signed in, opens the authorization URL, shows the consent page, allows, and lands
// on the client's loopback callback with a code and no state; the client then lists the
// workspace's tools.
func TestNoStateSignInWithChromium(t *testing.T) {
	browser := testpeer.Chromium(t)
	w := newASWorld(t, nil)
	mcpURL := w.env.URL + "/mcp/" + w.ws["A"].id
	landed := make(chan *url.URL, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		u, _ := url.Parse("http://" + r.Host + r.RequestURI)
		select {
		case landed <- u:
		default:
		}
		_, _ = io.WriteString(rw, "signed in; you can close this window")
	}))
	t.Cleanup(cb.Close)
	redirect := cb.URL + "/callback"
	res := w.runOAuthClientWith(t, mcpURL, func(authURL string) *url.URL {
		consent := allowInChromium(t, w, browser, authURL)
		if !strings.Contains(consent, "TypeScript SDK test client") {
			t.Errorf("the consent page does not name the client:\n%s", consent)
		}
		select {
		case u := <-landed:
			return u
		case <-time.After(testpeer.Scaled(30 * time.Second)):
			t.Fatal("the browser never reached the client's callback")
			return nil
		}
	}, "MCP_NO_STATE=1", "MCP_REDIRECT_URL="+redirect)
	checkSignedIn(t, w, res, mcpURL)
	if _, sent := res.Authorize.Query()["state"]; sent {
		t.Fatalf("the client sent a state: %v", res.Authorize.Query())
	}
	if _, back := res.Redirect.Query()["state"]; back || res.Redirect.Query().Get("code") == "" {
		t.Fatalf("the browser landed on %s, want a code and no state", res.Redirect)
	}
}
