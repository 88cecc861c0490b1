package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/registry/registrytest"
)

// TestRegistryImportBuiltin: agentpack_registry_import imports the loopback registry
// (registrytest's real documents) for a superuser, the entries then listed by the REST
// catalog; an admin and a member get FORBIDDEN and write nothing; a URL that is not an
// http(s) base URL is VALIDATION_ERROR.
func TestRegistryImportBuiltin(t *testing.T) {
	t.Parallel()
	env := stacktest.New(t, nil)
	ws, _, _ := env.Workspace(t, "Registry")
	su := stacktest.Token(t, "root", auth.RoleSuperuser)
	admin := stacktest.Token(t, "alice", auth.RoleAdmin, ws)
	member := stacktest.Token(t, "bob", auth.RoleMember, ws)
	srv := httptest.NewServer(registrytest.NewStub(nil))
	defer srv.Close()
	checker := outputChecker(t)
	call := func(token, args string) map[string]any {
		t.Helper()
		resp, raw := env.RPC(t, "/mcp/"+ws, token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentpack_registry_import","arguments":`+args+`}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		var m struct {
			Result struct {
				StructuredContent json.RawMessage `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &m); err != nil || resp.StatusCode != 200 || m.Result.StructuredContent == nil {
			t.Fatalf("call: %d %s", resp.StatusCode, raw)
		}
		if err := checker.Lookup("agentpack_registry_import").ValidateOutput(m.Result.StructuredContent); err != nil {
			t.Error(err)
		}
		var out map[string]any
		_ = json.Unmarshal(m.Result.StructuredContent, &out)
		return out
	}
	code := func(out map[string]any) string {
		e, _ := out["error"].(map[string]any)
		s, _ := e["code"].(string)
		return s
	}
	registryEntries := func() int {
		t.Helper()
		st, b := env.Do(t, "GET", "/api/mcp-marketplace?source=registry", member, nil)
		var l struct {
			Entries []json.RawMessage `json:"entries"`
		}
		if err := json.Unmarshal(b, &l); st != http.StatusOK || err != nil {
			t.Fatalf("catalog list: %d %s", st, b)
		}
		return len(l.Entries)
	}
	args := `{"url":"` + srv.URL + `"}`
	for _, tc := range []struct{ name, token string }{{"admin", admin}, {"member", member}} {
		if out := call(tc.token, args); out["ok"] != false || code(out) != "FORBIDDEN" {
			t.Errorf("%s: %v", tc.name, out)
		}
	}
	if n := registryEntries(); n != 0 {
		t.Fatalf("%d registry entries after refused imports", n)
	}
	if out := call(su, `{"url":"ftp://registry.example"}`); code(out) != "VALIDATION_ERROR" {
		t.Errorf("ftp url: %v", out)
	}
	out := call(su, args)
	data, _ := out["data"].(map[string]any)
	if out["ok"] != true || data["created"] != float64(22) || data["source"] != srv.URL {
		t.Fatalf("import: %v", out)
	}
	if n := registryEntries(); n != 21 {
		t.Errorf("%d registry entries listed after the import, want 21", n)
	}
}
