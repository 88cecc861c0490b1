package main

// What serve prints: make run's progress lines, the development sign-in code, and the banner
// shown once the stack is up.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/clientsetup"
	"github.com/agentpack/gateway/shared/seed"
)

// progress prints one "make run:" progress line (so that a cold start is not silent for
// minutes; the script prints the steps before this binary runs).
func progress(msg string) { fmt.Fprintln(os.Stderr, "make run: "+msg) }

// randomCode returns 128 random bits, hex-encoded: the development sign-in link's code.
func randomCode() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// banner is what `make run` prints once the stack is up. It leads with what to paste
// where: the MCP URL (the aggregate endpoint; the demo upstream's single-server endpoint
// beside it) and each client's URL-only set-up (shared/clientsetup.URLOnly: the client
// signs the person in through the gateway's authorization server), then the identity
// provider's sign-in line (idp; "" when there is none), then the console's links, the
// REST API, the demos, and last, under their own heading, the development tokens for
// clients without OAuth and for the REST API (each printed once; the commands read the
// admin token from $AGENTPACK_TOKEN), and where the console makes MCP-only tokens.
func banner(base, demoURL, oauthURL, code, demoHandle string, tok map[string]string, idp string) string {
	signIn := base + console.DevSignInPath + "?code=" + code + "&as="
	mcpURL := base + "/mcp/" + demoWorkspace
	var b strings.Builder
	fmt.Fprintf(&b, "\nAgentpack MCP Gateway is running on %s.\n\n", base)
	fmt.Fprintf(&b, "Connect an MCP client: paste the URL; the client signs you in by itself (OAuth).\n")
	fmt.Fprintf(&b, "  MCP URL:        %s   (every installed server's tools)\n", mcpURL)
	fmt.Fprintf(&b, "  One server:     %s/servers/%s   (only %q)\n", mcpURL, demoHandle, demoConnName)
	for _, c := range clientsetup.URLOnly(mcpURL, "") {
		label := c.Label
		if c.ID == "claude-desktop" {
			label = "Claude Desktop"
		}
		lines := strings.Split(c.Text, "\n")
		fmt.Fprintf(&b, "  %-15s %s\n", label+":", lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "  %-15s %s\n", "", l)
		}
	}
	if idp != "" {
		fmt.Fprintf(&b, "  Sign in with the identity provider: %s\n", idp)
	}
	fmt.Fprintf(&b, `
  Admin console:  %[2]s   (sign in as the demo admin; valid while this process runs)
                  member: %[3]s   superuser: %[4]s
  Client setup:   %[6]s/admin/#/setup (every client's set-up; MCP access tokens for header-only clients)
  REST API:       %[6]s/api/mcp-marketplace   (OpenAPI: %[6]s/api/openapi.json)
  Demo upstream:  %[7]s (installed in the demo workspace as %[8]q)
  OAuth demo:     %[13]s (catalog entry %[14]q, auth mode oauth_per_user; its
                  authorization server approves a demo user at once: Install it, then each
                  member connects their own account on the console's Authorizations page)
  Demo chat:      %[9]s

Clients without OAuth (a header) and the REST API: development tokens (valid 30 days;
make token prints them again; the console's Client setup makes MCP-only ones instead).
  export AGENTPACK_TOKEN=%[10]s   # admin
  member token:    %[11]s
  superuser token: %[12]s
  curl -s %[5]s -H "Authorization: Bearer $AGENTPACK_TOKEN" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
  npx @modelcontextprotocol/inspector --cli %[5]s --transport http --method tools/list --header "Authorization: Bearer $AGENTPACK_TOKEN"
  (MCP Inspector, Claude Code and mcp-remote need Node >= 22.)

Ctrl-C stops the server.
`, base, signIn+auth.RoleAdmin, signIn+auth.RoleMember, signIn+auth.RoleSuperuser, mcpURL, base, demoURL, demoConnName,
		demoChat, tok[auth.RoleAdmin], tok[auth.RoleMember], tok[auth.RoleSuperuser],
		oauthURL, seed.OAuthDemoName)
	return b.String()
}
