package stack_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/functions/marketplace/authserver"
)

// regResp is an HTTP answer of the authorization server: status, headers, JSON body.
type regResp struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// send sends method path with headers and body to the stack and reads the JSON answer.
func (w *asWorld) send(t *testing.T, method, path string, headers map[string]string, body string) regResp {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, w.env.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := regResp{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

// registerJSON registers client metadata body and returns the 201 answer's body.
func (w *asWorld) registerJSON(t *testing.T, body string) map[string]any {
	t.Helper()
	r := w.send(t, http.MethodPost, authserver.RegisterPath, map[string]string{"Content-Type": "application/json"}, body)
	if r.status != http.StatusCreated {
		t.Fatalf("register %s: %d %s", body, r.status, r.raw)
	}
	return r.body
}

// count is a count(*) query's answer.
func (w *asWorld) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := w.env.Pool.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func basicAuth(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// A confidential client (client_secret_post or client_secret_basic) registers, gets its
// secret once, and must authenticate by its registered method at the token and revocation
// endpoints: no secret, a wrong one, or the other method is 401 invalid_client (with a
// Basic challenge when Basic was used) and stores nothing; PKCE stays required.
func TestAuthServerConfidentialClients(t *testing.T) {
	w := newASWorld(t, nil)
	redirect := "https://client.example/cb"
	for _, method := range []string{authserver.AuthMethodSecretPost, authserver.AuthMethodSecretBasic} {
		t.Run(method, func(t *testing.T) {
			reg := w.registerJSON(t, fmt.Sprintf(`{"redirect_uris":[%q],"client_name":"Hosted %s","token_endpoint_auth_method":%q}`,
				redirect, method, method))
			id, _ := reg["client_id"].(string)
			secret, _ := reg["client_secret"].(string)
			if reg["token_endpoint_auth_method"] != method || len(secret) < 43 || reg["client_secret_expires_at"] != float64(0) {
				t.Fatalf("registration answer: %v", reg)
			}
			other := authserver.AuthMethodSecretBasic
			if method == other {
				other = authserver.AuthMethodSecretPost
			}
			// authenticated returns the headers and form fields of a token or revocation
			// request by method m with secret s.
			authenticated := func(m, s string, form url.Values) (map[string]string, string) {
				h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
				f := url.Values{}
				for k, v := range form {
					f[k] = v
				}
				switch m {
				case authserver.AuthMethodSecretBasic:
					h["Authorization"] = basicAuth(id, s)
				case authserver.AuthMethodSecretPost:
					f.Set("client_id", id)
					f.Set("client_secret", s)
				default:
					f.Set("client_id", id)
				}
				return h, f.Encode()
			}
			authURL, verifier := w.authorizeURL(id, redirect, nil)
			code := w.consent(t, w.browser(t, "ada"), authURL, redirect)
			exchange := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
				"code_verifier": {verifier}, "resource": {w.env.URL + "/mcp"}}
			tokensBefore := w.count(t, `SELECT count(*) FROM as_tokens`)
			for _, tc := range []struct{ name, method, secret string }{
				{"no secret", authserver.AuthMethodNone, ""},
				{"wrong secret", method, secret + "x"},
				{"the other method", other, secret},
				{"empty secret by Basic", authserver.AuthMethodSecretBasic, ""},
			} {
				h, body := authenticated(tc.method, tc.secret, exchange)
				r := w.send(t, http.MethodPost, authserver.TokenPath, h, body)
				if r.status != http.StatusUnauthorized || r.body["error"] != "invalid_client" {
					t.Fatalf("%s: %d %s, want 401 invalid_client", tc.name, r.status, r.raw)
				}
				if _, basic := h["Authorization"]; basic != strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic ") {
					t.Fatalf("%s: WWW-Authenticate %q (Basic used: %v)", tc.name, r.header.Get("WWW-Authenticate"), basic)
				}
			}
			if n := w.count(t, `SELECT count(*) FROM as_tokens`); n != tokensBefore {
				t.Fatalf("as_tokens rows %d after refused token requests, want %d", n, tokensBefore)
			}
			// PKCE is still required of a confidential client.
			noVerifier := url.Values{}
			for k, v := range exchange {
				noVerifier[k] = v
			}
			noVerifier.Del("code_verifier")
			h, body := authenticated(method, secret, noVerifier)
			if r := w.send(t, http.MethodPost, authserver.TokenPath, h, body); r.status != http.StatusBadRequest {
				t.Fatalf("exchange without code_verifier: %d %s, want 400", r.status, r.raw)
			}
			// A fresh code, exchanged by the registered method.
			authURL, verifier = w.authorizeURL(id, redirect, nil)
			exchange.Set("code", w.consent(t, w.browser(t, "ada"), authURL, redirect))
			exchange.Set("code_verifier", verifier)
			h, body = authenticated(method, secret, exchange)
			r := w.send(t, http.MethodPost, authserver.TokenPath, h, body)
			if r.status != http.StatusOK || r.body["access_token"] == nil {
				t.Fatalf("exchange by %s: %d %s", method, r.status, r.raw)
			}
			access, refresh := r.body["access_token"].(string), r.body["refresh_token"].(string)
			if st, _ := w.rpc(t, "/mcp/"+w.ws["A"].id, access, "tools/list", nil, nil); st != http.StatusOK {
				t.Fatalf("tools/list with the confidential client's token: %d", st)
			}
			refreshForm := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "resource": {w.env.URL + "/mcp"}}
			h, body = authenticated(authserver.AuthMethodNone, "", refreshForm)
			if r := w.send(t, http.MethodPost, authserver.TokenPath, h, body); r.status != http.StatusUnauthorized || r.body["error"] != "invalid_client" {
				t.Fatalf("refresh without the secret: %d %s", r.status, r.raw)
			}
			h, body = authenticated(method, secret, refreshForm)
			r = w.send(t, http.MethodPost, authserver.TokenPath, h, body)
			if r.status != http.StatusOK {
				t.Fatalf("refresh by %s: %d %s", method, r.status, r.raw)
			}
			refresh = r.body["refresh_token"].(string)
			// Revocation authenticates the client the same way (RFC 7009 §2.1).
			revokeForm := url.Values{"token": {refresh}, "token_type_hint": {"refresh_token"}}
			for _, tc := range []struct{ method, secret string }{{authserver.AuthMethodNone, ""}, {method, "wrong"}} {
				h, body = authenticated(tc.method, tc.secret, revokeForm)
				r = w.send(t, http.MethodPost, authserver.RevokePath, h, body)
				if r.status != http.StatusUnauthorized || r.body["error"] != "invalid_client" {
					t.Fatalf("revoke by %s with secret %q: %d %s", tc.method, tc.secret, r.status, r.raw)
				}
				if _, basic := h["Authorization"]; basic != strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic ") {
					t.Fatalf("revoke: WWW-Authenticate %q (Basic used: %v)", r.header.Get("WWW-Authenticate"), basic)
				}
			}
			h, body = authenticated(method, secret, revokeForm)
			if r = w.send(t, http.MethodPost, authserver.RevokePath, h, body); r.status != http.StatusOK {
				t.Fatalf("revoke by %s: %d %s", method, r.status, r.raw)
			}
			w.challenged(t, access, "/mcp/"+w.ws["A"].id)
		})
	}
	t.Run("a public client sending a secret", func(t *testing.T) {
		id := w.register(t, redirect)
		authURL, verifier := w.authorizeURL(id, redirect, nil)
		code := w.consent(t, w.browser(t, "ada"), authURL, redirect)
		f := url.Values{"grant_type": {"authorization_code"}, "client_id": {id}, "client_secret": {"made-up"}, "code": {code},
			"redirect_uri": {redirect}, "code_verifier": {verifier}}
		if st, m := w.tokenReq(t, f); st != http.StatusUnauthorized || m["error"] != "invalid_client" {
			t.Fatalf("public client with a client_secret: %d %v", st, m)
		}
		f.Del("client_secret")
		if st, m := w.tokenReq(t, f); st != http.StatusOK {
			t.Fatalf("public client: %d %v", st, m)
		}
	})
}

// token_endpoint_auth_method at registration: absent is none (public, no secret); an
// unsupported method is invalid_client_metadata with nothing stored; the metadata lists the
// three methods for the token and revocation endpoints.
func TestAuthServerRegistrationAuthMethods(t *testing.T) {
	w := newASWorld(t, nil)
	reg := w.registerJSON(t, `{"redirect_uris":["http://127.0.0.1:9/callback"],"client_name":"No method"}`)
	if reg["token_endpoint_auth_method"] != "none" || reg["client_secret"] != nil || reg["client_secret_expires_at"] != nil {
		t.Fatalf("absent method: %v", reg)
	}
	before := w.count(t, `SELECT count(*) FROM as_clients`)
	for _, m := range []string{"private_key_jwt", "client_secret_jwt", "tls_client_auth", "NONE"} {
		r := w.send(t, http.MethodPost, authserver.RegisterPath, map[string]string{"Content-Type": "application/json"},
			fmt.Sprintf(`{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":%q}`, m))
		if r.status != http.StatusBadRequest || r.body["error"] != "invalid_client_metadata" || !strings.Contains(r.raw, m) {
			t.Fatalf("method %s: %d %s", m, r.status, r.raw)
		}
	}
	if n := w.count(t, `SELECT count(*) FROM as_clients`); n != before {
		t.Fatalf("as_clients rows %d after refused registrations, want %d", n, before)
	}
	var md map[string]any
	getJSON(t, w.env.URL+authserver.MetadataPath, &md)
	for _, k := range []string{"token_endpoint_auth_methods_supported", "revocation_endpoint_auth_methods_supported"} {
		got, _ := md[k].([]any)
		if len(got) != 3 || got[0] != "none" || got[1] != "client_secret_post" || got[2] != "client_secret_basic" {
			t.Errorf("metadata %s = %v", k, md[k])
		}
	}
}

// A scope other than mcp at registration is no longer refused: the client is registered
// with the scopes the server offers that it asked for (mcp always), the rest ignored; it
// then signs in.
func TestAuthServerRegistrationScopes(t *testing.T) {
	w := newASWorld(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	for _, asked := range []string{"mcp offline_access", "openid profile email", "mcp", ""} {
		body := fmt.Sprintf(`{"redirect_uris":[%q],"client_name":"Scopes","token_endpoint_auth_method":"none","scope":%q}`, redirect, asked)
		reg := w.registerJSON(t, body)
		if reg["scope"] != "mcp" {
			t.Fatalf("scope %q registered as %v, want mcp", asked, reg["scope"])
		}
		id := reg["client_id"].(string)
		var stored []string
		if err := w.env.Pool.QueryRow(t.Context(), `SELECT scopes FROM as_clients WHERE client_id = $1`, id).Scan(&stored); err != nil ||
			!slices.Equal(stored, []string{"mcp"}) {
			t.Fatalf("stored scopes %v (%v)", stored, err)
		}
		authURL, verifier := w.authorizeURL(id, redirect, nil)
		code := w.consent(t, w.browser(t, "ada"), authURL, redirect)
		if st, tok := w.exchange(t, id, redirect, code, verifier); st != http.StatusOK {
			t.Fatalf("sign-in of a client registered with scope %q: %d %v", asked, st, tok)
		}
	}
}

// RFC 7592: the registration answer carries registration_client_uri and
// registration_access_token; with that token the client reads its registration (no secret,
// no token) and deletes it, which revokes every grant and token it was issued; PUT is
// refused; a missing, wrong or another client's token is 401 invalid_token, the same as for
// a client that does not exist; CORS as the other endpoints.
func TestAuthServerClientConfiguration(t *testing.T) {
	w := newASWorld(t, nil)
	redirect := "https://client.example/cb"
	reg := func(method string) (id, uri, tok string, body map[string]any) {
		body = w.registerJSON(t, fmt.Sprintf(`{"redirect_uris":[%q],"client_name":"Configured","token_endpoint_auth_method":%q,"software_id":"sw-1"}`,
			redirect, method))
		id, _ = body["client_id"].(string)
		uri, _ = body["registration_client_uri"].(string)
		tok, _ = body["registration_access_token"].(string)
		if uri != w.env.URL+authserver.RegisterPath+"/"+id || len(tok) < 43 {
			t.Fatalf("registration answer: %v", body)
		}
		return id, uri, tok, body
	}
	aID, aURI, aTok, _ := reg(authserver.AuthMethodSecretPost)
	bID, bURI, bTok, _ := reg(authserver.AuthMethodNone)
	path := func(uri string) string { return strings.TrimPrefix(uri, w.env.URL) }
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	r := w.send(t, http.MethodGet, path(aURI), bearer(aTok), "")
	if r.status != http.StatusOK || r.body["client_id"] != aID || r.body["registration_client_uri"] != aURI ||
		r.body["token_endpoint_auth_method"] != "client_secret_post" || r.body["software_id"] != "sw-1" {
		t.Fatalf("read: %d %s", r.status, r.raw)
	}
	if _, ok := r.body["client_secret"]; ok || strings.Contains(r.raw, aTok) || r.body["registration_access_token"] != nil {
		t.Fatalf("read returned a secret or the token: %s", r.raw)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("read: Cache-Control %q", r.header.Get("Cache-Control"))
	}

	unknown := authserver.RegisterPath + "/no-such-client"
	for _, tc := range []struct {
		name, method, path string
		headers            map[string]string
	}{
		{"no token", http.MethodGet, path(aURI), nil},
		{"not Bearer", http.MethodGet, path(aURI), map[string]string{"Authorization": "Basic " + aTok}},
		{"empty Bearer", http.MethodGet, path(aURI), map[string]string{"Authorization": "Bearer "}},
		{"wrong token", http.MethodGet, path(aURI), bearer(aTok + "x")},
		{"another client's token", http.MethodGet, path(aURI), bearer(bTok)},
		{"another client's token, delete", http.MethodDelete, path(aURI), bearer(bTok)},
		{"another client's token, put", http.MethodPut, path(aURI), bearer(bTok)},
		{"unknown client", http.MethodGet, unknown, bearer(aTok)},
		{"unknown client, delete", http.MethodDelete, unknown, bearer(aTok)},
	} {
		r := w.send(t, tc.method, tc.path, tc.headers, "")
		if r.status != http.StatusUnauthorized || r.body["error"] != "invalid_token" ||
			!strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") || strings.Contains(r.raw, aID) {
			t.Fatalf("%s: %d %q %s, want 401 invalid_token", tc.name, r.status, r.header.Get("WWW-Authenticate"), r.raw)
		}
	}
	// The answers for a wrong token and for a client that does not exist are the same.
	if x, y := w.send(t, http.MethodGet, path(aURI), bearer(bTok), ""), w.send(t, http.MethodGet, unknown, bearer(bTok), ""); x.raw != y.raw {
		t.Fatalf("wrong token %q and unknown client %q differ", x.raw, y.raw)
	}

	r = w.send(t, http.MethodPut, path(aURI), map[string]string{"Authorization": "Bearer " + aTok, "Content-Type": "application/json"},
		fmt.Sprintf(`{"client_id":%q,"redirect_uris":["https://evil.example/cb"]}`, aID))
	if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, DELETE" || r.body["error"] == nil {
		t.Fatalf("update: %d %q %s", r.status, r.header.Get("Allow"), r.raw)
	}
	var uris []string
	if err := w.env.Pool.QueryRow(t.Context(), `SELECT redirect_uris FROM as_clients WHERE client_id = $1`, aID).Scan(&uris); err != nil ||
		!slices.Equal(uris, []string{redirect}) {
		t.Fatalf("redirect URIs after a refused update: %v (%v)", uris, err)
	}

	// CORS: a browser-based client reads and deletes its registration cross-origin.
	r = w.send(t, http.MethodOptions, path(aURI), map[string]string{"Origin": "https://inspector.example",
		"Access-Control-Request-Method": "DELETE", "Access-Control-Request-Headers": "authorization"}, "")
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Methods"), "DELETE") ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", r.status, r.header)
	}
	r = w.send(t, http.MethodGet, path(bURI), map[string]string{"Authorization": "Bearer " + bTok, "Origin": "https://inspector.example"}, "")
	if r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("cross-origin read: %d %v", r.status, r.header)
	}

	// B signs ada in, then deletes its registration: its grant is revoked, its access token
	// challenged, its refresh token and client id refused, and its configuration gone.
	cb := "https://client.example/cb"
	authURL, verifier := w.authorizeURL(bID, cb, nil)
	code := w.consent(t, w.browser(t, "ada"), authURL, cb)
	st, tok := w.exchange(t, bID, cb, code, verifier)
	if st != http.StatusOK {
		t.Fatalf("sign-in: %d %v", st, tok)
	}
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)
	// A pending code of B, issued before the deletion, is not exchangeable afterwards.
	authURL, pendingVerifier := w.authorizeURL(bID, cb, nil)
	pending := w.consent(t, w.browser(t, "ada"), authURL, cb)
	r = w.send(t, http.MethodDelete, path(bURI), bearer(bTok), "")
	if r.status != http.StatusNoContent || r.raw != "" {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	w.challenged(t, access, "/mcp/"+w.ws["A"].id)
	if st, m := w.refresh(t, bID, refresh); st != http.StatusUnauthorized || m["error"] != "invalid_client" {
		t.Fatalf("refresh after delete: %d %v", st, m)
	}
	if st, m := w.exchange(t, bID, cb, pending, pendingVerifier); st != http.StatusUnauthorized || m["error"] != "invalid_client" {
		t.Fatalf("code exchange after delete: %d %v", st, m)
	}
	if n := w.count(t, `SELECT count(*) FROM as_grants WHERE client_id = $1 AND revoked_at IS NULL`, bID); n != 0 {
		t.Fatalf("active grants of the deleted client: %d", n)
	}
	if n := w.count(t, `SELECT count(*) FROM as_tokens t JOIN as_grants g ON g.id = t.request_id WHERE g.client_id = $1 AND t.active`, bID); n != 0 {
		t.Fatalf("active tokens of the deleted client: %d", n)
	}
	if n := w.count(t, `SELECT count(*) FROM as_consents WHERE client_id = $1`, bID); n != 0 {
		t.Fatalf("consents of the deleted client: %d", n)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if r := w.send(t, m, path(bURI), bearer(bTok), ""); r.status != http.StatusUnauthorized {
			t.Fatalf("%s after delete: %d %s", m, r.status, r.raw)
		}
	}
	// A is untouched.
	if r := w.send(t, http.MethodGet, path(aURI), bearer(aTok), ""); r.status != http.StatusOK {
		t.Fatalf("the other client after a delete: %d %s", r.status, r.raw)
	}
}

// The client secret and the registration access token are returned once and are never
// stored nor logged: the row holds the SHA-256 of each, and neither value appears in any stored row or log line after the client used
// them (a sign-in, a refused attempt, a read, a delete).
func TestAuthServerRegistrationSecretsNotStoredOrLogged(t *testing.T) {
	w := newASWorld(t, nil)
	redirect := "https://client.example/cb"
	reg := w.registerJSON(t, fmt.Sprintf(`{"redirect_uris":[%q],"client_name":"Secretive","token_endpoint_auth_method":"client_secret_basic"}`, redirect))
	id, secret, regTok := reg["client_id"].(string), reg["client_secret"].(string), reg["registration_access_token"].(string)

	authURL, verifier := w.authorizeURL(id, redirect, nil)
	code := w.consent(t, w.browser(t, "ada"), authURL, redirect)
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {verifier}}
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": basicAuth(id, secret+"-wrong")}
	if r := w.send(t, http.MethodPost, authserver.TokenPath, h, form.Encode()); r.status != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %d %s", r.status, r.raw)
	}
	h["Authorization"] = basicAuth(id, secret)
	if r := w.send(t, http.MethodPost, authserver.TokenPath, h, form.Encode()); r.status != http.StatusOK {
		t.Fatalf("exchange: %d %s", r.status, r.raw)
	}
	uri := authserver.RegisterPath + "/" + id
	if r := w.send(t, http.MethodGet, uri, map[string]string{"Authorization": "Bearer " + regTok}, ""); r.status != http.StatusOK {
		t.Fatalf("read: %d %s", r.status, r.raw)
	}

	var row, secretHash, tokHash string
	if err := w.env.Pool.QueryRow(t.Context(), `SELECT c::text, secret_hash, registration_token_hash FROM as_clients c
		WHERE client_id = $1`, id).Scan(&row, &secretHash, &tokHash); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(row, secret) || strings.Contains(row, regTok) {
		t.Fatalf("the stored client holds the secret or the registration token: %s", row)
	}
	sum := sha256.Sum256([]byte(secret))
	if secretHash != "sha256:"+base64.RawURLEncoding.EncodeToString(sum[:]) {
		t.Fatalf("secret_hash %q is not the secret's SHA-256", secretHash)
	}
	sum = sha256.Sum256([]byte(regTok))
	if tokHash != base64.RawURLEncoding.EncodeToString(sum[:]) {
		t.Fatalf("registration_token_hash %q is not the token's SHA-256", tokHash)
	}
	var everything string
	if err := w.env.Pool.QueryRow(t.Context(), `SELECT coalesce(string_agg(x, ' '), '') FROM (
		SELECT t::text AS x FROM as_tokens t UNION ALL SELECT g::text FROM as_grants g
		UNION ALL SELECT c::text FROM as_consents c) s`).Scan(&everything); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(everything, secret) || strings.Contains(everything, regTok) {
		t.Fatal("a token, grant or consent row holds the client secret or the registration token")
	}
	if r := w.send(t, http.MethodDelete, uri, map[string]string{"Authorization": "Bearer " + regTok}, ""); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	logs := w.env.Logs.String()
	if !strings.Contains(logs, `"route":"/oauth/","method":"DELETE","status":204`) {
		t.Fatalf("no access line of the registration's delete: the check below would prove nothing\n%s", logs)
	}
	if strings.Contains(logs, secret) || strings.Contains(logs, regTok) {
		t.Fatal("the logs hold the client secret or the registration token")
	}
}

// Registration limits: a hosted client whose many users register from one address (same
// client_name, same redirect URI set, same method) goes well past the per-source limit of
// distinct clients; a flood of distinct clients from one source is refused at that limit;
// one shape from one source is refused at its own limit; and everything at the global
// ceiling. Every refusal is 429 with Retry-After and stores nothing.
func TestAuthServerRegistrationLimits(t *testing.T) {
	w := newASWorld(t, func(o *authserver.Options) {
		o.RegistrationsPerShapePerHour = 30
		o.RegistrationsGlobalPerHour = 60
	}) // RegistrationsPerHour: the default, 20 distinct clients per source
	// claude.ai's connectors register from Anthropic's backend (one egress range) with
	// client_secret_post (anthropics/claude-ai-mcp#1043), twice per connect attempt
	// (anthropics/claude-ai-mcp#966), with its one callback.
	hosted := `{"client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],
		"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"client_secret_post"}`
	distinct := func(i int) string {
		return fmt.Sprintf(`{"client_name":"flood %d","redirect_uris":["https://flood.example/cb"],"token_endpoint_auth_method":"none"}`, i)
	}
	refused := func(body, want string) {
		t.Helper()
		before := w.count(t, `SELECT count(*) FROM as_clients`)
		r := w.send(t, http.MethodPost, authserver.RegisterPath, map[string]string{"Content-Type": "application/json"}, body)
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(r.raw, want) {
			t.Fatalf("want 429 %q with Retry-After, got %d %q %s", want, r.status, r.header.Get("Retry-After"), r.raw)
		}
		if n := w.count(t, `SELECT count(*) FROM as_clients`); n != before {
			t.Fatalf("as_clients rows %d after a refused registration, want %d", n, before)
		}
	}
	ids := map[string]bool{}
	for range 30 {
		ids[w.registerJSON(t, hosted)["client_id"].(string)] = true
	}
	if len(ids) != 30 {
		t.Fatalf("30 registrations of one hosted client gave %d client ids, want 30 (one each)", len(ids))
	}
	refused(hosted, "of this client from this source (at most 30")
	for i := range 19 { // the hosted client is the 1st distinct one
		w.registerJSON(t, distinct(i))
	}
	refused(distinct(19), "different clients registered from this source (at most 20")
	// A shape already registered this hour may still register: 49 rows so far, 11 more
	// reach the global ceiling of 60.
	for range 11 {
		w.registerJSON(t, distinct(0))
	}
	refused(distinct(0), "on this server (at most 60")
	if n := w.count(t, `SELECT count(*) FROM as_clients`); n != 60 {
		t.Fatalf("as_clients rows %d, want 60", n)
	}
}
