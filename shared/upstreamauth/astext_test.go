package upstreamauth_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/upstreamauth"
)

// hostile is what a hostile or forged authorization response carries: text written to be
// read as the gateway's. None of it may appear on any page.
var hostile = url.Values{
	"error_description": {"Your account is locked: call +1-800-555-0100 to unlock"},
	"error_uri":         {"https://evil.example/unlock"},
}

// hostileBits are the pieces of hostile (and of a hostile error code) a page must not show.
var hostileBits = []string{"800-555", "locked", "unlock", "evil.example", "call_"}

const hostileCode = "call_+1-800-555-0100_to_unlock"

func tokenPosts(up *testpeer.OAuthUpstream) int {
	n := 0
	for _, r := range up.Requests() {
		if r == "POST /token" {
			n++
		}
	}
	return n
}

// TestCallbackAuthorizationServerText (RFC 9207; MCP authorization "Authorization Response
// Validation"): the callback page of an authorization response whose iss does not match
// the upstream's issuer (or is missing where the server advertises it, or that carries an
// error and no iss from a server that does not advertise one) shows a fixed message and
// none of the response's text, and no token is requested; a response whose iss matches
// shows its error code only when it is a registered one, never its error_description or
// error_uri. The responses come from a real authorization server on loopback
// (testpeer.OAuthUpstream) through the real /authorize redirect, and the page from the
// callback handler over HTTP.
func TestCallbackAuthorizationServerText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := upstreamauth.Key{ConnectionID: e.conn}
	cb := httptest.NewServer(e.svc.CallbackHandler(nil, nil))
	t.Cleanup(cb.Close)
	withHostile := func(extra url.Values) url.Values {
		q := url.Values{}
		for k, v := range hostile {
			q[k] = v
		}
		for k, v := range extra {
			q[k] = v
		}
		return q
	}
	const mismatch = "does not match this connection&#39;s authorization server"
	for _, tc := range []struct {
		name      string
		advertise bool       // the server advertises authorization_response_iss_parameter_supported
		answer    url.Values // what /authorize redirects with (state added)
		want      string     // on the page
		wantErr   error
	}{
		{"iss mismatch, error", true, withHostile(url.Values{"iss": {"https://evil.example"}, "error": {"access_denied"}}), mismatch, upstreamauth.ErrIssuerMismatch},
		{"iss mismatch, server does not advertise iss", false, withHostile(url.Values{"iss": {"https://evil.example"}, "error": {"access_denied"}}), mismatch, upstreamauth.ErrIssuerMismatch},
		{"iss mismatch, hostile error code", true, withHostile(url.Values{"iss": {"https://evil.example"}, "error": {hostileCode}}), mismatch, upstreamauth.ErrIssuerMismatch},
		{"iss mismatch, with a code", false, url.Values{"iss": {"https://evil.example"}, "code": {"stolen-code"}}, mismatch, upstreamauth.ErrIssuerMismatch},
		{"empty iss", false, withHostile(url.Values{"iss": {""}, "error": {"access_denied"}}), mismatch, upstreamauth.ErrIssuerMismatch},
		{"iss missing where advertised", true, withHostile(url.Values{"error": {"access_denied"}}), mismatch, upstreamauth.ErrIssuerMismatch},
		{"iss missing where advertised, with a code", true, url.Values{"code": {"a-code"}}, mismatch, upstreamauth.ErrIssuerMismatch},
		{"no iss, not advertised: cannot be tied", false, withHostile(url.Values{"error": {"access_denied"}}), "cannot tie it to that server", upstreamauth.ErrDenied},
		{"no iss, not advertised, hostile code", false, withHostile(url.Values{"error": {hostileCode}}), "cannot tie it to that server", upstreamauth.ErrDenied},
		{"matching iss, access_denied", true, withHostile(url.Values{"error": {"access_denied"}}), "declined at the authorization server (access_denied)", upstreamauth.ErrDenied},
		{"matching iss, registered code", true, withHostile(url.Values{"error": {"invalid_scope"}}), "refused the authorization (invalid_scope)", upstreamauth.ErrDenied},
		{"matching iss, hostile code", true, withHostile(url.Values{"error": {hostileCode}}), "refused the authorization (an unregistered error code)", upstreamauth.ErrDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer := tc.answer
			if tc.advertise && !answer.Has("iss") && !strings.Contains(tc.name, "missing") {
				answer = withHostile(answer)
				answer.Set("iss", e.up.URL()) // the right issuer
			}
			e.up.SetIssParameter(tc.advertise)
			e.up.SetAuthorizeAnswer(answer)
			defer e.up.SetAuthorizeAnswer(nil)
			q := consent(t, e.begin(t, e.caller("admin-1"), k), "alice")
			tokensBefore := tokenPosts(e.up)

			resp, err := http.Get(cb.URL + "/cb?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			page := string(body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, `data-status="failed"`) || !strings.Contains(page, tc.want) {
				t.Errorf("page %d, want %q:\n%s", resp.StatusCode, tc.want, page)
			}
			for _, bad := range hostileBits {
				if strings.Contains(page, bad) {
					t.Errorf("the page shows the authorization server's text %q:\n%s", bad, page)
				}
			}
			if n := tokenPosts(e.up); n != tokensBefore {
				t.Errorf("%d token requests after a refused response", n-tokensBefore)
			}
			if st, _ := e.svc.Status(t.Context(), k); st.Authorization == upstreamauth.Authorized {
				t.Errorf("a grant was stored: %+v", st)
			}

			// Complete says the same to the API's callers (errors.Is), with the same reason.
			q = consent(t, e.begin(t, e.caller("admin-1"), k), "alice")
			_, err = e.svc.Complete(t.Context(), nil, q)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Complete = %v, want %v", err, tc.wantErr)
			}
			o := upstreamauth.OutcomeOf(nil, err)
			for _, bad := range hostileBits {
				if strings.Contains(o.Reason, bad) {
					t.Errorf("outcome reason shows %q: %s", bad, o.Reason)
				}
			}
		})
	}
	// And with a matching iss the flow still completes.
	e.up.SetIssParameter(true)
	e.authorize(t, e.caller("admin-1"), k, "alice")
}

// TestTokenEndpointText: what the token endpoint answers on the code exchange and on a
// refresh reaches the callback page and the grant's status (the console's Authorizations
// page) as a registered error code only; a free-form code becomes "an unregistered error
// code", and the error_description is never shown.
func TestTokenEndpointText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := upstreamauth.Key{ConnectionID: e.conn}
	q := consent(t, e.begin(t, e.caller("admin-1"), k), "alice")
	e.up.SetTokenError(url.Values{"error": {hostileCode}, "error_description": hostile["error_description"]})
	_, err := e.svc.Complete(t.Context(), nil, q)
	o := upstreamauth.OutcomeOf(nil, err)
	if !strings.Contains(o.Reason, "refused the code (an unregistered error code)") {
		t.Errorf("exchange reason %q", o.Reason)
	}
	for _, bad := range hostileBits {
		if strings.Contains(o.Reason, bad) {
			t.Errorf("exchange reason shows %q: %s", bad, o.Reason)
		}
	}
	e.up.SetTokenError(nil)
	e.authorize(t, e.caller("admin-1"), k, "alice")

	// The refresh is refused with a registered code, then with a hostile one.
	for _, code := range []string{"invalid_grant", hostileCode} {
		e.authorize(t, e.caller("admin-1"), k, "alice")
		e.up.SetTokenError(url.Values{"error": {code}, "error_description": hostile["error_description"]})
		e.clock.add(2 * 3600e9) // past the 1 h expiry
		if _, err := e.svc.Credentials(k).Token(t.Context()); !errors.Is(err, upstreamauth.ErrAuthorizationRequired) {
			t.Fatalf("Token = %v", err)
		}
		st, _ := e.svc.Status(t.Context(), k)
		want := "(" + code + ")"
		if code == hostileCode {
			want = "(an unregistered error code)"
		}
		if st.Authorization != upstreamauth.Expired || !strings.Contains(st.Reason, want) {
			t.Errorf("status after a refused refresh (%s) = %+v", code, st)
		}
		for _, bad := range hostileBits {
			if strings.Contains(st.Reason, bad) {
				t.Errorf("status reason shows %q: %s", bad, st.Reason)
			}
		}
		e.up.SetTokenError(nil)
	}
}

// TestBakedResource (RFC 8707 §2; Railway's authorization server bakes ?resource=<its own
// URL> into authorization_endpoint): the gateway sends exactly one resource, the
// upstream's, on the authorization URL, on the code exchange and on every refresh; the
// server refuses two (invalid_target), so the flow only completes when each leg has one.
func TestBakedResource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	baked := e.up.URL() + "/" // differs from the protected resource metadata's …/mcp
	e.up.SetBakedResource(baked)
	k := upstreamauth.Key{ConnectionID: e.conn}
	authURL := e.begin(t, e.caller("admin-1"), k)
	u, _ := url.Parse(authURL)
	if got := u.Query()["resource"]; !slices.Equal(got, []string{baked}) {
		t.Fatalf("authorization URL resources %q, want exactly [%s]: %s", got, baked, authURL)
	}
	if _, err := e.svc.Complete(t.Context(), nil, consent(t, authURL, "alice")); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	creds := e.svc.Credentials(k)
	pool := newPool(t)
	if who, err := whoami(t, pool, e.conn, e.up.MCPURL(), creds); err != nil || who != "alice" {
		t.Fatalf("whoami = %q, %v", who, err)
	}
	// Two refreshes: one before expiry by the clock, one on the server's 401.
	e.clock.add(3600e9)
	if _, err := creds.Token(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.up.ExpireAll()
	if who, err := whoami(t, pool, e.conn, e.up.MCPURL(), creds); err != nil || who != "alice" {
		t.Fatalf("whoami after refresh = %q, %v", who, err)
	}
	grants := map[string]int{}
	for _, f := range e.up.TokenRequests() {
		grants[f.Get("grant_type")]++
		if got := f["resource"]; !slices.Equal(got, []string{baked}) {
			t.Errorf("%s token request resources %q, want exactly [%s]", f.Get("grant_type"), got, baked)
		}
	}
	if grants["authorization_code"] != 1 || grants["refresh_token"] != 2 {
		t.Errorf("token requests by grant %v, want one code exchange and two refreshes", grants)
	}

	// The client_credentials grant discovers the same endpoint and sends the same one.
	e.up.RegisterClient("machine", "machine-secret")
	cc := e.svc.ClientCredentials(upstreamauth.Key{ConnectionID: e.conn, Subject: "machine"}, e.up.MCPURL(),
		upstreamauth.Client{ClientID: "machine", ClientSecret: "machine-secret"})
	if _, err := cc.Token(t.Context()); err != nil {
		t.Fatalf("client_credentials: %v", err)
	}
	reqs := e.up.TokenRequests()
	if last := reqs[len(reqs)-1]; last.Get("grant_type") != "client_credentials" || !slices.Equal(last["resource"], []string{baked}) {
		t.Errorf("client_credentials token request %v, want exactly one resource %s", last, baked)
	}
}

// TestOriginOnlyResource (RFC 9728 §3.3 with RFC 3986 §6.2.3): an upstream at an origin with
// no path whose protected resource metadata says resource "http://host:port/" is the same
// resource (an empty path is "/") and is accepted, from the root well-known URL and from a
// challenge's resource_metadata; "…/mcp" against "…/mcp/" is another resource, refused.
func TestOriginOnlyResource(t *testing.T) {
	t.Parallel()
	as := testpeer.NewOAuthUpstream(t) // the authorization server
	for _, tc := range []struct {
		name, path, resource string // the server URL's path and the resource its metadata names ("{}" = its origin)
		challenge, ok        bool
	}{
		{"origin, metadata with /", "", "{}/", false, true},
		{"origin, metadata with /, via challenge", "", "{}/", true, true},
		{"origin, metadata without /", "", "{}", false, true},
		{"origin with /, metadata without /", "/", "{}", true, true},
		{"/mcp, metadata /mcp/", "/mcp", "{}/mcp/", false, false},
		{"/mcp, metadata /mcp/, via challenge", "/mcp", "{}/mcp/", true, false},
		{"/mcp/, metadata /mcp", "/mcp/", "{}/mcp", true, false},
		{"origin, metadata of another port", "", "http://127.0.0.1:1/", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var origin string
			mux := http.NewServeMux()
			mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
					writeTestJSON(w, 200, map[string]any{"resource": strings.ReplaceAll(tc.resource, "{}", origin),
						"authorization_servers": []string{as.URL()}})
					return
				}
				w.WriteHeader(http.StatusUnauthorized)
			})
			origin = newLoopback(t, mux)
			req := upstreamauth.BeginRequest{Key: upstreamauth.Key{ConnectionID: "c"}, ServerURL: origin + tc.path}
			if tc.challenge {
				req.Challenge = &upstreamauth.Challenge{ResourceMetadata: origin + "/.well-known/oauth-protected-resource"}
			}
			svc := upstreamauth.New(upstreamauth.Options{Store: &upstreamauth.MemoryStore{}, RedirectURL: "https://gw.example/cb"})
			authURL, err := svc.Begin(t.Context(), req)
			if !tc.ok {
				if !errors.Is(err, upstreamauth.ErrResourceMismatch) {
					t.Fatalf("Begin = %v, want ErrResourceMismatch", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Begin: %v", err)
			}
			u, _ := url.Parse(authURL)
			want := strings.ReplaceAll(tc.resource, "{}", origin)
			if got := u.Query()["resource"]; !slices.Equal(got, []string{want}) {
				t.Errorf("resource %q, want the metadata's [%s]", got, want)
			}
		})
	}
}
