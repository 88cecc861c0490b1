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

// TestURLOnly: every URL-only configuration names the endpoint and no header or token;
// Claude Code adds then logs in; the JSON ones parse with each client's documented keys
// (VS Code servers.<name>.type "http" and url; Cursor mcpServers.<name>.url; Claude Desktop
// mcp-remote with the URL as its only argument, --allow-http for http://).
func TestURLOnly(t *testing.T) {
	const url = "http://127.0.0.1:8080/mcp/ws"
	cs := URLOnly(url, "")
	ids := []string{}
	for _, c := range cs {
		ids = append(ids, c.ID)
		if !strings.Contains(c.Text, url) || c.Label == "" || c.Where == "" {
			t.Errorf("%s: %q", c.ID, c.Text)
		}
		for _, bad := range []string{"Authorization", "Bearer", "header", "headers"} {
			if strings.Contains(c.Text, bad) {
				t.Errorf("%s holds %q: %q", c.ID, bad, c.Text)
			}
		}
	}
	if strings.Join(ids, ",") != "claude-code,gemini-cli,vscode,cursor,claude-desktop" {
		t.Fatalf("clients %v", ids)
	}
	if cs[0].Text != "claude mcp add --transport http agentpack "+url+"\nclaude mcp login agentpack" {
		t.Errorf("claude code: %q", cs[0].Text)
	}
	if cs[1].Text != "gemini mcp add --transport http agentpack "+url {
		t.Errorf("gemini: %q", cs[1].Text)
	}
	var vs struct {
		Servers map[string]struct{ Type, URL string } `json:"servers"`
	}
	if err := json.Unmarshal([]byte(cs[2].Text), &vs); err != nil || vs.Servers["agentpack"].Type != "http" || vs.Servers["agentpack"].URL != url {
		t.Errorf("vscode: %v %s", err, cs[2].Text)
	}
	var cu struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(cs[3].Text), &cu); err != nil || len(cu.MCPServers["agentpack"]) != 1 || cu.MCPServers["agentpack"]["url"] != url {
		t.Errorf("cursor: %v %s", err, cs[3].Text)
	}
	var cd struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(cs[4].Text), &cd); err != nil || cd.MCPServers["agentpack"].Command != "npx" ||
		strings.Join(cd.MCPServers["agentpack"].Args, " ") != "-y mcp-remote "+url+" --allow-http" {
		t.Errorf("claude desktop: %v %s", err, cs[4].Text)
	}
	if strings.Contains(URLOnly("https://gw.example/mcp/ws", "x")[4].Text, "--allow-http") {
		t.Error("--allow-http for an https URL")
	}
}
