package identity

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
)

// idp is a sign-in against a real mockoidc on loopback, served by an httptest server.
type idp struct {
	*fixture
	oidc   *mockoidc.MockOIDC
	signIn *SignIn
	srv    *httptest.Server
}

func newIdP(t *testing.T, groupsClaim string) *idp {
	t.Helper()
	f := newFixture(t)
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	sessions, err := NewSessions(testKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s, err := NewSignIn(OIDCConfig{Issuer: m.Issuer(), ClientID: m.ClientID, ClientSecret: m.ClientSecret,
		RedirectURL: srv.URL + CallbackPath, GroupsClaim: groupsClaim,
		Scopes: []string{"openid", "email", "profile", "groups"}}, sessions, f.svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/auth/", s.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "landed on "+r.URL.Path) })
	return &idp{fixture: f, oidc: m, signIn: s, srv: srv}
}

// browser is a client with a cookie jar that stops at the first answer of the gateway's
// origin that is not a redirect to the identity provider or back.
func browser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

func noFollow(c *http.Client) *http.Client {
	return &http.Client{Jar: c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// authorize starts a sign-in and asks the identity provider for a code, stopping before
// the callback: it returns the callback URL (code and state).
func (d *idp) authorize(t *testing.T, c *http.Client, returnTo string) *url.URL {
	t.Helper()
	resp, _ := get(t, noFollow(c), d.srv.URL+SignInURL(returnTo))
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("sign-in: %d", resp.StatusCode)
	}
	resp, _ = get(t, noFollow(c), resp.Header.Get("Location"))
	cb, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || cb.Path != CallbackPath {
		t.Fatalf("identity provider: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	return cb
}

func TestSignInThroughIdP(t *testing.T) {
	d := newIdP(t, "groups")
	d.invite(t, d.a, "ada@example.com", "admin")
	d.oidc.QueueUser(&mockoidc.MockUser{Subject: "ada-1", Email: "ada@example.com", EmailVerified: true,
		PreferredUsername: "ada", Groups: []string{"eng"}})
	c := browser(t)
	resp, body := get(t, c, d.srv.URL+SignInURL("/admin/#/members"))
	if resp.StatusCode != http.StatusOK || body != "landed on /admin/" {
		t.Fatalf("after sign-in: %d %q", resp.StatusCode, body)
	}
	resp, body = get(t, c, d.srv.URL+SessionPath)
	var v SessionView
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &v) != nil {
		t.Fatalf("session: %d %s", resp.StatusCode, body)
	}
	if v.Person.Issuer != d.oidc.Issuer() || v.Person.Subject != "ada-1" || v.Person.Email != "ada@example.com" ||
		v.Person.Name != "ada" || len(v.Memberships) != 1 || v.Memberships[0] != (MembershipView{d.a, "admin"}) {
		t.Fatalf("session %+v", v)
	}
	got, err := d.svc.Person(t.Context(), v.Person.ID)
	if err != nil || len(got.Groups) != 1 || got.Groups[0] != "eng" {
		t.Fatalf("groups claim not kept: %+v %v", got, err)
	}
	// Sign-out ends the session.
	resp, _ = get(t, c, d.srv.URL+SignOutPath)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-out: %d", resp.StatusCode)
	}
	if resp, _ := get(t, c, d.srv.URL+SessionPath); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("session after sign-out: %d", resp.StatusCode)
	}
}

func TestSignInWithoutMembership(t *testing.T) {
	d := newIdP(t, "")
	c := browser(t)
	resp, body := get(t, c, d.srv.URL+SignInURL("/admin/"))
	if resp.StatusCode != http.StatusForbidden || resp.Request.URL.Path != NoMembershipPath ||
		!strings.Contains(body, "not a member of any workspace") || !strings.Contains(body, "jane.doe@example.com") {
		t.Fatalf("no membership: %d %s %s", resp.StatusCode, resp.Request.URL, body)
	}
	if resp, _ := get(t, browser(t), d.srv.URL+NoMembershipPath); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no-membership page without a session: %d", resp.StatusCode)
	}
}

func TestSignInRefusals(t *testing.T) {
	d := newIdP(t, "")
	people := func() int { return d.count(t, "people") }
	expect := func(t *testing.T, resp *http.Response, body string, status int, msg string) {
		t.Helper()
		if resp.StatusCode != status || !strings.Contains(body, msg) {
			t.Fatalf("got %d %q, want %d with %q", resp.StatusCode, body, status, msg)
		}
		for _, ck := range resp.Cookies() {
			if ck.Name == CookieName && ck.MaxAge >= 0 {
				t.Fatal("a refused sign-in set a session")
			}
		}
		if n := people(); n != 0 {
			t.Fatalf("a refused sign-in stored %d people", n)
		}
	}

	t.Run("open redirect", func(t *testing.T) {
		for _, rt := range []string{"https://evil.example/", "//evil.example", "/\\evil.example"} {
			resp, body := get(t, noFollow(browser(t)), d.srv.URL+SignInPath+"?return_to="+url.QueryEscape(rt))
			expect(t, resp, body, http.StatusBadRequest, "return_to must be a path of this site")
			if len(resp.Cookies()) != 0 {
				t.Fatal("a refused start set a cookie")
			}
		}
	})
	t.Run("unknown state", func(t *testing.T) {
		resp, body := get(t, browser(t), d.srv.URL+CallbackPath+"?state=forged&code=abc")
		expect(t, resp, body, http.StatusBadRequest, "unknown, expired or already finished")
	})
	t.Run("no state", func(t *testing.T) {
		resp, body := get(t, browser(t), d.srv.URL+CallbackPath+"?code=abc")
		expect(t, resp, body, http.StatusBadRequest, "no state")
	})
	t.Run("another browser", func(t *testing.T) {
		cb := d.authorize(t, browser(t), "/admin/")
		resp, body := get(t, browser(t), cb.String())
		expect(t, resp, body, http.StatusBadRequest, "unknown, expired or already finished")
	})
	t.Run("identity provider error", func(t *testing.T) {
		c := browser(t)
		cb := d.authorize(t, c, "/admin/")
		q := cb.Query()
		q.Del("code")
		q.Set("error", "access_denied")
		q.Set("error_description", "<script>alert(1)</script>")
		cb.RawQuery = q.Encode()
		resp, body := get(t, c, cb.String())
		expect(t, resp, body, http.StatusForbidden, `answered &#34;access_denied&#34;`)
		if strings.Contains(body, "<script>") {
			t.Fatal("the description was echoed")
		}
	})
	// RFC 9207; MCP authorization "Authorization Response Validation": an answer whose iss
	// is not the identity provider's shows none of its content; a free-form error code (a
	// phishing text) is not shown either, even from the right issuer.
	const phish = "call_+1-800-555-0100_to_unlock"
	for _, tc := range []struct{ name, iss, code, want string }{
		{"iss mismatch", "https://evil.example", "access_denied", "is not this gateway&#39;s identity provider"},
		{"iss mismatch, phishing code", "https://evil.example", phish, "is not this gateway&#39;s identity provider"},
		{"unregistered code", "", phish, "answered an unregistered error code"},
		{"unregistered code, matching iss", d.oidc.Issuer(), phish, "answered an unregistered error code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := browser(t)
			cb := d.authorize(t, c, "/admin/")
			q := cb.Query()
			q.Del("code")
			q.Set("error", tc.code)
			q.Set("error_description", "Your account is locked: "+phish)
			q.Set("error_uri", "https://evil.example/unlock")
			if tc.iss != "" {
				q.Set("iss", tc.iss)
			} else {
				q.Del("iss")
			}
			cb.RawQuery = q.Encode()
			resp, body := get(t, c, cb.String())
			if resp.StatusCode/100 != 4 || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s", resp.StatusCode, body)
			}
			for _, bad := range []string{"800-555", "locked", "evil.example"} {
				if strings.Contains(body, bad) {
					t.Errorf("page shows %q: %s", bad, body)
				}
			}
		})
	}
	t.Run("no code", func(t *testing.T) {
		c := browser(t)
		cb := d.authorize(t, c, "/admin/")
		q := cb.Query()
		q.Del("code")
		cb.RawQuery = q.Encode()
		resp, body := get(t, c, cb.String())
		expect(t, resp, body, http.StatusBadRequest, "no authorization code")
	})
	t.Run("code refused", func(t *testing.T) {
		c := browser(t)
		cb := d.authorize(t, c, "/admin/")
		q := cb.Query()
		q.Set("code", "not-a-code")
		cb.RawQuery = q.Encode()
		resp, body := get(t, c, cb.String())
		expect(t, resp, body, http.StatusBadGateway, "did not accept the sign-in&#39;s code")
	})
	t.Run("wrong nonce", func(t *testing.T) {
		// The browser's flow names one nonce; the code is issued for another.
		c := browser(t)
		resp, _ := get(t, noFollow(c), d.srv.URL+SignInURL("/admin/"))
		au, _ := url.Parse(resp.Header.Get("Location"))
		q := au.Query()
		q.Set("nonce", "another-nonce")
		au.RawQuery = q.Encode()
		resp, _ = get(t, noFollow(c), au.String())
		resp, body := get(t, c, resp.Header.Get("Location"))
		expect(t, resp, body, http.StatusBadRequest, "nonce does not match")
	})
	t.Run("replayed callback", func(t *testing.T) {
		c := browser(t)
		cb := d.authorize(t, c, "/admin/")
		first := noFollow(c)
		resp, _ := get(t, first, cb.String())
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("first callback: %d", resp.StatusCode)
		}
		_, _ = d.pool.Exec(t.Context(), `DELETE FROM people`) // so that expect can count
		resp, body := get(t, c, cb.String())
		expect(t, resp, body, http.StatusBadRequest, "unknown, expired or already finished")
	})
}

func TestSignInIdPUnreachable(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	sessions, _ := NewSessions(testKey, nil)
	s, err := NewSignIn(OIDCConfig{Issuer: "http://" + addr, ClientID: "c", RedirectURL: "http://127.0.0.1/auth/callback"}, sessions, f.svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, SignInPath, nil)
	req.Host = "127.0.0.1"
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), "cannot be reached") || len(rec.Result().Cookies()) != 0 {
		t.Fatalf("unreachable: %d %s", rec.Code, rec.Body)
	}
}

// One origin: a sign-in started on another host name for the same server (localhost for
// 127.0.0.1) moves to the callback's origin first, with the same return path, and sets no
// cookie there; otherwise the callback would find no flow cookie and the person would loop.
func TestSignInMovesToItsOrigin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sessions, _ := NewSessions(testKey, nil)
	s, err := NewSignIn(OIDCConfig{Issuer: "https://idp.example", ClientID: "c", RedirectURL: "http://127.0.0.1:8080/auth/callback"}, sessions, f.svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Origin(); got != "http://127.0.0.1:8080" {
		t.Fatalf("Origin = %q", got)
	}
	const path = SignInPath + "?return_to=%2Foauth%2Fauthorize%3Fclient_id%3Dx"
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "localhost:8080"
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != "http://127.0.0.1:8080"+path || len(rec.Result().Cookies()) != 0 {
		t.Fatalf("sign-in on localhost: %d to %q, cookies %v", rec.Code, rec.Header().Get("Location"), rec.Result().Cookies())
	}
	if (*SignIn)(nil).Origin() != "" {
		t.Fatal("a nil SignIn has an origin")
	}
}

func TestNewSignInRefusesBadConfig(t *testing.T) {
	sessions, _ := NewSessions(testKey, nil)
	svc := &Service{}
	for _, c := range []OIDCConfig{
		{ClientID: "c", RedirectURL: "https://gw.example/auth/callback"},
		{Issuer: "https://idp.example", RedirectURL: "https://gw.example/auth/callback"},
		{Issuer: "https://idp.example", ClientID: "c"},
		{Issuer: "idp.example", ClientID: "c", RedirectURL: "https://gw.example/auth/callback"},
		{Issuer: "https://idp.example", ClientID: "c", RedirectURL: "/auth/callback"},
	} {
		if _, err := NewSignIn(c, sessions, svc, nil); err == nil {
			t.Errorf("NewSignIn(%+v) accepted", c)
		}
	}
	if _, err := NewSignIn(OIDCConfig{Issuer: "https://idp.example", ClientID: "c", RedirectURL: "https://gw.example/auth/callback"}, nil, svc, nil); err == nil {
		t.Error("no sessions accepted")
	}
}
