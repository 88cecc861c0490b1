package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/testpeer"
)

// churnEnv is a workspace with one real connection (the demo upstream's echo) whose
// catalog document the test rewrites, each time with `extra` synthetic tools beside it.
type churnEnv struct {
	*benchEnv
	ws    string
	base  catalog.Document // the document the install wrote
	list  request
	call  request
	extra int
}

func newChurnEnv(t testing.TB, extra int) *churnEnv {
	t.Helper()
	e := newBenchEnv(t)
	ws, token := e.workspace(t, auth.RoleAdmin)
	up := testpeer.NewFixture(t, nil)
	svc := &connections.Service{Pool: e.pool, Store: e.store, Upstreams: e.up, Guard: e.guard}
	out, err := svc.Create(context.Background(), &auth.Principal{Subject: "bench", Role: auth.RoleAdmin, Workspaces: []string{ws}},
		connections.CreateInput{Name: "Echo", URL: up.URL, WorkspaceID: &ws})
	if err != nil || out.Connect == nil || !out.Connect.OK {
		t.Fatalf("create: %v %+v", err, out)
	}
	doc, _, err := catalog.ReadDocument(context.Background(), e.store, ws)
	if err != nil {
		t.Fatal(err)
	}
	return &churnEnv{benchEnv: e, ws: ws, base: *doc, extra: extra,
		list: request{path: "/mcp/" + ws, token: token, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		call: request{path: "/mcp/" + ws, token: token,
			body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp_` + out.Connection.Handle + `_echo","arguments":{"message":"hello"}}}`}}
}

// change writes a new version of the workspace's document (same content, a new
// generation time: a new ETag, as every install, refresh or toggle makes) and serves one
// tools/list and one proxied call against it.
func (c *churnEnv) change(t testing.TB, round int) {
	t.Helper()
	var synth catalog.Document
	if err := json.Unmarshal(syntheticDoc(c.ws, c.extra), &synth); err != nil {
		t.Fatal(err)
	}
	doc := c.base
	doc.GeneratedAt = time.Unix(int64(round), 0).UTC()
	doc.Connections = append(append([]catalog.Connection(nil), c.base.Connections...), synth.Connections...)
	b, _ := json.Marshal(doc)
	if _, err := putDoc(c.store, b); err != nil {
		t.Fatal(err)
	}
	c.cache.Invalidate(c.ws)
	c.list.check(t, c.handler)
	c.call.check(t, c.handler)
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestCatalogChurnRetention: a process that sees its workspace's catalog change many times
// (one install after another) keeps the items of the current document only — the server
// cache holds one item for the workspace, and the live heap after 60 more changes is about
// what it was after the first few, instead of one document, tool table and tools/list
// answer more per change (issue 23).
func TestCatalogChurnRetention(t *testing.T) {
	c := newChurnEnv(t, 1000)
	for round := range 5 {
		c.change(t, round)
	}
	before := liveHeap()
	for round := 5; round < 65; round++ {
		c.change(t, round)
	}
	after := liveHeap()
	if n := cachedServers(t, c.benchEnv); n != 1 {
		t.Errorf("server cache holds %d items after 65 catalog changes of one workspace, want 1 (the current document's)", n)
	}
	// One retained change is ≥ 1 MB at 1,000 tools (the parsed document, the tools/list
	// page, the tool table); 8 MiB allows for the runtime's own noise.
	grew := int64(after) - int64(before)
	t.Logf("live heap %d → %d bytes (%+d) over 60 catalog changes", before, after, grew)
	if grew > 8<<20 {
		t.Errorf("live heap grew by %d bytes over 60 catalog changes of an unchanged size: something keeps superseded documents", grew)
	}
}

func cachedServers(t testing.TB, e *benchEnv) int {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/health", nil)
	w := httptest.NewRecorder()
	e.handler.ServeHTTP(w, r)
	var h struct {
		CachedServers int `json:"cachedServers"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &h); err != nil {
		t.Fatalf("health: %v %s", err, w.Body)
	}
	return h.CachedServers
}
