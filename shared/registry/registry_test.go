package registry_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/registry"
	"github.com/agentpack/gateway/shared/urlguard"
)

// stub is a loopback registry serving documents through GET /v0.1/servers with cursor
// pagination (at most 4 per page, whatever limit asks: the import must follow cursors).
type stub struct {
	mu    sync.Mutex
	docs  []json.RawMessage
	pages int
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v0.1/servers" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages++
	start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	n, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	n = min(max(n, 1), 4)
	end := min(start+n, len(s.docs))
	out := map[string]any{"servers": s.docs[start:end], "metadata": map[string]any{"count": end - start}}
	if end < len(s.docs) {
		out["metadata"].(map[string]any)["nextCursor"] = strconv.Itoa(end)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func load(t *testing.T, file string) []json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Servers []json.RawMessage }
	if json.Unmarshal(raw, &list) == nil && list.Servers != nil {
		return list.Servers
	}
	var docs []json.RawMessage
	if err := json.Unmarshal(raw, &docs); err != nil {
		t.Fatal(err)
	}
	return docs
}

// snapshot is every registry entry's content, by registry name and remote.
func snapshot(t *testing.T, pool *db.Pool) map[string]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT registry_name || '#' || registry_remote,
		row_to_json(e)::text FROM mcp_catalog_entries e WHERE source = 'registry'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		_ = rows.Scan(&k, &v)
		out[k] = v
	}
	return out
}

var su = &auth.Principal{Subject: "root", Role: auth.RoleSuperuser}

// TestImportFromRegistry (issue 24 item 3): the fixture (23 documents) and 10 hostile ones
// through the v0.1 list API: each remote of each latest version is an entry, unverified;
// package-only servers and older versions are skipped; every hostile document is refused
// with its index and the rest imported; a second import changes nothing; a version bump
// updates the entry in place; deprecated and deleted keep their status (deleted: not
// listed).
func TestImportFromRegistry(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	good, hostile := load(t, "servers.json"), load(t, "hostile.json")
	st := &stub{docs: append(append([]json.RawMessage{}, good...), hostile...)}
	srv := httptest.NewServer(st)
	defer srv.Close()
	im := &registry.Importer{Pool: pool, HTTPClient: urlguard.New(&urlguard.Options{AllowPrivate: true}).HTTPClient(0)}

	rep, err := im.FromURL(t.Context(), su, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Documents != 33 || st.pages != 9 {
		t.Errorf("documents %d over %d pages", rep.Documents, st.pages)
	}
	// 17 servers with remotes (one of them twice), 4 with two remotes: 21 entries.
	if rep.Created != 21 || rep.Updated != 0 || rep.Unchanged != 0 {
		t.Errorf("created %d updated %d unchanged %d: %+v", rep.Created, rep.Updated, rep.Unchanged, rep.Refused)
	}
	refused := map[int]string{}
	for _, p := range rep.Refused {
		refused[p.Index] = p.Reason
	}
	for i := range hostile {
		if refused[len(good)+i] == "" {
			t.Errorf("hostile document %d was not refused", i)
		}
	}
	if len(rep.Refused) != len(hostile) {
		t.Errorf("refused %d: %+v", len(rep.Refused), rep.Refused)
	}
	for _, want := range []struct {
		i    int
		text string
	}{{0, "bytes, at most"}, {1, "malformed"}, {2, "malformed"}, {3, "scheme"}, {4, "blocked address"}, {5, "blocked address"},
		{6, "https"}, {7, "not a declared variable"}, {8, "status"}, {9, "declared headers"}} {
		if r := refused[len(good)+want.i]; !strings.Contains(r, want.text) {
			t.Errorf("hostile %d: reason %q, want %q", want.i, r, want.text)
		}
	}
	skipped := 0
	for _, p := range rep.Skipped {
		if strings.Contains(p.Reason, "packages only") || (p.Name == "io.github.example/versioned" && p.Version == "1.0.0") {
			skipped++
		}
	}
	if skipped != 5 {
		t.Errorf("skipped %+v", rep.Skipped)
	}

	first := snapshot(t, pool)
	rep, err = im.FromURL(t.Context(), su, srv.URL)
	if err != nil || rep.Created != 0 || rep.Updated != 0 || rep.Unchanged != 21 {
		t.Fatalf("second import: %+v %v", rep, err)
	}
	if second := snapshot(t, pool); len(second) != len(first) {
		t.Errorf("second import changed the catalog")
	} else {
		for k, v := range first {
			if second[k] != v {
				t.Errorf("%s changed:\n%s\n%s", k, v, second[k])
			}
		}
	}

	e, err := db.CatalogEntryGetByName(t.Context(), pool, "io.github.example/versioned")
	if err != nil || e.Version != "1.1.0" || e.VerificationTier != "unverified" || e.Source != "registry" || *e.RegistryURL != srv.URL {
		t.Fatalf("versioned: %+v %v", e, err)
	}
	// A version bump: same entry, new version and URL.
	st.mu.Lock()
	for i, d := range st.docs {
		if strings.Contains(string(d), `"1.1.0"`) && strings.Contains(string(d), "versioned") {
			st.docs[i] = json.RawMessage(strings.ReplaceAll(strings.ReplaceAll(string(d), `"1.1.0"`, `"1.2.0"`), "/v1/mcp", "/v2/mcp"))
		}
	}
	st.mu.Unlock()
	rep, err = im.FromURL(t.Context(), su, srv.URL)
	if err != nil || rep.Updated != 1 || rep.Created != 0 {
		t.Fatalf("bump: %+v %v", rep, err)
	}
	bumped, _ := db.CatalogEntryGetByName(t.Context(), pool, "io.github.example/versioned")
	if bumped.ID != e.ID || bumped.Version != "1.2.0" || bumped.URL != "https://versioned.example.com/v2/mcp" {
		t.Errorf("bumped: %+v", bumped)
	}

	dep, _ := db.CatalogEntryGetByName(t.Context(), pool, "com.example/legacy-search")
	del, _ := db.CatalogEntryGetByName(t.Context(), pool, "com.example/withdrawn")
	if dep == nil || *dep.RegistryStatus != "deprecated" || dep.TransportType != "sse" || del == nil || *del.RegistryStatus != "deleted" {
		t.Fatalf("statuses: %+v %+v", dep, del)
	}
	list, _ := db.CatalogEntryList(t.Context(), pool, db.CatalogFilter{Source: "registry"})
	if len(list) != 20 {
		t.Errorf("listed %d registry entries, want 20 (the deleted one hidden)", len(list))
	}
	for _, l := range list {
		if l.Name == del.Name {
			t.Error("deleted entry listed")
		}
	}
	tenant, _ := db.CatalogEntryGetByName(t.Context(), pool, "io.github.example/tenant-mcp")
	if tenant == nil || len(tenant.URLVariables) != 2 || tenant.URLVariables[0].Name != "tenant" || !tenant.URLVariables[0].IsRequired ||
		tenant.URLVariables[1].Default != "us" || len(tenant.DeclaredHeaders) != 1 || !tenant.DeclaredHeaders[0].IsSecret ||
		tenant.Headers["Authorization"] != "{{Authorization}}" {
		t.Errorf("tenant: %+v", tenant)
	}
	hybrid, _ := db.CatalogEntryGetByName(t.Context(), pool, "io.modelcontextprotocol.anonymous/hybrid-mcp (sse)")
	if hybrid == nil || *hybrid.RegistryRemote != 1 {
		t.Errorf("hybrid sse remote: %+v", hybrid)
	}
}

// TestImportErrors: a member may not import; a registry that is down or answers garbage
// fails the import before anything is written; a file that is no list is 400; a name held
// by a curated entry is refused for that remote only.
func TestImportErrors(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	client := urlguard.New(&urlguard.Options{AllowPrivate: true}).HTTPClient(0)
	im := &registry.Importer{Pool: pool, HTTPClient: client}
	if _, err := im.FromURL(t.Context(), &auth.Principal{Subject: "a", Role: auth.RoleAdmin}, "https://x.example"); apperr.CodeOf(err) != apperr.Forbidden {
		t.Errorf("admin import: %v", err)
	}
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>")) }))
	defer garbage.Close()
	if _, err := im.FromURL(t.Context(), su, garbage.URL); apperr.CodeOf(err) != apperr.UpstreamError {
		t.Errorf("garbage: %v", err)
	}
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"servers":[],"metadata":{"nextCursor":"same"}}`))
	}))
	defer loop.Close()
	if _, err := im.FromURL(t.Context(), su, loop.URL); apperr.CodeOf(err) != apperr.UpstreamError {
		t.Errorf("cursor loop: %v", err)
	}
	garbage.Close()
	if _, err := im.FromURL(t.Context(), su, garbage.URL); apperr.CodeOf(err) != apperr.UpstreamUnavailable {
		t.Errorf("down: %v", err)
	}
	for _, u := range []string{"", "ftp://x", "javascript:alert(1)"} {
		if _, err := im.FromURL(t.Context(), su, u); apperr.CodeOf(err) != apperr.Validation {
			t.Errorf("url %q: %v", u, err)
		}
	}
	if _, err := im.FromFile(t.Context(), su, "file:x", []byte(`"nope"`)); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("file: %v", err)
	}
	if err := db.CatalogEntryUpsertSeed(t.Context(), pool, &db.CatalogSeedEntry{Name: "com.example/taken", URL: "https://t.example/mcp",
		TransportType: "streamable-http", VerificationTier: "verified_community"}); err != nil {
		t.Fatal(err)
	}
	rep, err := im.FromFile(t.Context(), su, "file:x", []byte(`[{"name":"com.example/taken","version":"1","remotes":[{"type":"sse","url":"https://t.example/sse"}]},
		{"name":"com.example/free","version":"1","remotes":[{"type":"sse","url":"https://f.example/sse"}]}]`))
	if err != nil || rep.Created != 1 || len(rep.Refused) != 1 || !strings.Contains(rep.Refused[0].Reason, "already called") {
		t.Errorf("taken: %+v %v", rep, err)
	}
}
