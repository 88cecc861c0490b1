package demoupstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/oauth2-proxy/mockoidc"
)

// ProtectedScopes are the scopes the protected demo upstream asks for in its challenge and
// its protected resource metadata: scopes the demo authorization server (mockoidc) knows.
var ProtectedScopes = []string{"openid", "profile"}

// ProtectedClientID is the demo authorization server's one client: the gateway uses it as
// a pre-registered client (client_secret_post), since mockoidc offers no dynamic
// registration. The secret is new at every start (Protected.ClientSecret).
const ProtectedClientID = "agentpack-local-gateway"

// Protected is the demo upstream behind OAuth, on one loopback port, for trying upstream
// authorization locally (docs/UPSTREAM-AUTH.md "Trying it locally"):
//
//   - a demo authorization server, the oauth2-proxy/mockoidc library, at /oidc
//     (OpenID Connect discovery at /oidc/.well-known/openid-configuration, authorization
//     code with PKCE S256, refresh tokens, RS256 JWT access tokens). Its /oidc/authorize
//     approves at once as its demo user (subject "1234567890", jane.doe): there is no login
//     page to pass;
//   - the demo MCP server (NewServer's tools, plus whoami answering the token's subject and
//     scopes) at /mcp behind bearer-token checks (go-sdk auth.RequireBearerToken: signature,
//     issuer, audience, expiry), answering 401 with WWW-Authenticate resource_metadata and
//     scope (MCP authorization 2025-11-25, RFC 6750 §3);
//   - its protected resource metadata (RFC 9728) at /.well-known/oauth-protected-resource/mcp.
//
// Without ProtectedOptions.StateFile, tokens live in the process: after a restart every
// earlier token is refused and members consent again. With it (make run: .state/oauth-demo.json)
// the authorization server's signing key, client secret and sessions survive a restart on
// the same port, so the grants members gave stay usable (access and refresh tokens).
type Protected struct {
	// AS is the authorization server (its keys, sessions and client).
	AS  *mockoidc.MockOIDC
	srv *http.Server
	ln  net.Listener
	// mu serialises every use of the AS: mockoidc's session store is a plain map.
	mu    sync.Mutex
	state string // ProtectedOptions.StateFile
}

// ProtectedOptions configure StartProtected; nil means defaults.
type ProtectedOptions struct {
	// StateFile, when set, is a JSON file (mode 0600) holding the authorization server's
	// RSA signing key, its client secret and its sessions: read at start when present
	// (else a new key is generated and the file written), rewritten after every
	// authorization and token request. A file that cannot be read as such is an error.
	StateFile string
	// Listener, when set, is served instead of listening on addr (a port bound earlier,
	// e.g. checked before a database was touched).
	Listener net.Listener
}

// StartProtected serves a Protected on addr (e.g. "127.0.0.1:8091"; port 0 picks one) until
// Close. Errors: the listen error, the key generation's, or an unreadable StateFile.
func StartProtected(addr string, opts *ProtectedOptions) (*Protected, error) {
	if opts == nil {
		opts = &ProtectedOptions{}
	}
	as, err := newAuthorizationServer(opts.StateFile)
	if err != nil {
		return nil, fmt.Errorf("demoupstream: authorization server: %w", err)
	}
	as.ClientID = ProtectedClientID
	as.CodeChallengeMethodsSupported = []string{"S256"} // OAuth 2.1 and MCP authorization: S256 only
	ln := opts.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, err
		}
	}
	p := &Protected{AS: as, ln: ln, state: opts.StateFile}
	// mockoidc builds every URL it publishes from Server.Addr; its handlers are mounted on
	// this server's mux (not mockoidc's Start) so that the MCP server shares the port.
	as.Server = &http.Server{Addr: ln.Addr().String(), ReadHeaderTimeout: 10 * time.Second}
	as.Server.Handler = p.handler()
	p.srv = as.Server
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the server's base URL (http://127.0.0.1:PORT).
func (p *Protected) URL() string { return "http://" + p.ln.Addr().String() }

// MCPURL is the protected MCP endpoint: what a catalog entry points at.
func (p *Protected) MCPURL() string { return p.URL() + "/mcp" }

// Issuer is the authorization server's issuer (RFC 8414 §2).
func (p *Protected) Issuer() string { return p.AS.Issuer() }

// ClientSecret is the secret of ProtectedClientID (new at every start).
func (p *Protected) ClientSecret() string { return p.AS.ClientSecret }

// Close stops the server.
func (p *Protected) Close() error { return p.srv.Close() }

func (p *Protected) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(mockoidc.AuthorizationEndpoint, p.saving(p.AS.Authorize))
	mux.Handle(mockoidc.TokenEndpoint, secondsExpiry(p.saving(p.AS.Token), p.AS.AccessTTL))
	mux.Handle(mockoidc.UserinfoEndpoint, p.locked(p.AS.Userinfo))
	mux.Handle(mockoidc.JWKSEndpoint, p.locked(p.AS.JWKS))
	mux.Handle(mockoidc.DiscoveryEndpoint, p.locked(p.AS.Discovery))
	prm := "/.well-known/oauth-protected-resource/mcp"
	mux.Handle(prm, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: p.MCPURL(), AuthorizationServers: []string{p.Issuer()}, ScopesSupported: ProtectedScopes,
		BearerMethodsSupported: []string{"header"}, ResourceName: "Agentpack demo upstream (OAuth)",
	}))
	server := NewServer(nil)
	// The output schema is written out: the inferred one types the scopes slice as
	// ["null","array"], which clients (the MCP Inspector) flag as unportable.
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "The demo authorization server's user this call's access token was issued to, and its scopes.",
		OutputSchema: whoamiSchema},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, WhoamiOut, error) {
			ti := req.Extra.TokenInfo
			out := WhoamiOut{Subject: ti.UserID, Scopes: ti.Scopes}
			if out.Scopes == nil {
				out.Scopes = []string{}
			}
			return TextResult("signed in upstream as " + ti.UserID), out, nil
		})
	h, _ := NewHandler(server, ModeStreamable)
	mux.Handle("/mcp", auth.RequireBearerToken(p.verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: p.URL() + prm, Scopes: ProtectedScopes})(h))
	return mux
}

func (p *Protected) locked(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		h(w, r)
	})
}

// saving is locked, then (with a state file) the AS's state written to it.
func (p *Protected) saving(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		h(w, r)
		if p.state != "" {
			if err := saveAuthorizationServer(p.state, p.AS); err != nil {
				slog.Default().Warn("OAuth demo: state not saved", "file", p.state, "err", err)
			}
		}
	})
}

// whoamiSchema is the output schema of whoami (WhoamiOut).
var whoamiSchema = json.RawMessage(`{"type":"object","properties":{"subject":{"type":"string"},` +
	`"scopes":{"type":"array","items":{"type":"string"}}},"required":["subject","scopes"]}`)

// WhoamiOut is the structured result of the protected server's whoami tool.
type WhoamiOut struct {
	Subject string   `json:"subject"`
	Scopes  []string `json:"scopes"`
}

// verify checks an access token of the demo authorization server: its RS256 signature
// (mockoidc's key), issuer, audience (ProtectedClientID) and expiry. Failures are
// auth.ErrInvalidToken (401), never a 500.
func (p *Protected) verify(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	t, err := p.AS.Keypair.VerifyJWT(tok, p.AS.Now)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	c, ok := t.Claims.(jwt.MapClaims)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	iss, _ := c.GetIssuer()
	aud, _ := c.GetAudience()
	sub, _ := c.GetSubject()
	exp, _ := c.GetExpirationTime()
	if iss != p.Issuer() || len(aud) != 1 || aud[0] != ProtectedClientID || sub == "" || exp == nil {
		return nil, fmt.Errorf("%w: wrong issuer, audience or subject", auth.ErrInvalidToken)
	}
	p.mu.Lock()
	sess, err := p.AS.SessionStore.GetSessionByToken(t)
	p.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%w: unknown session", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{UserID: sub, Scopes: sess.Scopes, Expiration: exp.Time}, nil
}

// secondsExpiry rewrites the token answer's expires_in into seconds: mockoidc writes its Go
// time.Duration (nanoseconds), while RFC 6749 §5.1 defines it in seconds (a client would
// otherwise compute an expiry that overflows).
func secondsExpiry(next http.Handler, ttl time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &captured{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		body := rec.body.Bytes()
		var m map[string]any
		if rec.status == http.StatusOK && json.Unmarshal(body, &m) == nil {
			if _, ok := m["expires_in"]; ok {
				m["expires_in"] = int64(ttl / time.Second)
				if b, err := json.Marshal(m); err == nil {
					body = b
				}
			}
		}
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.status)
		_, _ = w.Write(body)
	})
}

type captured struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (c *captured) Header() http.Header         { return c.header }
func (c *captured) Write(b []byte) (int, error) { return c.body.Write(b) }
func (c *captured) WriteHeader(s int)           { c.status = s }
