package upstreamauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clock is a settable clock for the Service.
type clock struct{ ns atomic.Int64 }

func newClock() *clock               { c := &clock{}; c.ns.Store(time.Now().UnixNano()); return c }
func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }

type env struct {
	up    *testpeer.OAuthUpstream
	svc   *upstreamauth.Service
	store upstreamauth.Store
	clock *clock
	pool  *db.Pool // nil with the memory store
	conn  string   // connection id
	ws    string   // workspace id
	other string   // a second workspace id
}

// newEnv builds a Service against a fresh upstream. With a database (TEST_DATABASE_URL) the
// store is the Postgres DBStore sealed with a key file; otherwise the MemoryStore (unless
// REQUIRE_DB=1, which makes a missing database a failure).
func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{up: testpeer.NewOAuthUpstream(t), clock: newClock(), conn: "00000000-0000-0000-0000-0000000000c1",
		ws: "00000000-0000-0000-0000-0000000000a1", other: "00000000-0000-0000-0000-0000000000a2"}
	if os.Getenv("TEST_DATABASE_URL") != "" || os.Getenv("REQUIRE_DB") == "1" {
		// A pool, not dbtest.Tx: DBStore.WithLock takes its advisory lock in a transaction
		// of its own only over a pool, and the concurrency tests need that lock.
		pool, _ := dbtest.Fresh(t)
		for _, ws := range []string{e.ws, e.other} {
			dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: ws, Name: "ws " + ws[len(ws)-2:]})
		}
		c := dbtest.Connection(t, pool, dbtest.ConnectionOpts{Name: "Protected", URL: e.up.MCPURL(), WorkspaceID: &e.ws})
		e.conn, e.pool = c.ID, pool
		sealer, err := upstreamauth.NewKeyFileSealer(filepath.Join(t.TempDir(), "upstream-auth.key"))
		if err != nil {
			t.Fatal(err)
		}
		e.store = upstreamauth.NewDBStore(pool, sealer)
	} else {
		e.store = &upstreamauth.MemoryStore{}
	}
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	e.svc = upstreamauth.New(upstreamauth.Options{Store: e.store, HTTPClient: guard.HTTPClient(10 * time.Second),
		CheckURL: guard.CheckURL, RedirectURL: "https://gateway.example/api/oauth/callback", Now: e.clock.now})
	return e
}

func (e *env) caller(sub string) upstreamauth.Caller {
	return upstreamauth.Caller{WorkspaceID: e.ws, Subject: sub}
}

// begin starts an authorization for key as caller and returns the authorization URL.
func (e *env) begin(t *testing.T, c upstreamauth.Caller, k upstreamauth.Key) string {
	t.Helper()
	u, err := e.svc.Begin(t.Context(), upstreamauth.BeginRequest{Caller: c, Key: k, ServerURL: e.up.MCPURL()})
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	return u
}

// consent plays the browser of upstream account user: GET the authorization URL and return
// the query the authorization server redirects to the callback with.
func consent(t *testing.T, authURL, user string) url.Values {
	t.Helper()
	loc, err := testpeer.Consent(t.Context(), authURL, user)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(loc.String(), "https://gateway.example/api/oauth/callback?") {
		t.Fatalf("redirected to %s", loc)
	}
	return loc.Query()
}

// authorize runs a whole flow for key as caller c with upstream account user.
func (e *env) authorize(t *testing.T, c upstreamauth.Caller, k upstreamauth.Key, user string) {
	t.Helper()
	if _, err := e.svc.Complete(t.Context(), upstreamauth.CompleterOf(c), consent(t, e.begin(t, c, k), user)); err != nil {
		t.Fatalf("Complete: %v", err)
	}
}

// whoami calls the upstream's whoami tool through the gateway's upstream client with creds.
func whoami(t *testing.T, pool *mcpclient.Pool, id, serverURL string, creds mcpclient.Credentials) (string, error) {
	t.Helper()
	res, err := pool.CallTool(t.Context(), mcpclient.Target{ConnectionID: id, URL: serverURL, Credentials: creds},
		&mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

func newPool(t *testing.T) *mcpclient.Pool {
	p := mcpclient.New(&mcpclient.Options{Guard: urlguard.New(&urlguard.Options{AllowPrivate: true})})
	t.Cleanup(func() { p.Close() })
	return p
}

func TestAuthorizationCodeFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := upstreamauth.Key{ConnectionID: e.conn}
	authURL := e.begin(t, e.caller("admin-1"), k)
	u, _ := url.Parse(authURL)
	q := u.Query()
	for name, want := range map[string]string{"code_challenge_method": "S256", "resource": e.up.MCPURL(),
		"response_type": "code", "redirect_uri": "https://gateway.example/api/oauth/callback", "scope": "tools:read offline_access"} {
		if got := q.Get(name); got != want {
			t.Errorf("authorization URL %s = %q, want %q", name, got, want)
		}
	}
	if len(q.Get("state")) < 20 || q.Get("code_challenge") == "" || q.Get("client_id") == "" {
		t.Errorf("authorization URL lacks state / code_challenge / client_id: %s", authURL)
	}
	res, err := e.svc.Complete(t.Context(), nil, consent(t, authURL, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status.Authorization != upstreamauth.Authorized || res.Status.AuthorizedBy != "admin-1" || res.Key != k {
		t.Errorf("result = %+v", res)
	}
	who, err := whoami(t, newPool(t), e.conn, e.up.MCPURL(), e.svc.Credentials(k))
	if err != nil || who != "alice" {
		t.Fatalf("whoami = %q, %v", who, err)
	}
	st, err := e.svc.Status(t.Context(), k)
	if err != nil || st.Authorization != upstreamauth.Authorized || st.AuthorizedBy != "admin-1" || st.AuthorizedAt == nil {
		t.Errorf("status = %+v, %v", st, err)
	}
	// Re-authorizing reuses the dynamically registered client.
	e.authorize(t, e.caller("admin-1"), k, "alice")
	registrations := 0
	for _, r := range e.up.Requests() {
		if r == "POST /register" {
			registrations++
		}
	}
	if registrations != 1 {
		t.Errorf("%d dynamic registrations for two authorizations of one connection, want 1", registrations)
	}
}

// TestStateRefused: a replayed, expired, foreign-caller or other-workspace state is refused,
// and a refused state is gone (single use) — no token is stored for any of them.
func TestStateRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := upstreamauth.Key{ConnectionID: e.conn}
	admin := e.caller("admin-1")
	tests := []struct {
		name    string
		caller  *upstreamauth.Completer
		before  func()
		replay  bool
		wantErr error
	}{
		{name: "replayed", caller: upstreamauth.CompleterOf(admin), replay: true, wantErr: upstreamauth.ErrStateUnknown},
		{name: "expired", caller: upstreamauth.CompleterOf(admin), before: func() { e.clock.add(upstreamauth.StateTTL + time.Second) }, wantErr: upstreamauth.ErrStateExpired},
		{name: "other caller", caller: &upstreamauth.Completer{Workspaces: []string{e.ws}, Subject: "mallory"}, wantErr: upstreamauth.ErrStateForeign},
		{name: "other workspace", caller: &upstreamauth.Completer{Workspaces: []string{e.other}, Subject: "admin-1"}, wantErr: upstreamauth.ErrStateForeign},
		{name: "made up", caller: upstreamauth.CompleterOf(admin), wantErr: upstreamauth.ErrStateUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := consent(t, e.begin(t, admin, k), "alice")
			if tt.name == "made up" {
				q.Set("state", "x"+q.Get("state"))
			}
			if tt.replay {
				if _, err := e.svc.Complete(t.Context(), tt.caller, q); err != nil {
					t.Fatal(err)
				}
				if err := deleteGrants(t, e); err != nil {
					t.Fatal(err)
				}
			}
			if tt.before != nil {
				tt.before()
			}
			_, err := e.svc.Complete(t.Context(), tt.caller, q)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Complete = %v, want %v", err, tt.wantErr)
			}
			if o := upstreamauth.OutcomeOf(nil, err); o.Status == upstreamauth.OutcomeAuthorized || o.Reason == "" {
				t.Errorf("outcome = %+v", o)
			}
			if _, err := e.store.GrantGet(t.Context(), k); !errors.Is(err, upstreamauth.ErrNoGrant) {
				t.Errorf("a grant was stored: %v", err)
			}
			// single use: the right caller cannot use it afterwards either
			if _, err := e.svc.Complete(t.Context(), upstreamauth.CompleterOf(admin), q); !errors.Is(err, upstreamauth.ErrStateUnknown) {
				t.Errorf("second Complete = %v, want ErrStateUnknown", err)
			}
		})
	}
}

func deleteGrants(t *testing.T, e *env) error {
	_, err := e.store.GrantDelete(t.Context(), e.conn)
	return err
}

// TestRefresh: a token about to expire is refreshed before use; a 401 refreshes once and the
// call goes through; concurrent refreshes of one grant are one request to the token endpoint.
func TestRefresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := upstreamauth.Key{ConnectionID: e.conn}
	e.authorize(t, e.caller("admin-1"), k, "alice")
	creds := e.svc.Credentials(k)
	first, err := creds.Token(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("before expiry", func(t *testing.T) {
		e.clock.add(time.Hour - 30*time.Second) // within RefreshSkew of the 1 h expiry
		var wg sync.WaitGroup
		toks := make([]string, 8)
		for i := range toks {
			wg.Add(1)
			go func() { defer wg.Done(); toks[i], _ = creds.Token(context.Background()) }()
		}
		wg.Wait()
		refreshes, _, _ := e.up.Counts()
		if refreshes != 1 {
			t.Errorf("token endpoint saw %d refreshes for 8 concurrent callers, want 1", refreshes)
		}
		for _, tok := range toks {
			if tok == "" || tok == first || tok != toks[0] {
				t.Fatalf("tokens after refresh: %q (first %q)", toks, first)
			}
		}
	})

	t.Run("on 401", func(t *testing.T) {
		pool := newPool(t)
		if who, err := whoami(t, pool, e.conn, e.up.MCPURL(), creds); err != nil || who != "alice" {
			t.Fatalf("whoami = %q, %v", who, err)
		}
		before, _, _ := e.up.Counts()
		e.up.ExpireAll() // the server stops accepting the current token; our clock does not know
		if who, err := whoami(t, pool, e.conn, e.up.MCPURL(), creds); err != nil || who != "alice" {
			t.Fatalf("whoami after the server expired the token = %q, %v", who, err)
		}
		if after, _, _ := e.up.Counts(); after != before+1 {
			t.Errorf("refreshes %d → %d, want one more", before, after)
		}
	})

	t.Run("refused refresh needs authorization", func(t *testing.T) {
		e.up.SetRefuseRefresh(true)
		e.up.ExpireAll()
		_, _, callsBefore := e.up.Counts()
		pool := newPool(t)
		if _, err := whoami(t, pool, e.conn, e.up.MCPURL(), creds); err == nil {
			t.Fatal("call succeeded with a refused refresh")
		}
		st, _ := e.svc.Status(t.Context(), k)
		if st.Authorization != upstreamauth.Expired || !strings.Contains(st.Reason, "invalid_grant") {
			t.Errorf("status = %+v", st)
		}
		if _, err := creds.Token(t.Context()); !errors.Is(err, upstreamauth.ErrAuthorizationRequired) {
			t.Errorf("Token = %v, want ErrAuthorizationRequired", err)
		}
		// nothing more reaches the tool: the next call is not even sent
		if _, err := whoami(t, pool, e.conn, e.up.MCPURL(), creds); !errors.Is(err, upstreamauth.ErrAuthorizationRequired) {
			t.Logf("call error: %v", err)
		}
		if _, _, calls := e.up.Counts(); calls["alice"] != callsBefore["alice"] {
			t.Errorf("the tool ran %d more times", calls["alice"]-callsBefore["alice"])
		}
	})
}

// TestPerUser: in oauth_per_user each caller's grant is their own upstream account, and one
// caller's credentials never carry another's token.
func TestPerUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pool := newPool(t)
	for _, u := range []struct{ sub, account string }{{"member-1", "alice"}, {"member-2", "bob"}} {
		k := upstreamauth.Key{ConnectionID: e.conn, Subject: u.sub}
		e.authorize(t, e.caller(u.sub), k, u.account)
	}
	for _, u := range []struct{ sub, account string }{{"member-1", "alice"}, {"member-2", "bob"}} {
		k := upstreamauth.Key{ConnectionID: e.conn, Subject: u.sub}
		// one session per user (the session key includes the subject)
		who, err := whoami(t, pool, e.conn+"|"+u.sub, e.up.MCPURL(), e.svc.Credentials(k))
		if err != nil || who != u.account {
			t.Errorf("%s reached the upstream as %q (%v), want %q", u.sub, who, err, u.account)
		}
	}
	k3 := upstreamauth.Key{ConnectionID: e.conn, Subject: "member-3"}
	if _, err := e.svc.Credentials(k3).Token(t.Context()); !errors.Is(err, upstreamauth.ErrAuthorizationRequired) {
		t.Errorf("a member without a grant got a token: %v", err)
	}
	// a per-user state cannot be completed by another member
	q := consent(t, e.begin(t, e.caller("member-3"), k3), "carol")
	if _, err := e.svc.Complete(t.Context(), upstreamauth.CompleterOf(e.caller("member-1")), q); !errors.Is(err, upstreamauth.ErrStateForeign) {
		t.Errorf("member-1 completed member-3's authorization: %v", err)
	}
}

// TestRevoke: uninstall revokes (RFC 7009) and deletes every grant of the connection.
func TestRevoke(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, sub := range []string{"", "member-1"} {
		e.authorize(t, e.caller("admin-1"), upstreamauth.Key{ConnectionID: e.conn, Subject: sub}, "alice")
	}
	if err := e.svc.Revoke(t.Context(), e.conn); err != nil {
		t.Fatal(err)
	}
	_, revoked, _ := e.up.Counts()
	if len(revoked) != 4 { // refresh + access token of both grants
		t.Errorf("revocation endpoint got %d tokens, want 4", len(revoked))
	}
	for _, sub := range []string{"", "member-1"} {
		if _, err := e.store.GrantGet(t.Context(), upstreamauth.Key{ConnectionID: e.conn, Subject: sub}); !errors.Is(err, upstreamauth.ErrNoGrant) {
			t.Errorf("grant %q still stored: %v", sub, err)
		}
	}
	if e.pool != nil {
		var n int
		_ = e.pool.QueryRow(t.Context(), `SELECT count(*) FROM mcp_oauth_grants`).Scan(&n)
		if n != 0 {
			t.Errorf("%d grant rows left", n)
		}
	}
}

// TestStoredSecretsSealed: the grant and pending rows never hold a token, a state or a
// verifier in clear.
func TestStoredSecretsSealed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if e.pool == nil {
		t.Skip("needs the database (TEST_DATABASE_URL)")
	}
	k := upstreamauth.Key{ConnectionID: e.conn}
	authURL := e.begin(t, e.caller("admin-1"), k)
	u, _ := url.Parse(authURL)
	state := u.Query().Get("state")
	var pendingRow []byte
	if err := e.pool.QueryRow(t.Context(), `SELECT convert_to(row_to_json(p)::text, 'UTF8') FROM mcp_oauth_pending p`).Scan(&pendingRow); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(pendingRow, []byte(state)) {
		t.Error("the pending row holds the state in clear")
	}
	if _, err := e.svc.Complete(t.Context(), nil, consent(t, authURL, "alice")); err != nil {
		t.Fatal(err)
	}
	g, err := e.store.GrantGet(t.Context(), k)
	if err != nil || g.AccessToken == "" || g.RefreshToken == "" {
		t.Fatalf("grant: %+v %v", g, err)
	}
	var sealed, whole []byte
	if err := e.pool.QueryRow(t.Context(), `SELECT grant_sealed, convert_to(row_to_json(g)::text, 'UTF8') FROM mcp_oauth_grants g`).Scan(&sealed, &whole); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{g.AccessToken, g.RefreshToken, g.Endpoint.ClientSecret} {
		if bytes.Contains(sealed, []byte(secret)) || bytes.Contains(whole, []byte(secret)) {
			t.Errorf("the grant row holds a secret in clear")
		}
	}
	// The sealed grant is bound to its row: moved to another subject it does not open.
	if _, err := e.pool.Exec(t.Context(), `INSERT INTO mcp_oauth_grants (connection_id, subject, grant_sealed, authorized_by, authorized_at)
		SELECT connection_id, 'mallory', grant_sealed, authorized_by, authorized_at FROM mcp_oauth_grants`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.GrantGet(t.Context(), upstreamauth.Key{ConnectionID: e.conn, Subject: "mallory"}); !errors.Is(err, upstreamauth.ErrSealed) {
		t.Errorf("a grant copied to another row opened: %v", err)
	}
}

// TestGuardRefusesPrivateAuthorizationServers: in deployed mode the URL guard applies to every
// URL of the flow — an authorization server (or its endpoints) on a private, link-local or
// metadata address is refused before anything is fetched from it.
func TestGuardRefusesPrivateAuthorizationServers(t *testing.T) {
	t.Parallel()
	strict := urlguard.New(&urlguard.Options{RequireHTTPS: true})
	for _, tt := range []struct{ name, as string }{
		{"metadata address", "https://169.254.169.254"},
		{"private address", "https://10.0.0.7"},
		{"loopback", "https://127.0.0.1:8443"},
		{"plain http", "http://auth.example.com"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			mux := http.NewServeMux()
			var base string
			mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
					writeTestJSON(w, 200, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{tt.as}})
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(401)
			})
			srv := newLoopback(t, mux)
			base = srv
			// The resource itself is the test's loopback server (allowed by name for the test);
			// every other URL goes through the deployed-mode guard.
			check := func(raw string) error {
				if strings.HasPrefix(raw, base) {
					return nil
				}
				return strict.CheckURL(raw)
			}
			svc := upstreamauth.New(upstreamauth.Options{Store: &upstreamauth.MemoryStore{}, CheckURL: check,
				RedirectURL: "https://gateway.example/api/oauth/callback"})
			_, err := svc.Begin(t.Context(), upstreamauth.BeginRequest{Key: upstreamauth.Key{ConnectionID: "c"}, ServerURL: base + "/mcp"})
			var fe *upstreamauth.FlowError
			if !errors.As(err, &fe) || fe.Step != "discovery" || !strings.Contains(fe.Reason, "authorization server URL refused") {
				t.Fatalf("Begin = %v", err)
			}
			if n := hits.Load(); n != 2 { // the probe and the resource metadata, nothing else
				t.Errorf("loopback server got %d requests, want 2", n)
			}
		})
	}
}

func newLoopback(t *testing.T, h http.Handler) string {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}

// TestResourceMismatchRefused: metadata naming another resource stops the flow (RFC 9728 §3.3).
func TestResourceMismatchRefused(t *testing.T) {
	t.Parallel()
	var base string
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			writeTestJSON(w, 200, map[string]any{"resource": "https://evil.example/mcp", "authorization_servers": []string{base}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(401)
	})
	base = newLoopback(t, mux)
	svc := upstreamauth.New(upstreamauth.Options{Store: &upstreamauth.MemoryStore{}, RedirectURL: "https://gw.example/cb"})
	_, err := svc.Begin(t.Context(), upstreamauth.BeginRequest{Key: upstreamauth.Key{ConnectionID: "c"}, ServerURL: base + "/mcp"})
	if !errors.Is(err, upstreamauth.ErrResourceMismatch) {
		t.Fatalf("Begin = %v, want ErrResourceMismatch", err)
	}
}

func writeTestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// TestPendingSweep: starting an authorization sweeps the states that expired.
func TestPendingSweep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if e.pool == nil {
		t.Skip("needs the database (TEST_DATABASE_URL)")
	}
	old := &upstreamauth.Pending{State: "old-state", Caller: e.caller("a"), Key: upstreamauth.Key{ConnectionID: e.conn},
		ExpiresAt: time.Now().Add(-time.Minute)}
	if err := e.store.PendingPut(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	e.begin(t, e.caller("a"), upstreamauth.Key{ConnectionID: e.conn})
	var n int
	if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM mcp_oauth_pending`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d pending rows (%v), want 1 (the expired one swept)", n, err)
	}
	if _, err := e.store.PendingTake(t.Context(), "old-state"); !errors.Is(err, upstreamauth.ErrStateUnknown) {
		t.Errorf("expired state still stored: %v", err)
	}
}

// TestRefreshAcrossProcesses: two Services over one store (two Lambda environments) refresh
// the same grant at once; with refresh token rotation one of the two refresh requests is
// refused, and that process must take the grant the other stored instead of declaring the
// grant expired.
func TestRefreshAcrossProcesses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := upstreamauth.Key{ConnectionID: e.conn}
	e.authorize(t, e.caller("admin-1"), k, "alice")
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	other := upstreamauth.New(upstreamauth.Options{Store: e.store, HTTPClient: guard.HTTPClient(10 * time.Second),
		CheckURL: guard.CheckURL, RedirectURL: "https://gateway.example/api/oauth/callback", Now: e.clock.now})
	for round := 0; round < 5; round++ {
		e.clock.add(time.Hour) // past expiry: both must refresh
		var wg sync.WaitGroup
		var toks [2]string
		var errs [2]error
		for i, svc := range []*upstreamauth.Service{e.svc, other} {
			wg.Add(1)
			go func() { defer wg.Done(); toks[i], errs[i] = svc.Credentials(k).Token(context.Background()) }()
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil || toks[0] == "" || toks[1] == "" {
			t.Fatalf("round %d: %v %v", round, errs[0], errs[1])
		}
		if st, _ := e.svc.Status(t.Context(), k); st.Authorization != upstreamauth.Authorized {
			t.Fatalf("round %d: status %+v", round, st)
		}
	}
}
