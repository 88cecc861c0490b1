package clientsetup

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFor: every client gets the endpoint and the bearer token; the JSON configurations
// parse and have each client's documented shape; mcp-remote gets --allow-http only for an
// http:// URL.
func TestFor(t *testing.T) {
	const url, tok = "http://127.0.0.1:8080/mcp/ws", "TOK"
	cs := For(url, tok, "")
	ids := []string{}
	for _, c := range cs {
		ids = append(ids, c.ID)
		if !strings.Contains(c.Text, url) || !strings.Contains(c.Text, "Bearer "+tok) || c.Label == "" || c.Where == "" {
			t.Errorf("%s: %q", c.ID, c.Text)
		}
		if strings.HasPrefix(c.Text, "{") {
			var v map[string]map[string]map[string]any
			if err := json.Unmarshal([]byte(c.Text), &v); err != nil {
				t.Errorf("%s: %v", c.ID, err)
			}
			key := "mcpServers"
			if c.ID == "vscode" {
				key = "servers"
			}
			if v[key]["agentpack"] == nil {
				t.Errorf("%s: no %s.agentpack in %s", c.ID, key, c.Text)
			}
		}
	}
	if strings.Join(ids, ",") != "claude-code,claude-desktop,cursor,vscode,inspector,sdk" {
		t.Fatalf("clients %v", ids)
	}
	if !strings.Contains(cs[1].Text, `"--allow-http"`) {
		t.Error("mcp-remote needs --allow-http for an http:// URL")
	}
	if strings.Contains(For("https://gw.example/mcp/ws", tok, "x")[1].Text, "--allow-http") {
		t.Error("--allow-http for an https URL")
	}
	if !strings.Contains(For(url, tok, "mine")[0].Text, "--transport http mine ") {
		t.Error("server name not used")
	}
}
