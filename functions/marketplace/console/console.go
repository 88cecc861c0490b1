// Package console serves the admin console (docs/CONSOLE.md) at /admin from assets embedded in
// the marketplace function: index.html, /admin/assets/app.js and app.css (built from
// web/console by `make console`, committed so that a fresh clone compiles), and
// /admin/config.json, the page's public sign-in settings. The page talks to the REST API
// of the same origin only, with a bearer token it keeps in sessionStorage.
//
// Every answer carries a strict Content-Security-Policy (no inline script or style, no
// other origin but the identity provider's token endpoint), nosniff, no referrer and no
// framing.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"html"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/shared/config"
)

//go:embed dist
var dist embed.FS

// Prefix is the path the console is served under.
const Prefix = "/admin"

// SignInLink is the console's path that starts its sign-in through the gateway's
// authorization server at once (make run's "Sign in with the identity provider" link).
const SignInLink = Prefix + "/#/sign-in"

// OAuth is the deployed sign-in: OAuth 2.1 authorization code with PKCE (S256) against
// the identity provider that issues the API's JWTs, the console being a public client
// (no secret). All fields are public; AuthorizeURL, TokenURL and ClientID are required
// for OAuth sign-in to be offered.
type OAuth struct {
	AuthorizeURL string `json:"authorizeUrl"`
	TokenURL     string `json:"tokenUrl"`
	ClientID     string `json:"clientId"`
	Scope        string `json:"scope,omitempty"`    // space-separated; "openid" when empty
	Audience     string `json:"audience,omitempty"` // sent as audience= when the provider needs it
}

// Enabled reports whether o is complete enough to sign in with.
func (o OAuth) Enabled() bool { return o.AuthorizeURL != "" && o.TokenURL != "" && o.ClientID != "" }

// AuthServer is the gateway's own authorization server (functions/marketplace/authserver),
// which the console signs in through as its first-party client (docs/AUTH.md "The
// console"). All fields are public.
type AuthServer struct {
	// Base is the issuer (PUBLIC_BASE_URL); "" is the page's own origin.
	Base          string `json:"base"`
	ClientID      string `json:"clientId"`
	AuthorizePath string `json:"authorizePath"`
	TokenPath     string `json:"tokenPath"`
	RevokePath    string `json:"revokePath"`
}

// OwnAuthServer is AuthServer for issuer base ("" : the page's origin).
func OwnAuthServer(base string) *AuthServer {
	return &AuthServer{Base: base, ClientID: authserver.ConsoleClientID, AuthorizePath: authserver.AuthorizePath,
		TokenPath: authserver.TokenPath, RevokePath: authserver.RevokePath}
}

// Config is what the page needs to know at start.
type Config struct {
	// AuthServer, when set, is the sign-in the page's "Sign in" button starts (the
	// gateway's own authorization server is on).
	AuthServer *AuthServer
	// OAuth is an external identity provider (CONSOLE_OAUTH_*): offered beside AuthServer
	// as "Sign in with the external provider", alone when AuthServer is nil.
	OAuth OAuth
	// DevSignIn says a development sign-in link exists (cmd/local); the page then tells a
	// signed-out user to use the link `make run` printed. Never set in Lambda.
	DevSignIn bool
}

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// Mount serves the console on mux under Prefix (Prefix and Prefix+"/", Handler(c)): the
// marketplace function's main and the local stack mount it beside the REST API, which
// does not know the console.
func Mount(mux *http.ServeMux, c Config) {
	h := Handler(c)
	mux.Handle(Prefix, h)
	mux.Handle(Prefix+"/", h)
}

// Handler serves the console: GET /admin, /admin/ (the page), /admin/assets/* and
// /admin/config.json; anything else under /admin is 404. It panics if the embedded
// bundle is missing (a build error, caught by the package's tests).
func Handler(c Config) http.Handler {
	assets := map[string]asset{}
	err := fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := dist.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		assets[strings.TrimPrefix(p, "dist/")] = asset{body: b, contentType: contentType(p),
			etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil || assets["index.html"].body == nil {
		panic("console: embedded bundle missing (run make console)")
	}
	cfg := struct {
		AuthServer *AuthServer `json:"authServer"`
		OAuth      *OAuth      `json:"oauth"`
		DevSignIn  bool        `json:"devSignIn"`
	}{AuthServer: c.AuthServer, DevSignIn: c.DevSignIn}
	if c.OAuth.Enabled() {
		o := c.OAuth
		if o.Scope == "" {
			o.Scope = "openid"
		}
		cfg.OAuth = &o
	}
	cfgJSON, _ := json.Marshal(cfg)
	assets["config.json"] = asset{body: cfgJSON, contentType: "application/json"}
	// The page reads the same settings from a <meta> tag of index.html.
	idx := assets["index.html"]
	idx.body = bytes.Replace(idx.body, []byte(`<meta name="agentpack-console-config" content="{}">`),
		[]byte(`<meta name="agentpack-console-config" content="`+html.EscapeString(string(cfgJSON))+`">`), 1)
	// Version the asset URLs by content, so that browsers may keep the assets for good
	// (a deploy changes the URLs) and a page load asks the server for index.html only.
	for name, a := range assets {
		if strings.HasPrefix(name, "assets/") {
			idx.body = bytes.ReplaceAll(idx.body, []byte(`"`+Prefix+"/"+name+`"`),
				[]byte(`"`+Prefix+"/"+name+"?v="+strings.Trim(a.etag, `"`)+`"`))
		}
	}
	sum := sha256.Sum256(idx.body)
	idx.etag = `"` + hex.EncodeToString(sum[:8]) + `"`
	assets["index.html"] = idx
	csp := CSP(c.OAuth.TokenURL)
	if c.AuthServer != nil && c.AuthServer.Base != "" {
		csp = CSP(c.OAuth.TokenURL, c.AuthServer.Base)
	}

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		switch {
		case name == "" || name == "/":
			name = "index.html"
		case (strings.HasPrefix(name, "/assets/") && !strings.Contains(name, "..")) || name == "/config.json":
			name = strings.TrimPrefix(name, "/") // looked up exactly: no cleaning, no directories
		default:
			name = ""
		}
		a, ok := assets[name]
		if !ok || name == "" {
			http.NotFound(w, r)
			return
		}
		h.Set("Content-Type", a.contentType)
		if v := r.URL.Query().Get("v"); v != "" && `"`+v+`"` == a.etag {
			// A versioned asset URL (from index.html) never changes its content.
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			// The page and unversioned URLs revalidate every time (ETag), so a deploy is
			// seen at once.
			h.Set("Cache-Control", "no-cache")
		}
		if a.etag != "" {
			h.Set("ETag", a.etag)
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
	})
}

// CSP is the console's Content-Security-Policy: scripts, styles and fonts from the same
// origin only, images from it and from https (the logos of connected clients, which the
// authorization server accepts as https URLs only; the page sends them no referrer), no
// inline script or style, no plugins, no framing, forms and <base> locked; fetch to the
// same origin and, when set, to each tokenURL's origin (the token endpoints of the
// identity provider and of the gateway's authorization server, for the PKCE code exchange).
func CSP(tokenURLs ...string) string {
	connect := "'self'"
	for _, t := range tokenURLs {
		if u, err := url.Parse(t); err == nil && u.Scheme != "" && u.Host != "" {
			connect += " " + u.Scheme + "://" + u.Host
		}
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; font-src 'self'; " +
		"connect-src " + connect + "; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".png":
		return "image/png"
	case ".svg":
		return "image/svg+xml"
	case ".json":
		return "application/json"
	}
	return "application/octet-stream"
}

// FromConfig is the console's OAuth settings from the shared configuration (the
// CONSOLE_OAUTH_* variables).
func FromConfig(c *config.Config) OAuth {
	return OAuth{AuthorizeURL: c.ConsoleAuthorizeURL, TokenURL: c.ConsoleTokenURL, ClientID: c.ConsoleClientID,
		Scope: c.ConsoleScope, Audience: c.ConsoleAudience}
}
