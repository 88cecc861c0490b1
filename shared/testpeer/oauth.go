package testpeer

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OAuthUpstream is an OAuth-protected MCP server with its own authorization server, on
// loopback, for upstream-authorization tests. It is written in Go (not an npm peer) because
// the properties under test — refresh with rotation, revocation, a refused refresh, many
// upstream accounts — need an authorization server that does them: the TypeScript SDK's
// demo provider neither refreshes nor revokes (docs/UPSTREAM-AUTH.md). It checks what a real
// one checks: PKCE S256, the redirect URI, the resource parameter (RFC 8707), client
// authentication; dynamic registration only (no CIMD, no pre-registration).
//
// Its /authorize consents at once for the upstream account named by the browser's
// X-Test-User header (default "alice"); its MCP endpoint (MCPURL) serves one tool, whoami,
// answering that account.
type OAuthUpstream struct {
	srv *httptest.Server

	mu            sync.Mutex
	clients       map[string]string // client_id → secret ("" public)
	codes         map[string]codeGrant
	access        map[string]tokenInfo // access token → info
	refresh       map[string]tokenInfo // refresh token → info
	revoked       []string             // tokens posted to /revoke
	refreshes     int                  // refresh_token grants served
	refuseRefresh bool                 // answer invalid_grant to every refresh
	ttl           time.Duration        // access token lifetime
	requests      []string             // "METHOD path" of every request, in order
	mcpCalls      map[string]int       // subject → MCP POSTs that reached the tool handler
	stepUpScope   string               // RequireScope: calls need this scope too
	// Faults for the discovery and token error cases (SetMetadataFaults).
	issuerOverride string       // the issuer its metadata names ("" its own URL)
	noASMetadata   bool         // /.well-known/oauth-authorization-server answers 404
	commaScope     bool         // token answers list scopes comma-separated (GitHub)
	authorizes     []url.Values // the query of every /authorize request
	preregistered  int          // clients added by RegisterClient
	// Faults for the authorization response and resource cases.
	authorizeAnswer url.Values   // SetAuthorizeAnswer: /authorize redirects with these instead of a code
	issParam        bool         // SetIssParameter: advertise and send iss (RFC 9207)
	bakedResource   string       // SetBakedResource: authorization_endpoint carries ?resource=
	tokenForms      []url.Values // the form (and query) of every /token request
	tokenError      url.Values   // SetTokenError: every /token answers 400 with these members
}

// SetTokenError makes every /token request answer 400 with a JSON body of these members
// (error, error_description, …); nil serves tokens again.
func (u *OAuthUpstream) SetTokenError(members url.Values) {
	u.mu.Lock()
	u.tokenError = members
	u.mu.Unlock()
}

// SetAuthorizeAnswer makes /authorize redirect to the callback with q (and the request's
// state) instead of a code: an error answer such as error=access_denied with an
// error_description, or any iss. nil restores the normal consent.
func (u *OAuthUpstream) SetAuthorizeAnswer(q url.Values) {
	u.mu.Lock()
	u.authorizeAnswer = q
	u.mu.Unlock()
}

// SetIssParameter makes its metadata advertise authorization_response_iss_parameter_supported
// and every /authorize redirect carry iss (RFC 9207), or neither.
func (u *OAuthUpstream) SetIssParameter(v bool) {
	u.mu.Lock()
	u.issParam = v
	u.mu.Unlock()
}

// SetBakedResource makes its metadata's authorization_endpoint carry ?resource=resource (as
// Railway's does with its own URL); "" restores a plain endpoint. Its /authorize and /token
// always refuse a request with more than one resource (invalid_target, as strict servers
// do), and a token issued for resource is valid at the MCP endpoint too.
func (u *OAuthUpstream) SetBakedResource(resource string) {
	u.mu.Lock()
	u.bakedResource = resource
	u.mu.Unlock()
}

// TokenRequests are the form values of every /token request so far, with the request
// URL's query parameters added (a parameter sent twice shows twice).
func (u *OAuthUpstream) TokenRequests() []url.Values {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]url.Values(nil), u.tokenForms...)
}

// SetMetadataFaults makes its authorization server metadata name issuer instead of its own
// URL ("" restores it), answer 404 when hide is true, and its token answers separate
// scopes with commas when comma is true (as GitHub does).
func (u *OAuthUpstream) SetMetadataFaults(issuer string, hide, comma bool) {
	u.mu.Lock()
	u.issuerOverride, u.noASMetadata, u.commaScope = issuer, hide, comma
	u.mu.Unlock()
}

// Authorizations are the queries of every /authorize request so far.
func (u *OAuthUpstream) Authorizations() []url.Values {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]url.Values(nil), u.authorizes...)
}

// Registrations is how many dynamic client registrations (POST /register) it received.
func (u *OAuthUpstream) Registrations() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.clients) - u.preregistered
}

// RequireScope makes every MCP request whose token lacks scope answer 403 with a
// WWW-Authenticate insufficient_scope challenge naming "tools:read <scope>" (MCP
// authorization "Scope challenge handling": step-up). "" turns it off.
func (u *OAuthUpstream) RequireScope(scope string) {
	u.mu.Lock()
	u.stepUpScope = scope
	u.mu.Unlock()
}

type codeGrant struct {
	client, redirect, challenge, resource, subject, scope string
}

type tokenInfo struct {
	client, subject, resource, scope string
	expires                          time.Time
}

// NewOAuthUpstream starts one; t.Cleanup stops it.
func NewOAuthUpstream(t TB) *OAuthUpstream {
	u := &OAuthUpstream{clients: map[string]string{}, codes: map[string]codeGrant{}, access: map[string]tokenInfo{},
		refresh: map[string]tokenInfo{}, ttl: time.Hour, mcpCalls: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeOAuthJSON(w, 200, map[string]any{"resource": u.URL() + "/mcp", "authorization_servers": []string{u.URL()},
			"scopes_supported": []string{"tools:read"}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		issuer, hide := u.issuerOverride, u.noASMetadata
		u.mu.Unlock()
		if hide {
			http.NotFound(w, r)
			return
		}
		if issuer == "" {
			issuer = u.URL()
		}
		u.mu.Lock()
		authz, iss := u.URL()+"/authorize", u.issParam
		if u.bakedResource != "" {
			authz += "?resource=" + url.QueryEscape(u.bakedResource)
		}
		u.mu.Unlock()
		writeOAuthJSON(w, 200, map[string]any{"issuer": issuer, "authorization_endpoint": authz,
			"token_endpoint": u.URL() + "/token", "registration_endpoint": u.URL() + "/register",
			"revocation_endpoint": u.URL() + "/revoke", "code_challenge_methods_supported": []string{"S256"},
			"scopes_supported":                               []string{"tools:read", "offline_access"},
			"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post", "none"},
			"response_types_supported":                       []string{"code"},
			"authorization_response_iss_parameter_supported": iss})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		id, secret := "client-"+rand.Text()[:8], rand.Text()
		u.mu.Lock()
		u.clients[id] = secret
		u.mu.Unlock()
		writeOAuthJSON(w, 201, map[string]any{"client_id": id, "client_secret": secret, "redirect_uris": m.RedirectURIs,
			"token_endpoint_auth_method": "client_secret_basic"})
	})
	// /authorize consents at once for the account named by the browser's X-Test-User header
	// (the user signed in at the upstream), and redirects to redirect_uri.
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
			http.Error(w, "PKCE S256 and resource required", 400)
			return
		}
		if len(q["resource"]) > 1 {
			http.Error(w, "invalid_target: more than one resource", 400)
			return
		}
		u.mu.Lock()
		answer, iss := u.authorizeAnswer, u.issParam
		u.mu.Unlock()
		if answer != nil {
			to, _ := url.Parse(q.Get("redirect_uri"))
			v := to.Query()
			for k, vs := range answer {
				v[k] = vs
			}
			v.Set("state", q.Get("state"))
			to.RawQuery = v.Encode()
			http.Redirect(w, r, to.String(), http.StatusFound)
			return
		}
		code := rand.Text()
		subject := r.Header.Get("X-Test-User")
		if subject == "" {
			subject = "alice"
		}
		u.mu.Lock()
		u.authorizes = append(u.authorizes, q)
		u.codes[code] = codeGrant{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"),
			resource: q.Get("resource"), subject: subject, scope: q.Get("scope")}
		u.mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		v := to.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		if iss {
			v.Set("iss", u.URL())
		}
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", u.token)
	mux.HandleFunc("POST /revoke", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		u.mu.Lock()
		defer u.mu.Unlock()
		tok := r.PostForm.Get("token")
		u.revoked = append(u.revoked, tok)
		delete(u.refresh, tok)
		delete(u.access, tok)
		w.WriteHeader(200)
	})
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "the upstream account of the token"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			sub := req.Extra.Header.Get("X-Subject")
			u.mu.Lock()
			u.mcpCalls[sub]++
			u.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: sub}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		u.mu.Lock()
		info, ok := u.access[tok]
		baked := u.bakedResource
		u.mu.Unlock()
		if !ok || time.Now().After(info.expires) || (info.resource != u.URL()+"/mcp" && (baked == "" || info.resource != baked)) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+u.URL()+`/.well-known/oauth-protected-resource/mcp", scope="tools:read"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		u.mu.Lock()
		need := u.stepUpScope
		u.mu.Unlock()
		if need != "" && !slices.Contains(strings.Fields(info.scope), need) {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="tools:read `+need+`", resource_metadata="`+u.URL()+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		r.Header.Set("X-Subject", info.subject)
		h.ServeHTTP(w, r)
	})
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.requests = append(u.requests, r.Method+" "+r.URL.Path)
		u.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// URL is the origin (also the authorization server's issuer).
func (u *OAuthUpstream) URL() string { return u.srv.URL }

// MCPURL is the protected MCP endpoint (the resource).
func (u *OAuthUpstream) MCPURL() string { return u.srv.URL + "/mcp" }

// RegisterClient pre-registers a confidential client (authorization code and
// client_credentials grants; secret by client_secret_basic or client_secret_post).
func (u *OAuthUpstream) RegisterClient(id, secret string) {
	u.mu.Lock()
	u.clients[id] = secret
	u.preregistered++
	u.mu.Unlock()
}

// SetRefuseRefresh makes every refresh_token grant answer invalid_grant (a revoked refresh
// token) or serves them again.
func (u *OAuthUpstream) SetRefuseRefresh(v bool) {
	u.mu.Lock()
	u.refuseRefresh = v
	u.mu.Unlock()
}

// Requests lists "METHOD path" of every request so far.
func (u *OAuthUpstream) Requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.requests...)
}

// Issued lists every access and refresh token currently valid (for leak checks).
func (u *OAuthUpstream) Issued() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for k := range u.access {
		out = append(out, k)
	}
	for k := range u.refresh {
		out = append(out, k)
	}
	return out
}

// ExpireAll makes every access token invalid at the resource (as if their time ran out).
func (u *OAuthUpstream) ExpireAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for k, v := range u.access {
		v.expires = time.Now().Add(-time.Second)
		u.access[k] = v
	}
}

// Counts are the refresh grants served, the tokens posted to /revoke, and the whoami calls
// per upstream account.
func (u *OAuthUpstream) Counts() (refreshes int, revoked []string, calls map[string]int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	c := map[string]int{}
	for k, v := range u.mcpCalls {
		c[k] = v
	}
	return u.refreshes, append([]string(nil), u.revoked...), c
}

// Consent plays the browser of upstream account user: it GETs authURL (without following
// redirects) and returns where the authorization server redirects (the callback URL with
// code and state).
func Consent(ctx context.Context, authURL, user string) (*url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Test-User", user)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("authorize answered %d", resp.StatusCode)
	}
	return url.Parse(resp.Header.Get("Location"))
}
