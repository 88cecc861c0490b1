package demoupstream_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
)

func startProtected(t *testing.T) *demoupstream.Protected {
	t.Helper()
	p, err := demoupstream.StartProtected("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// TestProtectedStateFile: with a state file the authorization server's key and client
// secret are written (0600) and read back by the next start; an unreadable file is an
// error that names it, and nothing starts.
func TestProtectedStateFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "as.json")
	p1, err := demoupstream.StartProtected("127.0.0.1:0", &demoupstream.ProtectedOptions{StateFile: file})
	if err != nil {
		t.Fatal(err)
	}
	_ = p1.Close()
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", fi, err)
	}
	p2, err := demoupstream.StartProtected("127.0.0.1:0", &demoupstream.ProtectedOptions{StateFile: file})
	if err != nil {
		t.Fatal(err)
	}
	_ = p2.Close()
	if p1.ClientSecret() != p2.ClientSecret() || !p1.AS.Keypair.PrivateKey.Equal(p2.AS.Keypair.PrivateKey) {
		t.Error("the second start did not reuse the saved secret and key")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := demoupstream.StartProtected("127.0.0.1:0", &demoupstream.ProtectedOptions{StateFile: bad}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("unreadable state file: %v", err)
	}
}

type bearerRT struct{ tok string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// TestProtectedRefusesWithoutToken: the MCP endpoint answers 401 with an RFC 9728 challenge
// naming its metadata and scopes, for no token and for a token it did not issue; the
// metadata names the authorization server, whose discovery document is served.
func TestProtectedRefusesWithoutToken(t *testing.T) {
	t.Parallel()
	p := startProtected(t)
	for _, tc := range []struct{ name, auth string }{{"no token", ""}, {"foreign token", "Bearer not-a-jwt"}} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", p.MCPURL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			wa := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != 401 || !strings.Contains(wa, `resource_metadata="`+p.URL()+`/.well-known/oauth-protected-resource/mcp"`) || !strings.Contains(wa, `scope="openid profile"`) {
				t.Errorf("%d %q", resp.StatusCode, wa)
			}
		})
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(t, p.URL()+"/.well-known/oauth-protected-resource/mcp", &prm)
	if prm.Resource != p.MCPURL() || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != p.Issuer() {
		t.Errorf("metadata %+v", prm)
	}
	var asm map[string]any
	getJSON(t, p.Issuer()+"/.well-known/openid-configuration", &asm)
	if asm["issuer"] != p.Issuer() || !strings.Contains(asm["token_endpoint"].(string), "/oidc/token") {
		t.Errorf("authorization server metadata %v", asm)
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestProtectedCodeFlow walks the authorization code flow with PKCE as an OAuth client does
// (golang.org/x/oauth2): /authorize approves the demo user at once, the code and verifier
// buy a token whose expires_in is in seconds, a wrong verifier is refused, and the token
// reaches the protected tools: whoami answers the demo user.
func TestProtectedCodeFlow(t *testing.T) {
	t.Parallel()
	p := startProtected(t)
	cfg := &oauth2.Config{ClientID: demoupstream.ProtectedClientID, ClientSecret: p.ClientSecret(),
		RedirectURL: "http://127.0.0.1:1/callback", Scopes: demoupstream.ProtectedScopes,
		Endpoint: oauth2.Endpoint{AuthURL: p.Issuer() + "/authorize", TokenURL: p.Issuer() + "/token", AuthStyle: oauth2.AuthStyleInParams}}
	authorize := func(verifier string) string {
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noRedirect.Get(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || loc.Query().Get("state") != "st" || loc.Query().Get("code") == "" {
			t.Fatalf("authorize: %d %s", resp.StatusCode, loc)
		}
		return loc.Query().Get("code")
	}
	v := oauth2.GenerateVerifier()
	if _, err := cfg.Exchange(t.Context(), authorize(v), oauth2.VerifierOption(oauth2.GenerateVerifier())); err == nil {
		t.Error("a wrong PKCE verifier bought a token")
	}
	v = oauth2.GenerateVerifier()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {authorize(v)}, "code_verifier": {v},
		"client_id": {cfg.ClientID}, "client_secret": {cfg.ClientSecret}, "redirect_uri": {cfg.RedirectURL}}
	resp, err := http.PostForm(cfg.Endpoint.TokenURL, form)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(raw, &tok); err != nil || resp.StatusCode != 200 || tok.AccessToken == "" || tok.RefreshToken == "" {
		t.Fatalf("token: %d %s", resp.StatusCode, raw)
	}
	if want := int64(p.AS.AccessTTL.Seconds()); tok.ExpiresIn != want {
		t.Errorf("expires_in = %d, want %d (seconds, RFC 6749 §5.1)", tok.ExpiresIn, want)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: p.MCPURL(),
		HTTPClient: &http.Client{Transport: bearerRT{tok.AccessToken}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("whoami: %v %v", err, res)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "signed in upstream as 1234567890" {
		t.Errorf("whoami = %q", got)
	}
	// whoami's output schema types scopes as a plain array (no ["null","array"], which the
	// MCP Inspector flags as unportable), and its result matches it.
	for tl, err := range s.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tl.Name != "whoami" {
			continue
		}
		raw, _ := json.Marshal(tl.OutputSchema)
		if !strings.Contains(string(raw), `"scopes":{"items":{"type":"string"},"type":"array"}`) || strings.Contains(string(raw), "null") {
			t.Errorf("whoami output schema: %s", raw)
		}
	}
	if sc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(sc), `"scopes":[`) {
		t.Errorf("whoami structured content: %s", sc)
	}
	if res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil || res.IsError {
		t.Errorf("echo: %v %v", err, res)
	}
}
