// Package clientsetup writes the ready-to-copy configuration of each MCP client for one
// gateway endpoint: what the `make run` banner prints and what the console's Client setup
// shows (web/console/src/components/clientconfigs.jsx builds the same text; the console's
// browser test compares the two). Two sets, in the order a person should meet them:
//
//   - URLOnly: the URL alone, the client signing the person in by itself through the
//     gateway's authorization server (docs/AUTH.md): Claude Code `claude mcp add
//     --transport http <name> <url>` then `claude mcp login <name>` (Claude Code's docs,
//     "Authenticate with remote MCP servers"; `/mcp` in a session does the same), gemini-cli
//     `gemini mcp add --transport http <name> <url>` (then `/mcp auth <name>` in gemini),
//     VS Code's .vscode/mcp.json with type "http" and url, Cursor's mcp.json with url,
//     Claude Desktop through mcp-remote with the URL and no header;
//   - For: the same clients with an Authorization header, for clients without OAuth, with
//     an MCP access token made for that purpose (shared/grants: /mcp only, a chosen
//     lifetime, revocable), never the console's own token.
//
// Formats of For follow each client's documentation:
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

// URLOnly returns every client's URL-only configuration for endpoint url, under server
// name name ("agentpack" when empty): IDs claude-code, gemini-cli, vscode, cursor,
// claude-desktop, in that order. No text holds a token.
func URLOnly(url, name string) []Client {
	if name == "" {
		name = "agentpack"
	}
	desktopArgs := []string{"-y", "mcp-remote", url}
	if strings.HasPrefix(url, "http://") {
		desktopArgs = append(desktopArgs, "--allow-http")
	}
	return []Client{
		{"claude-code", "Claude Code", "Run in a terminal; login opens the browser to sign in (or run /mcp in a session)",
			"claude mcp add --transport http " + name + " " + url + "\nclaude mcp login " + name},
		{"gemini-cli", "Gemini CLI", "Run in a terminal, then /mcp auth " + name + " in gemini to sign in",
			"gemini mcp add --transport http " + name + " " + url},
		{"vscode", "VS Code", ".vscode/mcp.json (VS Code asks to sign in when it starts the server)",
			js(map[string]any{"servers": map[string]any{name: map[string]any{"type": "http", "url": url}}})},
		{"cursor", "Cursor", "~/.cursor/mcp.json (Cursor shows Connect: click it to sign in)",
			js(map[string]any{"mcpServers": map[string]any{name: map[string]any{"url": url}}})},
		{"claude-desktop", "Claude Desktop (mcp-remote)", "claude_desktop_config.json (mcp-remote opens the browser to sign in)",
			js(map[string]any{"mcpServers": map[string]any{name: map[string]any{"command": "npx", "args": desktopArgs}}})},
	}
}

// For returns every client's header configuration for endpoint url with token (an MCP
// access token), under server
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
