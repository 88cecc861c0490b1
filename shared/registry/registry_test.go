package registry_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/registry"
	"github.com/agentpack/gateway/shared/registry/registrytest"
	"github.com/agentpack/gateway/shared/urlguard"
)

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

// TestImportFromRegistry (issue 24 item 3): the fixture of real server.json documents
// (registrytest, 24 of them, 21 with remotes) and 10 hostile ones through the v0.1 list
// API, 4 per page: each remote of each latest version is an entry, unverified; servers with
// packages only or nothing to connect to are skipped; the real documents the import cannot
// read (the pre-2025-09-29 version_detail shape, remotes as an object) and every hostile
// one are refused with their index and reason while the rest is imported; a second import
// changes nothing; a version bump updates the entry in place; deprecated and deleted keep
// their status (deleted: not listed); URL variables and declared headers come through.
func TestImportFromRegistry(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	good, hostile := registrytest.Items(), load(t, "hostile.json")
	st := registrytest.NewStub(append(append([]json.RawMessage{}, good...), hostile...))
	srv := httptest.NewServer(st)
	defer srv.Close()
	im := &registry.Importer{Pool: pool, HTTPClient: urlguard.New(&urlguard.Options{AllowPrivate: true}).HTTPClient(0)}

	rep, err := im.FromURL(t.Context(), su, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(good) != 24 || rep.Documents != 34 || st.Pages() != 9 {
		t.Errorf("%d real documents; %d documents over %d pages", len(good), rep.Documents, st.Pages())
	}
	// 18 importable servers; com.aliyun/cloudmonitor has 4 remotes (two of each type),
	// hybrid-mcp 2: 22 entries.
	if rep.Created != 22 || rep.Updated != 0 || rep.Unchanged != 0 {
		t.Errorf("created %d updated %d unchanged %d: %+v", rep.Created, rep.Updated, rep.Unchanged, rep.Refused)
	}
	refused := map[string]string{}
	for _, p := range rep.Refused {
		refused[p.Name] = p.Reason
		if p.Index >= len(good) {
			refused[strconv.Itoa(p.Index-len(good))] = p.Reason
		}
	}
	for name, text := range map[string]string{
		"ai.dividen/mcp": "version_detail",
		"io.github.untitledfinancial/alternative-asset-literacy": "version_detail",
		"io.github.shazari888/diagram-generation-api":            "member remotes is a JSON object, it must be an array",
	} {
		if !strings.Contains(refused[name], text) {
			t.Errorf("real document %s: reason %q, want %q", name, refused[name], text)
		}
	}
	if len(rep.Refused) != len(hostile)+3 {
		t.Errorf("refused %d: %+v", len(rep.Refused), rep.Refused)
	}
	for _, want := range []struct {
		i    int
		text string
	}{{0, "bytes, at most"}, {1, "member name is a JSON number, it must be a string"}, {2, "member remotes is a JSON string, it must be an array"},
		{3, "scheme"}, {4, "blocked address"}, {5, "blocked address"},
		{6, "https"}, {7, "not a declared variable"}, {8, "status"}, {9, "declared headers"}} {
		if r := refused[strconv.Itoa(want.i)]; !strings.Contains(r, want.text) {
			t.Errorf("hostile %d: reason %q, want %q", want.i, r, want.text)
		}
	}
	skipped := map[string]string{}
	for _, p := range rep.Skipped {
		skipped[p.Name] = p.Reason
	}
	if len(skipped) != 3 || !strings.Contains(skipped["io.modelcontextprotocol.anonymous/brave-search"], "packages only") ||
		!strings.Contains(skipped["com.warppay402/warppay402-server"], "no remotes and no packages") {
		t.Errorf("skipped %+v", rep.Skipped)
	}
	for _, n := range []string{"com.aliyun/cloudmonitor (streamable-http)", "com.aliyun/cloudmonitor (sse)",
		"com.aliyun/cloudmonitor (streamable-http 3)", "com.aliyun/cloudmonitor (sse 4)"} {
		if e, err := db.CatalogEntryGetByName(t.Context(), pool, n); err != nil || e.TransportType != strings.Fields(strings.Trim(n[len("com.aliyun/cloudmonitor ("):], ")"))[0] {
			t.Errorf("%s: %+v %v", n, e, err)
		}
	}

	first := snapshot(t, pool)
	rep, err = im.FromURL(t.Context(), su, srv.URL)
	if err != nil || rep.Created != 0 || rep.Updated != 0 || rep.Unchanged != 22 {
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

	e, err := db.CatalogEntryGetByName(t.Context(), pool, "io.decisionrules/mcp-server")
	if err != nil || e.Version != "1.0.0" || e.VerificationTier != "unverified" || e.Source != "registry" || *e.RegistryURL != srv.URL ||
		e.TransportType != "sse" {
		t.Fatalf("decisionrules: %+v %v", e, err)
	}
	// A version bump: same entry, new version and URL.
	st.Rewrite(`"io.decisionrules/mcp-server"`, `"version": "1.0.0"`, `"version": "1.1.0"`, "decisionrules.io/mcp", "decisionrules.io/v2/mcp")
	rep, err = im.FromURL(t.Context(), su, srv.URL)
	if err != nil || rep.Updated != 1 || rep.Created != 0 || rep.Unchanged != 21 {
		t.Fatalf("bump: %+v %v", rep, err)
	}
	bumped, _ := db.CatalogEntryGetByName(t.Context(), pool, "io.decisionrules/mcp-server")
	if bumped.ID != e.ID || bumped.Version != "1.1.0" || bumped.URL != "https://api.decisionrules.io/v2/mcp" {
		t.Errorf("bumped: %+v", bumped)
	}

	dep, _ := db.CatalogEntryGetByName(t.Context(), pool, "com.aradia/sovereign-hardware")
	del, _ := db.CatalogEntryGetByName(t.Context(), pool, "io.github.getcyphrex/cyphrex-mcp")
	if dep == nil || *dep.RegistryStatus != "deprecated" || dep.TransportType != "sse" || del == nil || *del.RegistryStatus != "deleted" {
		t.Fatalf("statuses: %+v %+v", dep, del)
	}
	list, _ := db.CatalogEntryList(t.Context(), pool, db.CatalogFilter{Source: "registry"})
	if len(list) != 21 {
		t.Errorf("listed %d registry entries, want 21 (the deleted one hidden)", len(list))
	}
	for _, l := range list {
		if l.Name == del.Name {
			t.Error("deleted entry listed")
		}
	}
	acme, _ := db.CatalogEntryGetByName(t.Context(), pool, "com.example/acme-analytics")
	if acme == nil || acme.URL != "https://{tenant_id}.analytics.example.com/mcp" || len(acme.URLVariables) != 1 ||
		acme.URLVariables[0].Name != "tenant_id" || !acme.URLVariables[0].IsRequired {
		t.Errorf("acme: %+v", acme)
	}
	weather, _ := db.CatalogEntryGetByName(t.Context(), pool, "io.github.user/remote-weather")
	if weather == nil || len(weather.URLVariables) != 1 || weather.URLVariables[0].IsRequired || weather.URLVariables[0].Default != "api.example.com" ||
		len(weather.DeclaredHeaders) != 1 || !weather.DeclaredHeaders[0].IsSecret || weather.Headers["Authorization"] != "{{Authorization}}" {
		t.Errorf("remote-weather: %+v", weather)
	}
	region, _ := db.CatalogEntryGetByName(t.Context(), pool, "com.example/multi-region-mcp")
	if region == nil || len(region.URLVariables) != 1 || len(region.URLVariables[0].Choices) != 3 || region.URLVariables[0].Default != "us-east-1" {
		t.Errorf("multi-region: %+v", region)
	}
	hybrid, _ := db.CatalogEntryGetByName(t.Context(), pool, "io.modelcontextprotocol.anonymous/hybrid-mcp (streamable-http)")
	if hybrid == nil || *hybrid.RegistryRemote != 0 || len(hybrid.DeclaredHeaders) != 2 || !hybrid.DeclaredHeaders[0].IsSecret ||
		!hybrid.DeclaredHeaders[0].IsRequired || hybrid.DeclaredHeaders[1].IsSecret {
		t.Errorf("hybrid streamable-http remote: %+v", hybrid)
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
