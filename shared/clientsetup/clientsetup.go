// Package clientsetup writes the ready-to-copy configuration of each MCP client for one
// gateway endpoint and bearer token: what the `make run` banner prints and what the
// console's Client setup shows (web/console/src/components/clientconfigs.jsx builds the same text; the
// console's browser test compares the two). Formats follow each client's documentation:
// Claude Code `claude mcp add --transport http … --header`, Claude Desktop's
// claude_desktop_config.json through mcp-remote (which bridges stdio to a remote server;
// its README puts the header value in env because some hosts split arguments at spaces),
// Cursor's mcp.json (url + headers), VS Code's .vscode/mcp.json (servers, type "http"),
// the MCP Inspector CLI, and the TypeScript SDK's Streamable HTTP client.
package clientsetup

import (
	"encoding/json"
	"strings"
)

// Client is one client's configuration.
type Client struct {
	ID    string // stable key: claude-code, claude-desktop, cursor, vscode, inspector, sdk
	Label string // human name
	Where string // where the text goes
	Text  string // the text to copy (token included)
}

// For returns every client's configuration for endpoint url with token, under server
// name name (a key in the clients' config files; "agentpack" when empty).
func For(url, token, name string) []Client {
	if name == "" {
		name = "agentpack"
	}
	bearer := "Bearer " + token
	desktopArgs := []string{"-y", "mcp-remote", url, "--header", "Authorization:${AGENTPACK_AUTH}"}
	if strings.HasPrefix(url, "http://") {
		desktopArgs = append(desktopArgs, "--allow-http")
	}
	desktop := map[string]any{"mcpServers": map[string]any{name: map[string]any{
		"command": "npx", "args": desktopArgs, "env": map[string]string{"AGENTPACK_AUTH": bearer}}}}
	cursor := map[string]any{"mcpServers": map[string]any{name: map[string]any{
		"url": url, "headers": map[string]string{"Authorization": bearer}}}}
	vscode := map[string]any{"servers": map[string]any{name: map[string]any{
		"type": "http", "url": url, "headers": map[string]string{"Authorization": bearer}}}}
	return []Client{
		{"claude-code", "Claude Code", "Run in a terminal",
			"claude mcp add --transport http " + name + " " + url + ` --header "Authorization: ` + bearer + `"`},
		{"claude-desktop", "Claude Desktop (mcp-remote)", "claude_desktop_config.json", js(desktop)},
		{"cursor", "Cursor", "~/.cursor/mcp.json", js(cursor)},
		{"vscode", "VS Code", ".vscode/mcp.json", js(vscode)},
		{"inspector", "MCP Inspector", "Run in a terminal (Node >= 22)",
			"npx @modelcontextprotocol/inspector --cli " + url + ` --transport http --method tools/list --header "Authorization: ` + bearer + `"`},
		{"sdk", "TypeScript SDK", "A Node script (npm i @modelcontextprotocol/sdk)", strings.Join([]string{
			"import { Client } from '@modelcontextprotocol/sdk/client/index.js';",
			"import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';",
			"const client = new Client({ name: 'my-app', version: '1.0.0' });",
			"await client.connect(new StreamableHTTPClientTransport(new URL('" + url + "'), {",
			"  requestInit: { headers: { Authorization: '" + bearer + "' } },",
			"}));",
			"console.log((await client.listTools()).tools.map((t) => t.name));",
		}, "\n")},
	}
}

// js is v as compact JSON without HTML escaping (a config file is not HTML).
func js(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}
