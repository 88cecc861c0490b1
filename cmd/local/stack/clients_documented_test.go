package stack_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Clients that cannot run here (VS Code, Cursor, claude.ai and Claude Desktop's connectors)
// are reproduced from their public sources: the requests each one sends, in its own form
// (JSON key order, query parameter order, state shape, redirect URIs, client
// authentication), against the real stack. Where a source shows only part of a request, the
// rest is marked "not found" in the comments and in docs/AUTH.md's client-behaviour matrix,
// and filled with what OAuth 2.1 requires.

// documentedClient is one client's requests as its public source shows them.
// All three check the protected resource metadata strictly (RFC 9728 §3.3): discover
// fails unless its `resource` is exactly the URL given.
type documentedClient struct {
	// register builds the registration body, byte for byte, from the server's metadata.
	register func(asm map[string]any) string
	// authorize is the authorization request's query, in the client's order.
	authorize func(clientID, challenge, resource string) []param
	// authMethod is the client authentication it uses at the token endpoint once
	// registered: "none" or "client_secret_post".
	authMethod string
}

// param is one query parameter, in order.
type param struct{ k, v string }

// encodeParams encodes params in order as the WHATWG URLSearchParams serializer does
// (application/x-www-form-urlencoded: space as '+', every byte but ALPHA / DIGIT / "*-._"
// percent-encoded), which is what VS Code's and Cursor's TypeScript builds with.
func encodeParams(ps []param) string {
	var b strings.Builder
	enc := func(s string) {
		for _, c := range []byte(s) {
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '*', c == '-', c == '.', c == '_':
				b.WriteByte(c)
			case c == ' ':
				b.WriteByte('+')
			default:
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
	}
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('&')
		}
		enc(p.k)
		b.WriteByte('=')
		enc(p.v)
	}
	return b.String()
}

// vsCodeState is the state VS Code's loopback flow sends: randomBytes(16).toString('base64')
// (standard alphabet with '+', '/' and '=' padding).
func vsCodeState() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

var resourceMetadataParam = regexp.MustCompile(`resource_metadata="([^"]+)"`)

// discover is the discovery every one of these clients does from the URL it was given: the
// 401's resource_metadata, the protected resource metadata (whose resource must be exactly
// the URL), then the authorization server metadata (RFC 8414 §3, path inserted).
func (w *asWorld) discover(t *testing.T, mcpURL string) (prm, asm map[string]any) {
	t.Helper()
	path := strings.TrimPrefix(mcpURL, w.env.URL)
	resp, _ := w.env.RPC(t, path, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"documented","version":"1"}}}`, nil)
	m := resourceMetadataParam.FindStringSubmatch(resp.Header.Get("WWW-Authenticate"))
	if resp.StatusCode != http.StatusUnauthorized || m == nil {
		t.Fatalf("unauthenticated POST %s: %d %q, want 401 with resource_metadata", path, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	getJSON(t, m[1], &prm)
	if prm["resource"] != mcpURL {
		t.Fatalf("protected resource metadata %s names resource %v; the client was given %s and refuses any other (RFC 9728 §3.3)", m[1], prm["resource"], mcpURL)
	}
	servers, _ := prm["authorization_servers"].([]any)
	if len(servers) == 0 {
		t.Fatalf("protected resource metadata without authorization_servers: %v", prm)
	}
	as, _ := url.Parse(fmt.Sprint(servers[0]))
	getJSON(t, as.Scheme+"://"+as.Host+"/.well-known/oauth-authorization-server"+strings.TrimSuffix(as.Path, "/"), &asm)
	return prm, asm
}

// postRaw posts body as ctype to u with extra headers and returns the status and JSON answer.
func postRaw(t *testing.T, u, ctype, body string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if m == nil {
		m = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, m
}

// signInAs runs c's whole flow against mcpURL for ada: discovery, registration, the
// authorization request, consent, the token request; then tools/list with the token. It
// returns the registration answer, the authorization request and the redirect, and the
// token answer.
func (w *asWorld) signInAs(t *testing.T, c documentedClient, mcpURL string) (reg map[string]any, authz []param, back *url.URL, tok map[string]any) {
	t.Helper()
	_, asm := w.discover(t, mcpURL)
	st, reg := postRaw(t, fmt.Sprint(asm["registration_endpoint"]), "application/json", c.register(asm), nil)
	if st != http.StatusCreated {
		t.Fatalf("registration: %d %v", st, reg)
	}
	clientID, _ := reg["client_id"].(string)
	if got := reg["token_endpoint_auth_method"]; got != c.authMethod {
		t.Fatalf("registered with token_endpoint_auth_method %v, want the one asked for, %s (RFC 7591 §2): %v", got, c.authMethod, reg)
	}
	verifier := base64.RawURLEncoding.EncodeToString([]byte(rand.Text() + rand.Text()))[:64]
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	authz = c.authorize(clientID, challenge, mcpURL)
	authURL := fmt.Sprint(asm["authorization_endpoint"]) + "?" + encodeParams(authz)
	redirect := ""
	for _, p := range authz {
		if p.k == "redirect_uri" {
			redirect = p.v
		}
	}
	back = w.consentRedirect(t, w.browser(t, "ada"), authURL, redirect)
	form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "redirect_uri": {redirect},
		"code_verifier": {verifier}, "client_id": {clientID}}
	if c.authMethod == "client_secret_post" {
		form.Set("client_secret", fmt.Sprint(reg["client_secret"]))
	}
	st, tok = postRaw(t, fmt.Sprint(asm["token_endpoint"]), "application/x-www-form-urlencoded", form.Encode(), nil)
	if st != http.StatusOK || tok["access_token"] == nil {
		t.Fatalf("token request: %d %v", st, tok)
	}
	st, list := w.rpc(t, strings.TrimPrefix(mcpURL, w.env.URL), fmt.Sprint(tok["access_token"]), "tools/list", nil, nil)
	if st != http.StatusOK || !hasPrefix(toolNames(list), "mcp_"+w.ws["A"].handle+"_") {
		t.Fatalf("tools/list with the token: %d %v", st, list)
	}
	return reg, authz, back, tok
}

// queryValue is the value of k in ps.
func queryValue(ps []param, k string) string {
	for _, p := range ps {
		if p.k == k {
			return p.v
		}
	}
	return ""
}

// VS Code (microsoft/vscode): src/vs/base/common/oauth.ts fetchResourceMetadata compares
// new URL(resource).toString() with the server URL and refuses a mismatch ("Protected
// Resource Metadata resource … does not match …", microsoft/vscode#259251,
// modelcontextprotocol/python-sdk#1264); fetchDynamicRegistration posts the body below
// (its key order; grant_types the server's grant_types_supported it knows; redirect URIs
// without a port and with its default 33418; token_endpoint_auth_method none;
// application_type native); src/vs/workbench/api/node/extHostAuthentication.ts
// _createWithLoopbackServer builds the query below in that order, redirect
// http://127.0.0.1:<port>/ (33418, or any free port when taken) and state
// randomBytes(16).toString('base64'). Its token request: not found in the stored source
// (DynamicAuthProvider.exchangeCodeForToken); RFC 6749 §4.1.3 with PKCE is sent.
func vsCode(port int) documentedClient {
	return documentedClient{
		register: func(asm map[string]any) string {
			known := []string{"authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"}
			grants := known
			if gs, ok := asm["grant_types_supported"].([]any); ok {
				grants = nil
				for _, g := range gs {
					if slices.Contains(known, fmt.Sprint(g)) {
						grants = append(grants, fmt.Sprint(g))
					}
				}
			}
			gj, _ := json.Marshal(grants)
			return `{"client_name":"Visual Studio Code","client_uri":"https://code.visualstudio.com","grant_types":` + string(gj) +
				`,"response_types":["code"],"redirect_uris":["https://insiders.vscode.dev/redirect","https://vscode.dev/redirect","http://127.0.0.1/","http://127.0.0.1:33418/"],` +
				`"scope":"mcp","token_endpoint_auth_method":"none","application_type":"native"}`
		},
		authorize: func(clientID, challenge, resource string) []param {
			return []param{{"client_id", clientID}, {"response_type", "code"}, {"scope", "mcp"}, {"code_challenge", challenge},
				{"code_challenge_method", "S256"}, {"resource", resource}, {"redirect_uri", fmt.Sprintf("http://127.0.0.1:%d/", port)},
				{"state", vsCodeState()}}
		},
		authMethod: "none",
	}
}

// Cursor: its registration body as measured and quoted in erp-mafia/accounted PR #2225
// (three redirect URIs: cursor://anysphere.cursor-mcp/oauth/callback, Cursor's cloud
// agents' https callback and http://localhost:8787/callback; token_endpoint_auth_method
// none; client_name "Cursor"); its authorization requests carry no `state`
// (giantswarm/mcp-oauth PR #94, sigbit/mcp-auth-proxy PR #126, cursor/cursor#3576). The
// authorization query's parameter order and its scope: not found; the TypeScript SDK's
// order (startAuthorization) is used, without scope.
func cursor() documentedClient {
	return documentedClient{
		register: func(map[string]any) string {
			return `{"redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback","https://www.cursor.com/agents/mcp/oauth/callback","http://localhost:8787/callback"],` +
				`"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"client_name":"Cursor"}`
		},
		authorize: func(clientID, challenge, resource string) []param {
			return []param{{"response_type", "code"}, {"client_id", clientID}, {"code_challenge", challenge}, {"code_challenge_method", "S256"},
				{"redirect_uri", "cursor://anysphere.cursor-mcp/oauth/callback"}, {"resource", resource}}
		},
		authMethod: "none",
	}
}

// claude.ai and Claude Desktop's connectors (registered from Anthropic's servers,
// python-httpx): the registration body captured in PostHog/posthog PR #48397 (client_name
// "Claude", redirect https://claude.ai/api/mcp/auth_callback, token_endpoint_auth_method
// client_secret_post, anthropics/claude-ai-mcp#1043; the client reads the method back from
// the registration answer, anthropics/claude-ai-mcp#82); at the token endpoint it sends the
// secret in the body (client_secret_post, anthropics/claude-ai-mcp#667). Its authorization
// request asked scope=claudeai of a server that offered none
// (anthropics/claude-ai-mcp#124) and carries a 43-character state (PrefectHQ/fastmcp#1564);
// the parameter order: not found.
func claudeAI() documentedClient {
	return documentedClient{
		register: func(map[string]any) string {
			return `{"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "token_endpoint_auth_method": "client_secret_post", ` +
				`"grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"], "client_name": "Claude"}`
		},
		authorize: func(clientID, challenge, resource string) []param {
			return []param{{"response_type", "code"}, {"client_id", clientID}, {"redirect_uri", "https://claude.ai/api/mcp/auth_callback"},
				{"scope", "claudeai"}, {"state", "UY1Rla_OVQZnr_BxIWH8VYIi3YnAOUzgPt5_RGDuIus"}, {"code_challenge", challenge},
				{"code_challenge_method", "S256"}, {"resource", resource}}
		},
		authMethod: "client_secret_post",
	}
}

// TestDocumentedClientRequests runs VS Code's, Cursor's and claude.ai's documented requests
// against the stack with the banner's workspace URL: each signs in and lists the
// workspace's tools.
func TestDocumentedClientRequests(t *testing.T) {
	w := newASWorld(t, nil)
	mcpURL := w.env.URL + "/mcp/" + w.ws["A"].id

	t.Run("VS Code", func(t *testing.T) {
		// A port other than 33418: the registration names http://127.0.0.1/ and the gateway
		// lets a loopback redirect URI's port vary (RFC 8252 §7.3).
		port := freeLoopbackPort(t)
		_, authz, back, tok := w.signInAs(t, vsCode(port), mcpURL)
		if got := back.Query().Get("state"); got != queryValue(authz, "state") {
			t.Fatalf("VS Code's base64 state %q came back as %q (its loopback server refuses a mismatch)", queryValue(authz, "state"), got)
		}
		if !strings.HasPrefix(back.String(), fmt.Sprintf("http://127.0.0.1:%d/?", port)) {
			t.Fatalf("redirect %s, want VS Code's loopback server on port %d", back, port)
		}
		if tok["scope"] != "mcp" {
			t.Errorf("token response scope %v, want mcp", tok["scope"])
		}
	})
	t.Run("Cursor", func(t *testing.T) {
		_, _, back, _ := w.signInAs(t, cursor(), mcpURL)
		if _, has := back.Query()["state"]; has {
			t.Fatalf("Cursor sent no state but the redirect carries one: %s", back)
		}
	})
	t.Run("claude.ai", func(t *testing.T) {
		reg, authz, back, tok := w.signInAs(t, claudeAI(), mcpURL)
		if reg["client_secret"] == nil || reg["client_secret"] == "" {
			t.Errorf("a client_secret_post registration answered without a client_secret: %v", reg)
		}
		if u, _ := reg["registration_client_uri"].(string); !strings.HasPrefix(u, w.env.URL+"/") || reg["registration_access_token"] == nil {
			t.Errorf("registration answer without RFC 7592 registration_client_uri and registration_access_token: %v", reg)
		}
		if back.Query().Get("state") != queryValue(authz, "state") {
			t.Errorf("state came back as %q", back.Query().Get("state"))
		}
		// scope=claudeai is not offered: ignored, and the token says what was granted.
		if tok["scope"] != "mcp" {
			t.Errorf("token response scope %v, want mcp (claudeai ignored, RFC 6749 §3.3)", tok["scope"])
		}
	})
}
