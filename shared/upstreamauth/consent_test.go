package upstreamauth_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/agentpack/gateway/shared/urlguard"
)

const consentBase = "https://gateway.example/admin/#/consent/"

// withConsent is e's Service with the gateway's consent page (Options.ConsentURL) over the
// same store and upstream.
func (e *env) withConsent(t *testing.T) *upstreamauth.Service {
	t.Helper()
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	return upstreamauth.New(upstreamauth.Options{Store: e.store, HTTPClient: guard.HTTPClient(10 * time.Second),
		CheckURL: guard.CheckURL, RedirectURL: "https://gateway.example/api/oauth/callback", Now: e.clock.now,
		ConsentURL: consentBase})
}

func linkOf(t *testing.T, u string) string {
	t.Helper()
	id, ok := strings.CutPrefix(u, consentBase)
	if !ok || id == "" {
		t.Fatalf("Begin answered %s, not a consent link", u)
	}
	return id
}

// TestConsentBoundToItsUser: with the consent page, the link a caller receives is the
// gateway's page, not the authorization server; the page lets through only the caller the
// link was made for (same subject, same workspace, an admin for a shared grant), and the
// callback completes only with the binding the page handed to that browser. Every refusal
// stores nothing and leaves the caller's existing grant as it was (issue 22: member A's
// link opened in member B's browser made A's calls run upstream as B).
func TestConsentBoundToItsUser(t *testing.T) {
	e := newEnv(t)
	svc := e.withConsent(t)
	ctx := t.Context()
	a := e.caller("member-a")
	ka := upstreamauth.Key{ConnectionID: e.conn, Subject: "member-a"}
	memberA := &upstreamauth.Completer{Subject: "member-a", Workspaces: []string{e.ws}}

	// A authorizes once, through the page, as upstream account "alice".
	finish := func(link string, who *upstreamauth.Completer, account string) (*upstreamauth.Result, error) {
		t.Helper()
		start, err := svc.Consent(ctx, link, who)
		if err != nil {
			t.Fatalf("Consent: %v", err)
		}
		if !start.Cookie.HttpOnly || start.Cookie.SameSite != http.SameSiteLaxMode || !start.Cookie.Secure ||
			start.Cookie.Path != "/api/oauth/callback" || start.Cookie.MaxAge <= 0 {
			t.Errorf("binding cookie %+v", start.Cookie)
		}
		return svc.CompleteBound(ctx, nil, start.Cookie.Value, consent(t, start.AuthURL, account))
	}
	begin := func(c upstreamauth.Caller, k upstreamauth.Key) string {
		t.Helper()
		u, err := svc.Begin(ctx, upstreamauth.BeginRequest{Caller: c, Key: k, ServerURL: e.up.MCPURL()})
		if err != nil {
			t.Fatal(err)
		}
		return linkOf(t, u)
	}
	if _, err := finish(begin(a, ka), memberA, "alice"); err != nil {
		t.Fatalf("A's own consent: %v", err)
	}
	before, err := e.store.GrantGet(ctx, ka)
	if err != nil {
		t.Fatal(err)
	}
	unchanged := func(what string) {
		t.Helper()
		g, err := e.store.GrantGet(ctx, ka)
		if err != nil || g.AccessToken != before.AccessToken || g.AuthorizedAt != before.AuthorizedAt {
			t.Errorf("%s: A's grant changed (%v)", what, err)
		}
		if _, err := e.store.GrantGet(ctx, upstreamauth.Key{ConnectionID: e.conn, Subject: "member-b"}); !errors.Is(err, upstreamauth.ErrNoGrant) {
			t.Errorf("%s: a grant was stored for B: %v", what, err)
		}
	}

	// A's next link (re-authorization), opened by everyone but A.
	link := begin(a, ka)
	for _, tt := range []struct {
		name string
		who  *upstreamauth.Completer
		want error
	}{
		{"no session", nil, upstreamauth.ErrNoSession},
		{"other member", &upstreamauth.Completer{Subject: "member-b", Workspaces: []string{e.ws}, Admin: true}, upstreamauth.ErrStateForeign},
		{"other workspace", &upstreamauth.Completer{Subject: "member-a", Workspaces: []string{e.other}}, upstreamauth.ErrStateForeign},
		{"made-up link", memberA, upstreamauth.ErrStateUnknown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := link
			if tt.name == "made-up link" {
				l = "made-up"
			}
			start, err := svc.Consent(ctx, l, tt.who)
			if !errors.Is(err, tt.want) || start != nil {
				t.Fatalf("Consent = %v, %v; want %v", start, err, tt.want)
			}
			unchanged(tt.name)
		})
	}

	t.Run("callback without the page's binding", func(t *testing.T) {
		start, err := svc.Consent(ctx, link, memberA)
		if err != nil {
			t.Fatal(err)
		}
		// The authorization server's answer reaches a browser without A's cookie (or with
		// another): refused, the state spent, nothing stored.
		q := consent(t, start.AuthURL, "bob")
		for _, binding := range []string{"", "not-the-binding"} {
			if _, err := svc.CompleteBound(ctx, nil, binding, q); !errors.Is(err, upstreamauth.ErrUnbound) && !errors.Is(err, upstreamauth.ErrStateUnknown) {
				t.Errorf("binding %q: %v", binding, err)
			}
		}
		if _, err := svc.CompleteBound(ctx, nil, start.Cookie.Value, q); !errors.Is(err, upstreamauth.ErrStateUnknown) {
			t.Errorf("the state survived a refused callback: %v", err)
		}
		unchanged("unbound callback")
		// Complete (no binding at all) never finishes a flow of a Service with a consent page.
		if _, err := svc.Complete(ctx, memberA, consent(t, start.AuthURL, "bob")); err == nil {
			t.Error("Complete without binding succeeded")
		}
		unchanged("Complete")
	})

	t.Run("callback page without the cookie", func(t *testing.T) {
		start, err := svc.Consent(ctx, begin(a, ka), memberA)
		if err != nil {
			t.Fatal(err)
		}
		q := consent(t, start.AuthURL, "bob")
		rec := httptest.NewRecorder()
		svc.CallbackHandler(nil, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/oauth/callback?"+q.Encode(), nil))
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "did not open the authorization link") {
			t.Errorf("callback without cookie: %d %s", rec.Code, rec.Body)
		}
		unchanged("callback page")
	})

	t.Run("shared grant: only an admin of the workspace", func(t *testing.T) {
		ks := upstreamauth.Key{ConnectionID: e.conn}
		admin := e.caller("admin-a")
		l := begin(admin, ks)
		for _, who := range []*upstreamauth.Completer{
			{Subject: "admin-a", Workspaces: []string{e.ws}},                 // the same user, no longer an admin
			{Subject: "member-b", Workspaces: []string{e.ws}},                // a member
			{Subject: "admin-a", Workspaces: []string{e.other}, Admin: true}, // another workspace
		} {
			if _, err := svc.Consent(ctx, l, who); !errors.Is(err, upstreamauth.ErrNotAdmin) && !errors.Is(err, upstreamauth.ErrStateForeign) {
				t.Errorf("%+v: %v", who, err)
			}
		}
		if _, err := e.store.GrantGet(ctx, ks); !errors.Is(err, upstreamauth.ErrNoGrant) {
			t.Errorf("a shared grant was stored: %v", err)
		}
		res, err := finish(l, &upstreamauth.Completer{Subject: "admin-a", Workspaces: []string{e.ws}, Admin: true}, "carol")
		if err != nil || res.Status.Authorization != upstreamauth.Authorized {
			t.Fatalf("admin's consent: %v %v", res, err)
		}
	})

	t.Run("A completes it", func(t *testing.T) {
		res, err := finish(begin(a, ka), memberA, "alice2")
		if err != nil || res.Status.Authorization != upstreamauth.Authorized {
			t.Fatalf("A's consent: %v %v", res, err)
		}
		g, _ := e.store.GrantGet(ctx, ka)
		if g.AccessToken == before.AccessToken {
			t.Error("A's grant was not replaced by A's own consent")
		}
	})
}

// TestOneRegistrationPerConnection: unauthorized calls of one connection — five by one
// member, then others — register one client with the authorization server, reused by
// every member, and a member's repeated calls keep one pending authorization (issue 22: 5
// calls made 5 client ids and 6 pending rows).
func TestOneRegistrationPerConnection(t *testing.T) {
	e := newEnv(t)
	var authURLs []string
	for i := range 5 {
		authURLs = append(authURLs, e.begin(t, e.caller("member-a"), upstreamauth.Key{ConnectionID: e.conn, Subject: "member-a"}))
		_ = i
	}
	if n := e.up.Registrations(); n != 1 {
		t.Errorf("5 calls: %d registrations at the authorization server, want 1", n)
	}
	if e.pool != nil {
		var rows int
		if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM mcp_oauth_pending WHERE connection_id = $1`, e.conn).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != 1 {
			t.Errorf("5 calls of one member: %d pending rows, want 1", rows)
		}
	}
	// The earlier links are replaced; the newest works.
	if _, err := e.svc.Complete(t.Context(), nil, consent(t, authURLs[0], "alice")); !errors.Is(err, upstreamauth.ErrStateUnknown) {
		t.Errorf("a replaced link still completes: %v", err)
	}
	for _, m := range []string{"member-b", "member-c"} {
		e.authorize(t, e.caller(m), upstreamauth.Key{ConnectionID: e.conn, Subject: m}, m)
	}
	e.authorize(t, e.caller("member-a"), upstreamauth.Key{ConnectionID: e.conn, Subject: "member-a"}, "alice")
	if n := e.up.Registrations(); n != 1 {
		t.Errorf("three members authorized: %d registrations, want 1", n)
	}
	clients := map[string]bool{}
	for _, q := range e.up.Authorizations() {
		clients[q.Get("client_id")] = true
	}
	if len(clients) != 1 {
		t.Errorf("client ids in authorization requests: %v", clients)
	}
}

// TestOAuthSettings: an admin's settings reach the authorization request (scopes, extra
// parameters) and pin discovery (issuer, metadata URL); discovery failures name what
// failed; no endpoints are guessed; comma-separated scopes in a token answer are split.
func TestOAuthSettings(t *testing.T) {
	begin := func(e *env, set upstreamauth.Settings, pre *upstreamauth.Client) (string, error) {
		return e.svc.Begin(t.Context(), upstreamauth.BeginRequest{Caller: e.caller("admin-a"),
			Key: upstreamauth.Key{ConnectionID: e.conn}, ServerURL: e.up.MCPURL(), Settings: set, Client: pre})
	}
	t.Run("scopes and parameters in the authorization URL", func(t *testing.T) {
		e := newEnv(t)
		u, err := begin(e, upstreamauth.Settings{Scopes: []string{"repo", "read:org"},
			AuthorizationParams: map[string]string{"audience": "https://api.example", "prompt": "consent"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		q := mustQuery(t, u)
		// The configured scopes are what is asked for (issue 34), not the challenge's
		// tools:read; offline_access because the authorization server offers it.
		if got := q.Get("scope"); got != "repo read:org offline_access" {
			t.Errorf("scope %q, want %q", got, "repo read:org offline_access")
		}
		if q.Get("audience") != "https://api.example" || q.Get("prompt") != "consent" {
			t.Errorf("parameters: %v", q)
		}
	})
	t.Run("catalog entry client scopes", func(t *testing.T) {
		e := newEnv(t)
		e.up.RegisterClient("pre", "secret")
		u, err := begin(e, upstreamauth.Settings{}, &upstreamauth.Client{ClientID: "pre", ClientSecret: "secret", Scopes: []string{"issues:write"}})
		if err != nil {
			t.Fatal(err)
		}
		if q := mustQuery(t, u); !slices.Contains(strings.Fields(q.Get("scope")), "issues:write") {
			t.Errorf("entry scope missing: %q", q.Get("scope"))
		}
	})
	t.Run("a pre-registered client's scopes are what is asked for", func(t *testing.T) {
		// Issue 34: an entry's client configured for gmail.readonly asked for every scope in
		// scopes_supported. Its scopes are the request now; an OAuth setting's scopes win
		// when both are set; without either, the upstream's own (challenge, else
		// scopes_supported) as before.
		for _, tc := range []struct {
			name   string
			set    upstreamauth.Settings
			client []string
			want   string
		}{
			{"client only", upstreamauth.Settings{}, []string{"gmail.readonly"}, "gmail.readonly offline_access"},
			{"setting wins", upstreamauth.Settings{Scopes: []string{"gmail.send"}}, []string{"gmail.readonly"}, "gmail.send offline_access"},
			{"neither", upstreamauth.Settings{}, nil, "tools:read offline_access"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t)
				e.up.RegisterClient("pre", "secret")
				u, err := begin(e, tc.set, &upstreamauth.Client{ClientID: "pre", ClientSecret: "secret", Scopes: tc.client})
				if err != nil {
					t.Fatal(err)
				}
				if got := mustQuery(t, u).Get("scope"); got != tc.want {
					t.Errorf("scope %q, want %q", got, tc.want)
				}
			})
		}
	})
	t.Run("issuer mismatch names both", func(t *testing.T) {
		e := newEnv(t)
		e.up.SetMetadataFaults("https://elsewhere.example", false, false)
		_, err := begin(e, upstreamauth.Settings{}, nil)
		var fe *upstreamauth.FlowError
		if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "https://elsewhere.example") || !strings.Contains(fe.Reason, e.up.URL()) {
			t.Errorf("mismatch: %v", err)
		}
	})
	t.Run("expected issuer not the resource's", func(t *testing.T) {
		e := newEnv(t)
		_, err := begin(e, upstreamauth.Settings{Issuer: "https://pinned.example"}, nil)
		var fe *upstreamauth.FlowError
		if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "https://pinned.example") || !strings.Contains(fe.Reason, e.up.URL()) {
			t.Errorf("pinned issuer: %v", err)
		}
	})
	t.Run("no metadata: a clear error, no guessed endpoints", func(t *testing.T) {
		e := newEnv(t)
		e.up.SetMetadataFaults("", true, false)
		_, err := begin(e, upstreamauth.Settings{}, nil)
		var fe *upstreamauth.FlowError
		if !errors.As(err, &fe) || fe.Step != "discovery" || !strings.Contains(fe.Reason, "no authorization server metadata") ||
			strings.Contains(fe.Reason, "registration") {
			t.Errorf("no metadata: %v", err)
		}
		if n := e.up.Registrations(); n != 0 {
			t.Errorf("%d registrations at a guessed endpoint", n)
		}
	})
	t.Run("metadataUrl pinned", func(t *testing.T) {
		e := newEnv(t)
		e.up.SetMetadataFaults("", true, false)
		// Hidden at the well-known URL; served here by a pinned document that names the same server.
		doc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"issuer":"` + e.up.URL() + `","authorization_endpoint":"` + e.up.URL() + `/authorize","token_endpoint":"` +
				e.up.URL() + `/token","registration_endpoint":"` + e.up.URL() + `/register","code_challenge_methods_supported":["S256"]}`))
		}))
		defer doc.Close()
		u, err := begin(e, upstreamauth.Settings{MetadataURL: doc.URL + "/meta"}, nil)
		if err != nil || !strings.HasPrefix(u, e.up.URL()+"/authorize?") {
			t.Errorf("pinned metadata: %s %v", u, err)
		}
	})
	t.Run("missing field named", func(t *testing.T) {
		e := newEnv(t)
		doc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"issuer":"` + e.up.URL() + `","authorization_endpoint":"` + e.up.URL() + `/authorize","code_challenge_methods_supported":["S256"]}`))
		}))
		defer doc.Close()
		_, err := begin(e, upstreamauth.Settings{MetadataURL: doc.URL}, nil)
		var fe *upstreamauth.FlowError
		if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "token_endpoint") {
			t.Errorf("missing token_endpoint: %v", err)
		}
	})
	t.Run("comma-separated scope answer", func(t *testing.T) {
		e := newEnv(t)
		e.up.SetMetadataFaults("", false, true)
		k := upstreamauth.Key{ConnectionID: e.conn}
		e.authorize(t, e.caller("admin-a"), k, "alice")
		g, err := e.store.GrantGet(t.Context(), k)
		if err != nil || !slices.Contains(g.Scopes, "tools:read") || !slices.Contains(g.Scopes, "offline_access") {
			t.Errorf("scopes %q (%v)", g.Scopes, err)
		}
	})
	t.Run("validation", func(t *testing.T) {
		for _, tt := range []struct {
			name string
			set  upstreamauth.Settings
			want string
		}{
			{"relative issuer", upstreamauth.Settings{Issuer: "/x"}, "issuer"},
			{"metadata ftp", upstreamauth.Settings{MetadataURL: "ftp://x.example/m"}, "metadataUrl"},
			{"scope with space", upstreamauth.Settings{Scopes: []string{"a b"}}, "scopes"},
			{"reserved parameter", upstreamauth.Settings{AuthorizationParams: map[string]string{"redirect_uri": "x"}}, "redirect_uri"},
			{"bad parameter name", upstreamauth.Settings{AuthorizationParams: map[string]string{"a b": "x"}}, "name"},
			{"control character", upstreamauth.Settings{AuthorizationParams: map[string]string{"prompt": "a\nb"}}, "control"},
		} {
			if err := tt.set.Validate(nil); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: %v", tt.name, err)
			}
		}
		ok := upstreamauth.Settings{Issuer: "https://as.example", Scopes: []string{"read:org"}, AuthorizationParams: map[string]string{"audience": "x"}}
		if err := ok.Validate(nil); err != nil {
			t.Error(err)
		}
	})
}

func mustQuery(t *testing.T, u string) url.Values {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return pu.Query()
}

// TestConsentRefusalNamesTheFlow: a refusal of a link whose flow is known is a
// *ConsentRefusal naming the flow's connection and workspace (what the consent endpoint
// records in the event log), with the reason errors.Is sees: another user, no session, an
// expired link, and a link the same caller's newer one replaced (kept as replaced, in
// Postgres and in MemoryStore, until it would have expired). An unknown link names nothing.
func TestConsentRefusalNamesTheFlow(t *testing.T) {
	e := newEnv(t)
	svc := e.withConsent(t)
	ctx := t.Context()
	a := e.caller("member-a")
	ka := upstreamauth.Key{ConnectionID: e.conn, Subject: "member-a"}
	memberA := &upstreamauth.Completer{Subject: "member-a", Workspaces: []string{e.ws}}
	begin := func() string {
		t.Helper()
		u, err := svc.Begin(ctx, upstreamauth.BeginRequest{Caller: a, Key: ka, ServerURL: e.up.MCPURL()})
		if err != nil {
			t.Fatal(err)
		}
		return linkOf(t, u)
	}
	refused := func(what, link string, who *upstreamauth.Completer, want error) {
		t.Helper()
		_, err := svc.Consent(ctx, link, who)
		r, ok := errors.AsType[*upstreamauth.ConsentRefusal](err)
		if !ok || !errors.Is(err, want) || r.Key.ConnectionID != e.conn || r.WorkspaceID != e.ws {
			t.Errorf("%s: %v (%+v), want a ConsentRefusal of %s in %s for %v", what, err, r, e.conn, e.ws, want)
		}
	}
	first := begin()
	refused("another member", first, &upstreamauth.Completer{Subject: "member-b", Workspaces: []string{e.ws}}, upstreamauth.ErrStateForeign)
	refused("no session", first, nil, upstreamauth.ErrNoSession)
	second := begin()
	refused("replaced link, its own caller", first, memberA, upstreamauth.ErrStateReplaced)
	refused("replaced link, another member", first, &upstreamauth.Completer{Subject: "member-b", Workspaces: []string{e.ws}}, upstreamauth.ErrStateReplaced)
	if _, err := svc.Consent(ctx, second, memberA); err != nil {
		t.Errorf("the newest link: %v", err)
	}
	third := begin()
	e.clock.add(upstreamauth.StateTTL + time.Second)
	refused("expired link", third, memberA, upstreamauth.ErrStateExpired)
	refused("expired replaced link", second, memberA, upstreamauth.ErrStateExpired)
	if _, err := svc.Consent(ctx, "made-up", memberA); !errors.Is(err, upstreamauth.ErrStateUnknown) {
		t.Errorf("unknown link: %v", err)
	} else if _, ok := errors.AsType[*upstreamauth.ConsentRefusal](err); ok {
		t.Error("an unknown link names a flow")
	}
}
