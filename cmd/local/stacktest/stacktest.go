// Package stacktest runs the whole local stack (every function's handler on one
// loopback port, as cmd/local serves it) against a fresh real Postgres for end-to-end
// tests, with helpers for tokens, workspaces, REST calls and MCP clients.
package stacktest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stack"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/config"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/deps"
	"github.com/agentpack/gateway/shared/lambdaapp"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/services"
	"github.com/agentpack/gateway/shared/signing"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Secret is the HS256 secret of every test stack.
const Secret = "stacktest-secret"

// Env is a running stack.
type Env struct {
	Pool *db.Pool
	// DatabaseURL is the fresh database's URL (Instance opens its own pool on it).
	DatabaseURL string
	Deps        *deps.Deps
	Stack       *stack.Stack
	URL         string // http://127.0.0.1:PORT
	Logs        *Buffer
	Metrics     *Buffer
	Server      *httptest.Server
}

// Options tweak New (nil = defaults).
type Options struct {
	Store   catalog.Store // default: a disk store in t.TempDir()
	Stack   *stack.Options
	Catalog time.Duration // CATALOG_TTL, default 0 (revalidate every request)
	// DatabaseVia, when set, is given the fresh (migrated) database's URL and returns the
	// URL the stack uses instead: a pooler or a wire inspector in front of it
	// (testpeer.PgBouncer, testpeer.NewPgWire). Migrations have gone to the database
	// directly, as DATABASE_MIGRATE_URL does; the seed and everything after go through it.
	DatabaseVia func(t testing.TB, direct string) string
}

// Buffer is a goroutine-safe bytes.Buffer (logs, metrics).
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// New starts a stack on a fresh database with the curated catalog seeded.
func New(t testing.TB, o *Options) *Env {
	t.Helper()
	if o == nil {
		o = &Options{}
	}
	pool, url := dbtest.Fresh(t)
	ctx := context.Background()
	if o.DatabaseVia != nil {
		url = o.DatabaseVia(t, url)
		var err error
		if pool, err = db.Open(ctx, url, 8); err != nil {
			t.Fatalf("stacktest: pool through DatabaseVia: %v", err)
		}
		t.Cleanup(pool.Close)
	}
	if err := seed.Load(ctx, pool); err != nil {
		t.Fatalf("stacktest: seed: %v", err)
	}
	e := &Env{Pool: pool, DatabaseURL: url, Logs: &Buffer{}, Metrics: &Buffer{}}
	cfg := &config.Config{Env: "local", DatabaseURL: url, JWTSecret: Secret, CatalogTTL: o.Catalog,
		AllowPrivateUpstreams: true, LogLevel: "debug"}
	store := o.Store
	if store == nil {
		store = &catalog.DiskStore{Dir: t.TempDir()}
	}
	logger := logx.New(e.Logs, "debug")
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	up := mcpclient.New(&mcpclient.Options{Logger: logger, Guard: guard})
	so := o.Stack
	if so == nil {
		so = &stack.Options{}
	}
	vo := auth.Options{Secret: Secret}
	var key *signing.Key
	if so.Identity != nil {
		// The authorization server's key, as `make run` keeps it (a key file).
		var err error
		if key, err = signing.LoadFile(filepath.Join(t.TempDir(), "auth-signing.key")); err != nil {
			t.Fatal(err)
		}
		vo.Issued = &auth.IssuedKey{KeyID: key.ID(), Key: key.Public()}
	}
	v, err := auth.NewVerifier(ctx, vo)
	if err != nil {
		t.Fatal(err)
	}
	e.Deps = &deps.Deps{Config: cfg, Logger: logger, Pool: pool, Store: store, Guard: guard, Upstreams: up, Verifier: v,
		Services: services.NewServices(pool, &connections.Service{Pool: pool, Store: store, Upstreams: up, Guard: guard, Logger: logger},
			guard, logger),
		SigningKey: key}
	e.Deps.Grants.Key = key // as deps.Build does: MCP access tokens are signed with it
	if so.Metrics == nil {
		so.Metrics = e.Metrics
	}
	if e.Stack, err = stack.New(ctx, e.Deps, so); err != nil {
		t.Fatal(err)
	}
	// As in Lambda (lambdaapp.Start): ids, one access line per request, trace spans.
	// Every REST response is checked against the OpenAPI document (openapi.go): a
	// response the document does not describe fails the test that caused it.
	e.Server = httptest.NewServer(CheckOpenAPI(t, lambdaapp.Wrap(e.Stack.Handler, logger)))
	e.URL = e.Server.URL
	// Upstream authorization: its redirect URI is this server's callback, so it is wired
	// once the port is known (the handlers read Connections.Auth per request).
	sealer, err := upstreamauth.NewKeyFileSealer(filepath.Join(t.TempDir(), "upstream-auth.key"))
	if err != nil {
		t.Fatal(err)
	}
	authStore := upstreamauth.NewDBStore(pool, sealer)
	e.Deps.Auth = upstreamauth.New(upstreamauth.Options{Store: authStore,
		HTTPClient: guard.HTTPClient(15 * time.Second), CheckURL: guard.CheckURL,
		RedirectURL: e.URL + deps.CallbackPath, ConsentURL: e.URL + deps.ConsentPagePath, Logger: logger})
	e.Deps.Connections.Auth = e.Deps.Auth
	e.Deps.Connections.AuthClients, e.Deps.Connections.AuthClientPut = authStore.ClientGet, authStore.ClientPut
	t.Cleanup(func() {
		e.Server.Close()
		_ = up.Close()
	})
	return e
}

// Instance starts another instance of the stack over the same database and catalog store,
// as a second Lambda execution environment would be: its own pool (two connections), its
// own upstream client pool, caches and handler on its own loopback port. It returns the
// instance's base URL; it is stopped at cleanup. Metrics go to metrics (nil: discarded).
func (e *Env) Instance(t testing.TB, metrics io.Writer) string {
	t.Helper()
	ctx := context.Background()
	pool, err := db.Open(ctx, e.DatabaseURL, 2)
	if err != nil {
		t.Fatalf("stacktest: instance pool: %v", err)
	}
	logger := e.Deps.Logger
	up := mcpclient.New(&mcpclient.Options{Logger: logger, Guard: e.Deps.Guard})
	d := &deps.Deps{Config: e.Deps.Config, Logger: logger, Pool: pool, Store: e.Deps.Store, Guard: e.Deps.Guard,
		Upstreams: up, Verifier: e.Deps.Verifier,
		Services: services.NewServices(pool, &connections.Service{Pool: pool, Store: e.Deps.Store, Upstreams: up,
			Guard: e.Deps.Guard, Logger: logger}, e.Deps.Guard, logger)}
	st, err := stack.New(ctx, d, &stack.Options{Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(lambdaapp.Wrap(st.Handler, logger))
	t.Cleanup(func() {
		srv.Close()
		_ = up.Close()
		pool.Close()
	})
	return srv.URL
}

// FlushAudit waits until the stack's gateway has committed every audit row it queued (they
// are written after the answer: docs/DESIGN.md "The audit row after the answer"); tests
// call it before reading audit_events.
func (e *Env) FlushAudit(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.Stack.Gateway.FlushAudit(ctx); err != nil {
		t.Fatalf("stacktest: audit rows not flushed: %v", err)
	}
}

// Workspace creates a workspace with a default project and a chat and returns its id.
func (e *Env) Workspace(t testing.TB, name string) (ws, project, chat string) {
	t.Helper()
	ctx := context.Background()
	ws, project, chat = uuid.NewString(), uuid.NewString(), uuid.NewString()
	err := db.WorkspaceUpsert(ctx, e.Pool, ws, name)
	if err == nil {
		err = db.ProjectEnsure(ctx, e.Pool, project, ws, "default")
	}
	if err == nil {
		err = db.WorkspaceSetDefaultProject(ctx, e.Pool, ws, project)
	}
	if err == nil {
		err = db.ChatEnsure(ctx, e.Pool, chat, ws, "chat")
	}
	if err != nil {
		t.Fatalf("stacktest: workspace: %v", err)
	}
	return ws, project, chat
}

// Connection creates a connection as p through the stack's connection service, the way
// POST /api/mcp-connections does without the REST layer: for tests whose subject is the
// gateway, not the REST API. The upstream is listed and the catalog published before it
// returns (the gateway's cache is invalidated); a refused create fails t. in.WorkspaceID
// nil is a global connection (p must be a superuser).
func (e *Env) Connection(t testing.TB, p *auth.Principal, in connections.CreateInput) *connections.Outcome {
	t.Helper()
	out, err := e.Deps.Connections.Create(context.Background(), p, in)
	if err != nil {
		t.Fatalf("stacktest: create connection %q: %v", in.Name, err)
	}
	return out
}

// Admin is an admin of workspaces named subject (the principal Token mints for the same
// arguments).
func Admin(subject string, workspaces ...string) *auth.Principal {
	return &auth.Principal{Subject: subject, Role: auth.RoleAdmin, Workspaces: workspaces}
}

// Token mints a token for subject with role in workspaces.
func Token(t testing.TB, subject, role string, workspaces ...string) string {
	t.Helper()
	tok, err := auth.Mint(Secret, auth.Principal{Subject: subject, Role: role, Workspaces: workspaces}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Do sends a REST request to the stack (body marshalled as JSON unless it is a string)
// and returns the status and body.
func (e *Env) Do(t testing.TB, method, path, token string, body any) (int, []byte) {
	t.Helper()
	return DoAt(t, e.URL, method, path, token, body)
}

// DoAt is Do against any server base URL (e.g. a second stack in deployed mode).
func DoAt(t testing.TB, base, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, base+path, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("stacktest: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// RPC posts one raw JSON-RPC body to path (an MCP endpoint) and returns the response.
func (e *Env) RPC(t testing.TB, path, token, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("stacktest: rpc: %v", err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

// headerRT adds fixed headers to every request.
type headerRT struct {
	h    map[string]string
	base http.RoundTripper
}

func (rt headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range rt.h {
		r.Header.Set(k, v)
	}
	return rt.base.RoundTrip(r)
}

// MCP connects go-sdk's client to the MCP endpoint path with token (and extra headers),
// offering protocolVersion ("" = the SDK's newest). The session is closed at cleanup.
func (e *Env) MCP(t testing.TB, path, token, protocolVersion string, hdr map[string]string) *mcp.ClientSession {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + token}
	for k, v := range hdr {
		h[k] = v
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "stacktest", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: e.URL + path, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: headerRT{h: h, base: http.DefaultTransport}}}
	var opts *mcp.ClientSessionOptions
	if protocolVersion != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, tr, opts)
	if err != nil {
		t.Fatalf("stacktest: mcp connect %s: %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
