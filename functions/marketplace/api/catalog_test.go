package api_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/seed"
)

func TestCatalogBrowse(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)

	st, b := w.do(t, "GET", "/api/mcp-marketplace", w.memberA, nil)
	want(t, "list as member", st, http.StatusOK, b)
	entries := b["entries"].([]any)
	if len(entries) != len(seed.Catalog) {
		t.Fatalf("list: %d entries, want the %d seeded", len(entries), len(seed.Catalog))
	}
	var deepwiki map[string]any
	for _, e := range entries {
		m := e.(map[string]any)
		for _, k := range []string{"verificationTier", "healthStatus", "installCount", "isPlaceholder", "lastCommitDate"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("entry %v lacks %s (badges)", m["name"], k)
			}
		}
		for _, v := range m["headers"].(map[string]any) {
			if v != "[REDACTED]" {
				t.Fatalf("entry %v: header template not redacted: %v", m["name"], v)
			}
		}
		if m["name"] == "DeepWiki" {
			deepwiki = m
		}
	}
	if deepwiki == nil || deepwiki["verificationTier"] != "verified_community" {
		t.Fatalf("DeepWiki entry: %v", deepwiki)
	}

	// Server-side filters.
	st, b = w.do(t, "GET", "/api/mcp-marketplace?search=deepWIKI", w.memberA, nil)
	want(t, "search", st, http.StatusOK, b)
	if n := len(b["entries"].([]any)); n != 1 {
		t.Errorf("search deepwiki: %d entries", n)
	}
	st, b = w.do(t, "GET", "/api/mcp-marketplace?category=payments", w.memberA, nil)
	want(t, "category", st, http.StatusOK, b)
	for _, e := range b["entries"].([]any) {
		if e.(map[string]any)["category"] != "payments" {
			t.Errorf("category filter returned %v", e)
		}
	}
	if len(b["entries"].([]any)) == 0 {
		t.Error("category payments: no entries")
	}

	// Detail.
	id := deepwiki["id"].(string)
	st, b = w.do(t, "GET", "/api/mcp-marketplace/"+id, w.memberA, nil)
	want(t, "detail", st, http.StatusOK, b)
	if b["name"] != "DeepWiki" || b["url"] != "https://mcp.deepwiki.com/mcp" {
		t.Errorf("detail: %v", b)
	}

	for _, c := range []struct {
		name, path, token string
		code              int
		errCode           string
	}{
		{"list without token", "/api/mcp-marketplace", "", 401, "UNAUTHENTICATED"},
		{"list with a bad token", "/api/mcp-marketplace", "not-a-jwt", 401, "UNAUTHENTICATED"},
		{"detail without token", "/api/mcp-marketplace/" + id, "", 401, "UNAUTHENTICATED"},
		{"unknown id", "/api/mcp-marketplace/00000000-0000-4000-8000-000000000000", w.memberA, 404, "NOT_FOUND"},
		{"malformed id", "/api/mcp-marketplace/nope", w.memberA, 404, "NOT_FOUND"},
		{"installed badge for another workspace", "/api/mcp-marketplace?workspaceId=" + w.wsB, w.adminA, 404, "NOT_FOUND"},
	} {
		st, b := w.do(t, "GET", c.path, c.token, nil)
		if st != c.code || errCode(b) != c.errCode {
			t.Errorf("%s: %d %v, want %d %s", c.name, st, b, c.code, c.errCode)
		}
	}
}

func TestCatalogAdminWrites(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	body := map[string]any{"name": "Team Wiki", "url": "https://wiki.example.com/mcp", "transportType": "sse",
		"headers": map[string]string{"X-Api-Key": "{{KEY}}"}, "description": "Our wiki.", "category": "docs",
		"author": "us", "version": "1.2"}

	st, b := w.do(t, "POST", "/api/mcp-marketplace", w.memberA, body)
	if st != http.StatusForbidden || errCode(b) != "FORBIDDEN" {
		t.Fatalf("member create: %d %v", st, b)
	}
	st, b = w.do(t, "POST", "/api/mcp-marketplace", "", body)
	want(t, "anonymous create", st, http.StatusUnauthorized, b)
	// The catalog is shared by every workspace: a workspace admin may not edit it (an admin
	// of A repointing an entry would receive B's header secrets on B's next install).
	st, b = w.do(t, "POST", "/api/mcp-marketplace", w.adminA, body)
	want(t, "workspace admin create", st, http.StatusForbidden, b)

	st, b = w.do(t, "POST", "/api/mcp-marketplace", w.su, body)
	want(t, "superuser create", st, http.StatusCreated, b)
	id := b["id"].(string)
	if b["verificationTier"] != "unverified" || b["installCount"] != 0.0 || b["headers"].(map[string]any)["X-Api-Key"] != "[REDACTED]" {
		t.Errorf("created entry: %v", b)
	}
	st, b = w.do(t, "POST", "/api/mcp-marketplace", w.su, body)
	if st != http.StatusConflict || !strings.Contains(errMessage(b), "Team Wiki") {
		t.Errorf("duplicate name: %d %v", st, b)
	}

	for _, c := range []struct {
		name string
		body any
	}{
		{"no url", map[string]any{"name": "x"}},
		{"file url", map[string]any{"name": "x", "url": "file:///etc/passwd"}},
		{"metadata url", map[string]any{"name": "x", "url": "http://169.254.169.254/latest"}},
		{"bad transport", map[string]any{"name": "x", "url": "https://a.example.com", "transportType": "ws"}},
		{"hop-by-hop header template", map[string]any{"name": "x", "url": "https://a.example.com", "headers": map[string]string{"Connection": "close"}}},
		{"runtime field", map[string]any{"name": "x", "url": "https://a.example.com", "installCount": 99}},
		{"tier is seed data", map[string]any{"name": "x", "url": "https://a.example.com", "verificationTier": "official"}},
		{"malformed JSON", `{"name": `},
		{"empty name", map[string]any{"name": " ", "url": "https://a.example.com"}},
	} {
		st, b := w.do(t, "POST", "/api/mcp-marketplace", w.su, c.body)
		if st != http.StatusBadRequest || errCode(b) != "VALIDATION_ERROR" {
			t.Errorf("create %s: %d %v", c.name, st, b)
		}
	}

	// Update: partial; runtime fields untouched.
	if _, err := w.env.Pool.Exec(t.Context(), `UPDATE mcp_catalog_entries SET install_count = 7, health_status = 'down' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	st, b = w.do(t, "PUT", "/api/mcp-marketplace/"+id, w.su, map[string]any{"description": "Our new wiki."})
	want(t, "update", st, http.StatusOK, b)
	if b["description"] != "Our new wiki." || b["name"] != "Team Wiki" || b["installCount"] != 7.0 || b["healthStatus"] != "down" {
		t.Errorf("update: %v", b)
	}
	st, b = w.do(t, "PUT", "/api/mcp-marketplace/"+id, w.su, map[string]any{"name": "DeepWiki"})
	want(t, "rename onto a seeded name", st, http.StatusConflict, b)
	st, b = w.do(t, "PUT", "/api/mcp-marketplace/"+id, w.su, map[string]any{"url": "gopher://x"})
	want(t, "update bad url", st, http.StatusBadRequest, b)
	st, b = w.do(t, "PUT", "/api/mcp-marketplace/"+id, w.memberA, map[string]any{"description": "x"})
	want(t, "member update", st, http.StatusForbidden, b)
	st, b = w.do(t, "PUT", "/api/mcp-marketplace/"+id, w.adminA, map[string]any{"url": "https://attacker.example.com/mcp"})
	want(t, "workspace admin update", st, http.StatusForbidden, b)
	st, b = w.do(t, "PUT", "/api/mcp-marketplace/00000000-0000-4000-8000-000000000000", w.su, map[string]any{"description": "x"})
	want(t, "update unknown", st, http.StatusNotFound, b)

	// Delete: 409 while installed, 204 after.
	fx := fixture(t)
	inst := w.entry(t, "Installed Demo", fx.URL, "streamable-http")
	st, b = w.install(t, inst, w.wsA, w.adminA, nil)
	want(t, "install", st, http.StatusCreated, b)
	st, b = w.do(t, "DELETE", "/api/mcp-marketplace/"+inst, w.su, nil)
	want(t, "delete installed", st, http.StatusConflict, b)
	st, b = w.do(t, "DELETE", "/api/mcp-marketplace/"+inst+"/install?workspaceId="+w.wsA, w.adminA, nil)
	want(t, "uninstall", st, http.StatusNoContent, b)
	st, b = w.do(t, "DELETE", "/api/mcp-marketplace/"+inst, w.memberA, nil)
	want(t, "member delete", st, http.StatusForbidden, b)
	st, b = w.do(t, "DELETE", "/api/mcp-marketplace/"+inst, w.adminA, nil)
	want(t, "workspace admin delete", st, http.StatusForbidden, b)
	st, b = w.do(t, "DELETE", "/api/mcp-marketplace/"+inst, w.su, nil)
	want(t, "delete", st, http.StatusNoContent, b)
	st, b = w.do(t, "DELETE", "/api/mcp-marketplace/"+inst, w.su, nil)
	want(t, "delete again", st, http.StatusNotFound, b)

	if got := w.events(t, id); strings.Join(got, ",") != "mcp.catalog_entry_created,mcp.catalog_entry_updated" {
		t.Errorf("entry events: %v", got)
	}
	if n := w.count(t, `SELECT count(*) FROM event_log WHERE entity_type = 'mcp_catalog_entry' AND entity_id = $1 AND actor = 'root'
		AND payload->'headers'->>'Authorization' = '[REDACTED]'`, inst); n != 2 {
		t.Errorf("installed entry: %d created/deleted events with redacted headers, want 2", n)
	}
}

func TestInstallFlow(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	fx := fixture(t)
	entry := w.entry(t, "Demo Upstream", fx.URL, "streamable-http")

	// 201: url and transport copied, source marketplace, name override, connected.
	st, b := w.install(t, entry, w.wsA, w.adminA, map[string]any{"name": "My Demo",
		"headers": map[string]string{"X-Upstream-Key": "install-secret-1"}})
	want(t, "install", st, http.StatusCreated, b)
	connID := b["id"].(string)
	if b["url"] != fx.URL || b["transportType"] != "streamable-http" || b["source"] != "marketplace" ||
		b["catalogEntryId"] != entry || b["name"] != "My Demo" || b["enabled"] != true || b["workspaceId"] != w.wsA {
		t.Errorf("installed connection: %v", b)
	}
	if c := b["connect"].(map[string]any); c["success"] != true || c["toolCount"] != 5.0 {
		t.Errorf("install connect: %v", c)
	}
	if b["workingTransport"] != "streamable-http" {
		t.Errorf("working transport not remembered: %v", b["workingTransport"])
	}
	if b["headers"].(map[string]any)["X-Upstream-Key"] != "[REDACTED]" {
		t.Errorf("headers: %v", b["headers"])
	}
	if n := w.count(t, `SELECT install_count FROM mcp_catalog_entries WHERE id = $1`, entry); n != 1 {
		t.Errorf("install_count = %d", n)
	}
	if got := w.events(t, connID); len(got) != 1 || got[0] != "mcp.installed" {
		t.Errorf("events: %v", got)
	}
	handle := b["handle"].(string)
	if got := proxied(w.gatewayTools(t, w.wsA, w.memberA), handle); len(got) != 5 {
		t.Errorf("gateway tools after install: %v", got)
	}
	// The upstream saw the declared header (and only as declared).
	if hs := fx.Requests(); len(hs) == 0 || hs[len(hs)-1].Header.Get("X-Upstream-Key") != "install-secret-1" {
		t.Errorf("upstream did not receive the declared header")
	}
	// Installed badge.
	st, b = w.do(t, "GET", "/api/mcp-marketplace?workspaceId="+w.wsA+"&search=Demo%20Upstream", w.adminA, nil)
	want(t, "badge", st, http.StatusOK, b)
	if e := b["entries"].([]any)[0].(map[string]any); e["installed"] != true || e["connectionId"] != connID {
		t.Errorf("installed badge: %v", e)
	}

	// 409: a second marketplace install in the same workspace.
	st, b = w.install(t, entry, w.wsA, w.adminA, nil)
	if st != http.StatusConflict || errCode(b) != "CONFLICT" {
		t.Errorf("second install: %d %v", st, b)
	}
	// Another workspace may install it too.
	st, b = w.install(t, entry, w.wsB, w.adminB, nil)
	want(t, "install in B", st, http.StatusCreated, b)

	// 400s, 401, 403, 404; nothing written by any.
	before := w.count(t, `SELECT count(*) FROM mcp_connections`)
	evBefore := w.count(t, `SELECT count(*) FROM event_log`)
	for _, c := range []struct {
		name, entry, token string
		body               any
		code               int
	}{
		{"no workspaceId, token of two workspaces", entry, stacktest.Token(t, "ab", auth.RoleAdmin, w.wsA, w.wsB), map[string]any{}, 400},
		{"workspaceId not a uuid", entry, w.adminA, map[string]any{"workspaceId": "A"}, 400},
		{"unknown field", entry, w.adminA, map[string]any{"workspaceId": w.wsA, "transportType": "sse"}, 400},
		{"url override of a non-template entry", entry, w.adminA, map[string]any{"workspaceId": w.wsA, "url": "https://evil.example.com"}, 400},
		{"malformed JSON", entry, w.adminA, `{"workspaceId":`, 400},
		{"empty body", entry, w.adminA, "", 400},
		{"hostile header", entry, w.adminA, map[string]any{"workspaceId": w.wsA, "headers": map[string]string{"Host": "evil"}}, 400},
		{"name too long", entry, w.adminA, map[string]any{"workspaceId": w.wsA, "name": strings.Repeat("n", 101)}, 400},
		{"no token", entry, "", map[string]any{"workspaceId": w.wsA}, 401},
		{"member", entry, w.memberA, map[string]any{"workspaceId": w.wsA}, 403},
		{"unknown entry", "00000000-0000-4000-8000-000000000000", w.adminA, map[string]any{"workspaceId": w.wsA}, 404},
		{"another workspace", entry, w.adminA, map[string]any{"workspaceId": w.wsB}, 404},
	} {
		st, b := w.do(t, "POST", "/api/mcp-marketplace/"+c.entry+"/install", c.token, c.body)
		if st != c.code {
			t.Errorf("install %s: %d %v, want %d", c.name, st, b, c.code)
		}
	}
	if w.count(t, `SELECT count(*) FROM mcp_connections`) != before || w.count(t, `SELECT count(*) FROM event_log`) != evBefore {
		t.Error("a refused install wrote something")
	}

	// Uninstall: 400, 401, 403, 404 first.
	base := "/api/mcp-marketplace/" + entry + "/install"
	for _, c := range []struct {
		name, path, token string
		code              int
	}{
		{"no workspaceId, token of two workspaces", base, stacktest.Token(t, "ab", auth.RoleAdmin, w.wsA, w.wsB), 400},
		{"no token", base + "?workspaceId=" + w.wsA, "", 401},
		{"member", base + "?workspaceId=" + w.wsA, w.memberA, 403},
		{"another workspace", base + "?workspaceId=" + w.wsB, w.adminA, 404},
		{"unknown entry", "/api/mcp-marketplace/00000000-0000-4000-8000-000000000000/install?workspaceId=" + w.wsA, w.adminA, 404},
	} {
		st, b := w.do(t, "DELETE", c.path, c.token, nil)
		if st != c.code {
			t.Errorf("uninstall %s: %d %v, want %d", c.name, st, b, c.code)
		}
	}
	st, b = w.do(t, "DELETE", base+"?workspaceId="+w.wsA, w.adminA, nil)
	want(t, "uninstall", st, http.StatusNoContent, b)
	if n := w.count(t, `SELECT count(*) FROM mcp_connections WHERE id = $1`, connID); n != 0 {
		t.Error("uninstall did not hard-delete the connection")
	}
	if n := w.count(t, `SELECT count(*) FROM mcp_connection_tools WHERE connection_id = $1`, connID); n != 0 {
		t.Error("uninstall left tools behind")
	}
	if n := w.count(t, `SELECT install_count FROM mcp_catalog_entries WHERE id = $1`, entry); n != 1 {
		t.Errorf("install_count after uninstall = %d, want 1 (B's install)", n)
	}
	if got := w.events(t, connID); strings.Join(got, ",") != "mcp.installed,mcp.uninstalled" {
		t.Errorf("events: %v", got)
	}
	if got := proxied(w.gatewayTools(t, w.wsA, w.memberA), handle); len(got) != 0 {
		t.Errorf("gateway still lists uninstalled tools: %v", got)
	}
	for _, s := range w.env.Deps.Upstreams.Status() {
		if s.ConnectionID == connID {
			t.Error("uninstalled connection still has a live session")
		}
	}
	st, b = w.do(t, "DELETE", base+"?workspaceId="+w.wsA, w.adminA, nil)
	if st != http.StatusNotFound || !strings.Contains(errMessage(b), "not installed") {
		t.Errorf("second uninstall: %d %v", st, b)
	}

	// Re-install: a new connection.
	st, b = w.install(t, entry, w.wsA, w.adminA, nil)
	want(t, "re-install", st, http.StatusCreated, b)
	if b["id"] == connID || b["name"] != "Demo Upstream" {
		t.Errorf("re-install: %v", b)
	}
}

// TestInstallManualDoesNotBlock is the seed's 409 rule: only a marketplace install
// blocks; a manual connection to the same entry does not.
func TestInstallManualDoesNotBlock(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	fx := fixture(t)
	entry := w.entry(t, "Demo", fx.URL, "streamable-http")
	st, b := w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{
		"name": "Demo by hand", "url": fx.URL, "workspaceId": w.wsA, "catalogEntryId": entry})
	want(t, "manual connection to the entry", st, http.StatusCreated, b)
	if b["source"] != "manual" || b["catalogEntryId"] != entry {
		t.Fatalf("manual: %v", b)
	}
	st, b = w.install(t, entry, w.wsA, w.adminA, nil)
	want(t, "install next to a manual connection", st, http.StatusCreated, b)
	st, b = w.install(t, entry, w.wsA, w.adminA, nil)
	want(t, "second marketplace install", st, http.StatusConflict, b)
	st, b = w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{
		"name": "x", "url": fx.URL, "workspaceId": w.wsA, "catalogEntryId": "00000000-0000-4000-8000-000000000000"})
	if st != http.StatusUnprocessableEntity {
		t.Errorf("manual connection to an unknown entry: %d %v", st, b)
	}
}

// TestInstallFailedConnectStill201: the first connect's failure is recorded, not raised.
func TestInstallFailedConnectStill201(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	fx := fixture(t)
	url := fx.URL
	fx.Close() // nothing listens there any more
	entry := w.entry(t, "Gone", url, "streamable-http")
	st, b := w.install(t, entry, w.wsA, w.adminA, nil)
	want(t, "install of an unreachable server", st, http.StatusCreated, b)
	c := b["connect"].(map[string]any)
	if c["success"] != false || c["error"] == "" || c["toolCount"] != nil {
		t.Errorf("connect: %v", c)
	}
	if b["lastError"] == nil {
		t.Errorf("lastError not recorded: %v", b)
	}
	if n := w.count(t, `SELECT install_count FROM mcp_catalog_entries WHERE id = $1`, entry); n != 1 {
		t.Errorf("install_count = %d", n)
	}
}

// TestInstallRace: concurrent installs of one entry into one workspace → exactly one 201.
func TestInstallRace(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	fx := fixture(t)
	entry := w.entry(t, "Racy", fx.URL, "streamable-http")
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() {
			codes[i], _ = w.env.Do(t, "POST", "/api/mcp-marketplace/"+entry+"/install", w.adminA, map[string]any{"workspaceId": w.wsA})
		})
	}
	wg.Wait()
	created, conflicts := 0, 0
	for _, c := range codes {
		switch c {
		case 201:
			created++
		case 409:
			conflicts++
		}
	}
	if created != 1 || conflicts != 7 {
		t.Errorf("codes %v: want one 201 and seven 409", codes)
	}
	if n := w.count(t, `SELECT install_count FROM mcp_catalog_entries WHERE id = $1`, entry); n != 1 {
		t.Errorf("install_count = %d", n)
	}
}
