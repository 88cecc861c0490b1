package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentpack/gateway/shared/registry/registrytest"
)

// TestRegistryImportREST (issue 24 item 3): a superuser imports the fixture as documents;
// a member or admin is 403; the list filters by source and hides the deleted entry; the
// entry shows source, version, status, URL variables and declared headers; installing the
// templated entry requires its variable, checks the value and the choices; a deleted entry
// cannot be installed; a superuser promotes an entry's tier.
func TestRegistryImportREST(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	raw := registrytest.ListAnswer()
	body := map[string]any{"documents": json.RawMessage(raw), "name": "servers.json"}
	for _, tok := range []string{w.adminA, w.memberA} {
		st, b := w.do(t, "POST", "/api/mcp-marketplace/registry-import", tok, body)
		want(t, "import as non-superuser", st, http.StatusForbidden, b)
	}
	st, b := w.do(t, "POST", "/api/mcp-marketplace/registry-import", w.su, map[string]any{})
	want(t, "import without url or documents", st, http.StatusBadRequest, b)
	st, b = w.do(t, "POST", "/api/mcp-marketplace/registry-import", w.su, body)
	want(t, "import", st, http.StatusOK, b)
	if b["created"] != float64(22) || b["source"] != "file:servers.json" {
		t.Fatalf("report: %v", b)
	}

	st, b = w.do(t, "GET", "/api/mcp-marketplace?source=registry", w.memberA, nil)
	want(t, "list registry", st, http.StatusOK, b)
	byName := map[string]map[string]any{}
	for _, e := range b["entries"].([]any) {
		m := e.(map[string]any)
		if m["source"] != "registry" {
			t.Errorf("source filter let %v through", m["name"])
		}
		byName[m["name"].(string)] = m
	}
	if len(byName) != 21 || byName["io.github.getcyphrex/cyphrex-mcp"] != nil {
		t.Errorf("listed %d, deleted listed: %v", len(byName), byName["io.github.getcyphrex/cyphrex-mcp"] != nil)
	}
	if dep := byName["com.aradia/sovereign-hardware"]; dep["deprecated"] != true || dep["registryStatus"] != "deprecated" {
		t.Errorf("deprecated: %v", dep)
	}
	tenant := byName["com.example/acme-analytics"]
	if tenant["version"] != "2.0.0" || tenant["verificationTier"] != "unverified" || len(tenant["urlVariables"].([]any)) != 1 {
		t.Errorf("acme-analytics: %v", tenant)
	}
	if weather := byName["io.github.user/remote-weather"]; weather["declaredHeaders"].([]any)[0].(map[string]any)["isSecret"] != true {
		t.Errorf("remote-weather: %v", weather)
	}
	region := byName["com.example/multi-region-mcp"]["id"].(string)
	st, b = w.do(t, "GET", "/api/mcp-marketplace?source=curated", w.memberA, nil)
	want(t, "list curated", st, http.StatusOK, b)
	if n := len(b["entries"].([]any)); n != 30 {
		t.Errorf("curated %d", n)
	}
	st, b = w.do(t, "GET", "/api/mcp-marketplace?source=elsewhere", w.memberA, nil)
	want(t, "bad source", st, http.StatusBadRequest, b)

	id := tenant["id"].(string)
	for _, tt := range []struct {
		name  string
		entry string
		vars  map[string]string
		field string
	}{
		{"missing", id, nil, "variables.tenant_id"},
		{"slash", id, map[string]string{"tenant_id": "a/b"}, "variables.tenant_id"},
		{"host change", id, map[string]string{"tenant_id": "evil.com#"}, "variables.tenant_id"},
		{"not a choice", region, map[string]string{"region": "asia"}, "variables.region"},
		{"undeclared", id, map[string]string{"tenant_id": "acme", "port": "1"}, "variables.port"},
	} {
		st, b := w.install(t, tt.entry, w.wsA, w.adminA, map[string]any{"variables": tt.vars})
		want(t, "install "+tt.name, st, http.StatusBadRequest, b)
		if d, _ := b["error"].(map[string]any)["details"].(map[string]any); d["field"] != tt.field {
			t.Errorf("%s: details %v", tt.name, d)
		}
	}
	var withdrawn string
	_ = w.env.Pool.QueryRow(t.Context(), `SELECT id FROM mcp_catalog_entries WHERE name = 'io.github.getcyphrex/cyphrex-mcp'`).Scan(&withdrawn)
	st, b = w.install(t, withdrawn, w.wsA, w.adminA, nil)
	want(t, "install deleted", st, http.StatusBadRequest, b)

	st, b = w.do(t, "PUT", "/api/mcp-marketplace/"+id+"/tier", w.adminA, map[string]any{"verificationTier": "official"})
	want(t, "promote as admin", st, http.StatusForbidden, b)
	st, b = w.do(t, "PUT", "/api/mcp-marketplace/"+id+"/tier", w.su, map[string]any{"verificationTier": "gold"})
	want(t, "bad tier", st, http.StatusBadRequest, b)
	st, b = w.do(t, "PUT", "/api/mcp-marketplace/"+id+"/tier", w.su, map[string]any{"verificationTier": "verified_community"})
	want(t, "promote", st, http.StatusOK, b)
	// A re-import keeps the promotion.
	st, b = w.do(t, "POST", "/api/mcp-marketplace/registry-import", w.su, body)
	want(t, "re-import", st, http.StatusOK, b)
	st, b = w.do(t, "GET", "/api/mcp-marketplace/"+id, w.su, nil)
	want(t, "get", st, http.StatusOK, b)
	if b["verificationTier"] != "verified_community" {
		t.Errorf("tier after re-import: %v", b["verificationTier"])
	}
}
