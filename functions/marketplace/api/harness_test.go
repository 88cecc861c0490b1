package api_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/api"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/services"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// world is a running stack with two workspaces and the usual principals.
type world struct {
	env                         *stacktest.Env
	wsA, wsB                    string
	projA                       string
	adminA, memberA, adminB, su string
}

func newWorld(t *testing.T, o *stacktest.Options) *world {
	t.Helper()
	env := stacktest.New(t, o)
	w := &world{env: env}
	w.wsA, w.projA, _ = env.Workspace(t, "A")
	w.wsB, _, _ = env.Workspace(t, "B")
	w.adminA = stacktest.Token(t, "alice", auth.RoleAdmin, w.wsA)
	w.memberA = stacktest.Token(t, "mallory", auth.RoleMember, w.wsA)
	w.adminB = stacktest.Token(t, "bob", auth.RoleAdmin, w.wsB)
	w.su = stacktest.Token(t, "root", auth.RoleSuperuser)
	return w
}

// do sends a REST call and returns status and decoded body (nil for an empty body).
func (w *world) do(t *testing.T, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	status, raw := w.env.Do(t, method, path, token, body)
	return status, decode(t, raw)
}

// doAt sends a REST call to another server (base URL).
func doAt(t *testing.T, base, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	status, raw := stacktest.DoAt(t, base, method, path, token, body)
	return status, decode(t, raw)
}

func decode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %s", err, raw)
	}
	return m
}

// want fails t unless status is code; it prints the body.
func want(t *testing.T, what string, status, code int, body map[string]any) {
	t.Helper()
	if status != code {
		t.Fatalf("%s: status %d, want %d: %v", what, status, code, body)
	}
}

// errCode returns the error code of an error body.
func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func errMessage(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// entry creates a catalog entry at url (superuser) and returns its id.
func (w *world) entry(t *testing.T, name, url, transport string) string {
	t.Helper()
	st, b := w.do(t, "POST", "/api/mcp-marketplace", w.su, map[string]any{
		"name": name, "url": url, "transportType": transport, "category": "testing",
		"headers": map[string]string{"Authorization": "Bearer {{TOKEN}}"},
	})
	want(t, "create entry", st, http.StatusCreated, b)
	return b["id"].(string)
}

// install installs entry into ws as token and returns the answer.
func (w *world) install(t *testing.T, entry, ws, token string, extra map[string]any) (int, map[string]any) {
	t.Helper()
	body := map[string]any{"workspaceId": ws}
	for k, v := range extra {
		body[k] = v
	}
	return w.do(t, "POST", "/api/mcp-marketplace/"+entry+"/install", token, body)
}

// connection creates a manual connection in ws (admin A) and returns id and handle.
func (w *world) connection(t *testing.T, name, url, ws string, hdr map[string]string) (id, handle string) {
	t.Helper()
	st, b := w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{
		"name": name, "url": url, "workspaceId": ws, "headers": hdr})
	want(t, "create connection", st, http.StatusCreated, b)
	if c := b["connect"].(map[string]any); c["success"] != true {
		t.Fatalf("create connection: connect failed: %v", c)
	}
	return b["id"].(string), b["handle"].(string)
}

// count returns a row count.
func (w *world) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := w.env.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("count %q: %v", sql, err)
	}
	return n
}

// events returns the actions logged for entity id, oldest first.
func (w *world) events(t *testing.T, entity string) []string {
	t.Helper()
	rows, err := w.env.Pool.Query(context.Background(), `SELECT action FROM event_log WHERE entity_id = $1 ORDER BY id`, entity)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		_ = rows.Scan(&a)
		out = append(out, a)
	}
	return out
}

// gatewayTools lists the tools the gateway serves to token in ws.
func (w *world) gatewayTools(t *testing.T, ws, token string) []string {
	t.Helper()
	s := w.env.MCP(t, "/mcp/"+ws, token, "", nil)
	var names []string
	for tool, err := range s.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// gatewayTool returns the tool exposed as name in ws, or nil.
func (w *world) gatewayTool(t *testing.T, ws, token, name string) *mcp.Tool {
	t.Helper()
	s := w.env.MCP(t, "/mcp/"+ws, token, "", nil)
	for tool, err := range s.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if tool.Name == name {
			return tool
		}
	}
	return nil
}

func proxied(names []string, handle string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, "mcp_"+handle+"_") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// fakeResolver answers LookupNetIP from a fixed table, else from the system resolver
// (write-time DNS in deployed mode).
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}

// strict serves the marketplace API in deployed mode (https only, no private targets)
// over w's database and store, with names resolved by res. It returns the base URL.
func (w *world) strict(t *testing.T, res connections.Resolver) string {
	t.Helper()
	return w.strictWith(t, res, urlguard.New(&urlguard.Options{RequireHTTPS: true}))
}

// strictWith is strict with the given guard (e.g. one whose dialer resolves through a test
// DNS server).
func (w *world) strictWith(t *testing.T, res connections.Resolver, guard *urlguard.Guard) string {
	t.Helper()
	up := mcpclient.New(&mcpclient.Options{Guard: guard, ConnectTimeout: 2 * time.Second})
	svc := &connections.Service{Pool: w.env.Pool, Store: w.env.Deps.Store, Upstreams: up, Guard: guard, Resolver: res}
	a := &api.API{Pool: w.env.Pool, Services: services.NewServices(w.env.Pool, svc, guard, nil), Verifier: w.env.Deps.Verifier}
	srv := httptest.NewServer(stacktest.CheckOpenAPI(t, a.Handler()))
	t.Cleanup(func() { srv.Close(); _ = up.Close() })
	return srv.URL
}

// fixture starts the demo upstream.
func fixture(t *testing.T) *testpeer.Fixture {
	return testpeer.NewFixture(t, nil)
}
