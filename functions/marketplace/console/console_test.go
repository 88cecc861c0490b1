package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/auth"
)

func get(t *testing.T, h http.Handler, method, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// TestHandler checks what the console serves and its security headers.
func TestHandler(t *testing.T) {
	t.Parallel()
	h := console.Handler(console.Config{})
	cases := []struct {
		name, method, path string
		status             int
		ctype, contains    string
	}{
		{"page", "GET", "/admin", 200, "text/html; charset=utf-8", `<script type="module" src="/admin/assets/app.js?v=`},
		{"page slash", "GET", "/admin/", 200, "text/html; charset=utf-8", `<div id="app">`},
		{"bundle", "GET", "/admin/assets/app.js", 200, "text/javascript; charset=utf-8", ""},
		{"styles", "GET", "/admin/assets/app.css", 200, "text/css; charset=utf-8", ""},
		{"config", "GET", "/admin/config.json", 200, "application/json", `"oauth":null`},
		{"head", "HEAD", "/admin/", 200, "text/html; charset=utf-8", ""},
		{"unknown", "GET", "/admin/nope", 404, "", ""},
		{"unknown asset", "GET", "/admin/assets/nope.js", 404, "", ""},
		{"traversal", "GET", "/admin/assets/../index.html", 404, "", ""},
		{"dev route not served", "GET", console.DevSignInPath + "?code=x&as=admin", 404, "", ""},
		{"post", "POST", "/admin/", 405, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, body := get(t, h, tc.method, tc.path)
			if res.StatusCode != tc.status {
				t.Fatalf("%s %s: %d", tc.method, tc.path, res.StatusCode)
			}
			if tc.ctype != "" && res.Header.Get("Content-Type") != tc.ctype {
				t.Errorf("content type %q", res.Header.Get("Content-Type"))
			}
			if !strings.Contains(body, tc.contains) {
				t.Errorf("body lacks %q", tc.contains)
			}
			csp := res.Header.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "script-src 'self';", "style-src 'self';", "frame-ancestors 'none'", "connect-src 'self';"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe") {
				t.Errorf("CSP allows unsafe sources: %q", csp)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("security headers: %v", res.Header)
			}
		})
	}
	// Versioned asset URLs are cached for good; the page and unversioned URLs revalidate.
	_, page0 := get(t, h, "GET", "/admin/")
	m := regexp.MustCompile(`/admin/assets/app\.js\?v=[0-9a-f]{16}`).FindString(page0)
	if m == "" {
		t.Fatalf("no versioned bundle URL in %s", page0)
	}
	for path, want := range map[string]string{m: "public, max-age=31536000, immutable", "/admin/assets/app.js": "no-cache",
		"/admin/assets/app.js?v=0000000000000000": "no-cache", "/admin/": "no-cache"} {
		if res, _ := get(t, h, "GET", path); res.Header.Get("Cache-Control") != want {
			t.Errorf("%s: Cache-Control %q, want %q", path, res.Header.Get("Cache-Control"), want)
		}
	}
	// The page has no inline script or style for the CSP to refuse.
	_, page := get(t, h, "GET", "/admin/")
	if strings.Contains(page, "<script>") || strings.Contains(page, "style=") || strings.Contains(page, "<style") {
		t.Errorf("inline script or style in index.html")
	}
}

// TestHandlerOAuth checks that complete OAuth settings reach the page (config.json and
// the <meta> tag, HTML-escaped) and open connect-src to the token endpoint's origin only.
func TestHandlerOAuth(t *testing.T) {
	t.Parallel()
	o := console.OAuth{AuthorizeURL: "https://id.example.com/authorize", TokenURL: "https://id.example.com/oauth/token?x=1",
		ClientID: `console"<client>`, Audience: "https://api.example.com"}
	h := console.Handler(console.Config{OAuth: o})
	res, body := get(t, h, "GET", "/admin/config.json")
	if !strings.Contains(body, `"clientId":"console\"\u003cclient\u003e"`) || !strings.Contains(body, `"scope":"openid"`) {
		t.Fatalf("config.json: %s", body)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' https://id.example.com;") {
		t.Fatalf("CSP %q", csp)
	}
	_, page := get(t, h, "GET", "/admin/")
	if !strings.Contains(page, `&#34;oauth&#34;:{&#34;authorizeUrl&#34;`) || strings.Contains(page, `<client>`) {
		t.Fatalf("meta tag not escaped: %s", page)
	}
	// Incomplete settings offer no OAuth sign-in.
	_, body = get(t, console.Handler(console.Config{OAuth: console.OAuth{ClientID: "x"}}), "GET", "/admin/config.json")
	if !strings.Contains(body, `"oauth":null`) {
		t.Fatalf("incomplete OAuth offered: %s", body)
	}
}

// TestHandlerAuthServer: with the gateway's authorization server on, the page learns the
// console client's settings (config.json and the <meta> tag); with PUBLIC_BASE_URL set,
// connect-src also names that origin (the token endpoint); CONSOLE_OAUTH_* stays offered
// beside it.
func TestHandlerAuthServer(t *testing.T) {
	t.Parallel()
	h := console.Handler(console.Config{AuthServer: console.OwnAuthServer("")})
	res, body := get(t, h, "GET", "/admin/config.json")
	want := `"authServer":{"base":"","clientId":"agentpack-console","authorizePath":"/oauth/authorize","tokenPath":"/oauth/token","revokePath":"/oauth/revoke"}`
	if !strings.Contains(body, want) || !strings.Contains(body, `"oauth":null`) {
		t.Fatalf("config.json: %s, want %s", body, want)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self';") {
		t.Fatalf("CSP %q", csp)
	}
	o := console.OAuth{AuthorizeURL: "https://id.example.com/authorize", TokenURL: "https://id.example.com/token", ClientID: "c"}
	h = console.Handler(console.Config{AuthServer: console.OwnAuthServer("https://gw.example.com"), OAuth: o})
	res, body = get(t, h, "GET", "/admin/config.json")
	if !strings.Contains(body, `"base":"https://gw.example.com"`) || !strings.Contains(body, `"oauth":{"authorizeUrl"`) {
		t.Fatalf("config.json: %s", body)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' https://id.example.com https://gw.example.com;") {
		t.Fatalf("CSP %q", csp)
	}
}

// TestDevSignIn checks the development sign-in: refused in deployed mode, a wrong code
// 403, an unknown role 404, and a right one a 303 to the console with a token that the
// API's verifier accepts for the right principal.
func TestDevSignIn(t *testing.T) {
	t.Parallel()
	code := "0123456789abcdef0123"
	ps := map[string]auth.Principal{"admin": {Subject: "dev-admin", Role: auth.RoleAdmin, Workspaces: []string{"w"}}}
	if _, err := console.DevSignIn("deployed", "secret", code, time.Hour, ps); err != console.ErrDevSignInDeployed {
		t.Fatalf("deployed: %v", err)
	}
	if _, err := console.DevSignIn("local", "", code, time.Hour, ps); err == nil {
		t.Fatal("no secret accepted")
	}
	if _, err := console.DevSignIn("local", "secret", "short", time.Hour, ps); err == nil {
		t.Fatal("short code accepted")
	}
	h, err := console.DevSignIn("local", "secret", code, time.Hour, ps)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method, query string
		status              int
	}{
		{"no code", "GET", "?as=admin", 403},
		{"wrong code", "GET", "?code=0123456789abcdef0124&as=admin", 403},
		{"unknown role", "GET", "?code=" + code + "&as=root", 404},
		{"post", "POST", "?code=" + code + "&as=admin", 405},
	} {
		res, body := get(t, h, tc.method, console.DevSignInPath+tc.query)
		if res.StatusCode != tc.status || strings.Contains(body, "eyJ") {
			t.Errorf("%s: %d %s", tc.name, res.StatusCode, body)
		}
	}
	res, _ := get(t, h, "GET", console.DevSignInPath+"?code="+code+"&as=admin")
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/#token=") || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("sign-in: %d %q", res.StatusCode, loc)
	}
	tok, _ := url.QueryUnescape(strings.TrimPrefix(loc, "/admin/#token="))
	v, err := auth.NewVerifier(t.Context(), auth.Options{Secret: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(t.Context(), tok)
	if err != nil || p.Subject != "dev-admin" || p.Role != auth.RoleAdmin {
		t.Fatalf("minted token: %+v %v", p, err)
	}
}

// TestStackMountsConsole checks the composed stack: /admin is served with the REST API on
// one origin, / leads to it, and the dev sign-in route exists only when mounted.
func TestStackMountsConsole(t *testing.T) {
	env := stacktest.New(t, nil)
	for path, want := range map[string]int{"/admin/": 200, "/admin": 200, console.DevSignInPath + "?code=x&as=admin": 404} {
		if st, _ := env.Do(t, "GET", path, "", nil); st != want {
			t.Errorf("GET %s: %d, want %d", path, st, want)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(env.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/admin/" {
		t.Errorf("GET /: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	signIn, err := console.DevSignIn("local", stacktest.Secret, "0123456789abcdef0123", time.Hour,
		map[string]auth.Principal{"admin": {Subject: "a", Role: auth.RoleAdmin}})
	if err != nil {
		t.Fatal(err)
	}
	env2 := stacktest.New(t, &stacktest.Options{Stack: &stack.Options{DevSignIn: signIn}})
	if st, _ := env2.Do(t, "GET", console.DevSignInPath+"?code=0123456789abcdef0123&as=admin", "", nil); st != 200 {
		// the client follows the 303 to the page
		t.Errorf("mounted dev sign-in: %d", st)
	}
	if _, body := env2.Do(t, "GET", "/admin/config.json", "", nil); !strings.Contains(string(body), `"devSignIn":true`) {
		t.Errorf("config.json: %s", body)
	}
}
