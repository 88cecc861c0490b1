package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
)

// TestListsArePrivateAndHealthNamesNoWorkspace: a list answer depends on the caller's
// workspace and role, so it must never be marked cacheable by intermediaries ("public",
// go-sdk's default), replayed or not; and the unauthenticated /health must not list the
// workspaces this process served.
func TestListsArePrivateAndHealthNamesNoWorkspace(t *testing.T) {
	t.Parallel()
	env := stacktest.New(t, nil)
	ws, _, _ := env.Workspace(t, "Private")
	tok := stacktest.Token(t, "alice", auth.RoleMember, ws)
	for _, method := range []string{"tools/list", "tools/list", "prompts/list", "resources/list"} {
		req, _ := http.NewRequest(http.MethodPost, env.URL+"/mcp/"+ws,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`"}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"cacheScope":"private"`) || strings.Contains(string(b), `"public"`) {
			t.Fatalf("%s: %d %.300s", method, resp.StatusCode, b)
		}
	}
	resp, err := http.Get(env.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(b), ws) {
		t.Fatalf("/health names workspace %s: %s", ws, b)
	}
	// It still reports catalog freshness and counts (issue 3 "Observability").
	var h struct {
		Status   string
		Database string
		Catalog  struct {
			CachedWorkspaces int    `json:"cachedWorkspaces"`
			TTLMs            int64  `json:"ttlMs"`
			OldestAgeMs      *int64 `json:"oldestAgeMs"`
			StoreFailures    *int64 `json:"storeFailures"`
		}
	}
	if err := json.Unmarshal(b, &h); err != nil || h.Status != "ok" || h.Database != "ok" ||
		h.Catalog.CachedWorkspaces != 1 || h.Catalog.OldestAgeMs == nil || h.Catalog.StoreFailures == nil {
		t.Fatalf("/health = %s (%v)", b, err)
	}
}
