//lint:file-ignore SA1019 MCP logging is deprecated as of 2026-07-28 (SEP-2577); the gateway still relays and advertises it for the revisions before, which define it.

package gateway

import (
	"strings"

	"github.com/agentpack/gateway/functions/mcp/gateway/skills"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The single-server endpoint (POST /mcp/{workspaceId}/servers/{connection}, docs/DESIGN.md §4)
// serves one installed connection as if it were that server: its tools under their
// upstream names (from the catalog snapshot, like the aggregate endpoint), and its
// resources, resource templates, prompts and completions passed through to the upstream
// on each request. Auth, workspace access, the protocol guard, metrics and audit are the
// aggregate endpoint's. The upstream's log and progress notifications during a tools/call
// are relayed to the caller (forward/relay.go, response.Writer.Relay).

// singleServerCapabilities are those the single-server endpoint advertises: the
// upstream's own are unknown until a request reaches it, and a method the upstream lacks
// answers with the upstream's own JSON-RPC error. Resource subscriptions are forwarded
// but not advertised: a stateless endpoint cannot deliver notifications/resources/updated.
var singleServerCapabilities = &mcp.ServerCapabilities{
	Tools:       &mcp.ToolCapabilities{ListChanged: false},
	Resources:   &mcp.ResourceCapabilities{ListChanged: false},
	Prompts:     &mcp.PromptCapabilities{ListChanged: false},
	Completions: &mcp.CompletionCapabilities{},
	Logging:     &mcp.LoggingCapabilities{},
}

// buildSingleServer is the go-sdk server of connection c's endpoint: initialize,
// server/discover and ping. Its tools/list, tools/call and pass-through methods are the
// edge's (routes.go).
func (g *Gateway) buildSingleServer(c *catalog.Connection) *mcp.Server {
	return g.newMCPServer(singleCapabilities(c))
}

// singleCapabilities are what connection c's endpoint advertises: exactly the
// capabilities the upstream declared at its last connect (tools, resources, prompts,
// completions, logging), with listChanged and subscribe off — a stateless endpoint sends
// no notifications — and the upstream's extensions (capabilities.extensions, e.g. MCP
// Apps' io.modelcontextprotocol/ui) with their settings as declared: the endpoint passes
// the upstream's methods and metadata through, so what the upstream supports, it does.
// Before the first connect recorded them, singleServerCapabilities.
func singleCapabilities(c *catalog.Connection) *mcp.ServerCapabilities {
	u, ok := c.Declared()
	if !ok {
		return singleServerCapabilities
	}
	caps := &mcp.ServerCapabilities{}
	if u.Tools != nil {
		caps.Tools = &mcp.ToolCapabilities{}
	}
	if u.Resources != nil {
		caps.Resources = &mcp.ResourceCapabilities{}
	}
	if u.Prompts != nil {
		caps.Prompts = &mcp.PromptCapabilities{}
	}
	if u.Completions != nil {
		caps.Completions = &mcp.CompletionCapabilities{}
	}
	if u.Logging != nil {
		caps.Logging = &mcp.LoggingCapabilities{}
	}
	for id, settings := range u.Extensions {
		if len(settings) > 0 && settings[0] == '{' { // SEP-1724: settings are an object
			if caps.Extensions == nil {
				caps.Extensions = map[string]any{}
			}
			caps.Extensions[id] = settings
		}
	}
	return caps
}

// singleAllows reports whether connection c's endpoint forwards method: the upstream
// declared the capability the method belongs to (or its capabilities are not known yet).
// The edge answers the others -32601, as the advertised capabilities say; that includes
// logging/setLevel, which go-sdk would answer with success whatever the capabilities
// (MCP 2025-11-25 "Logging": servers that emit log messages declare the capability).
func singleAllows(c *catalog.Connection, method string) bool {
	u, ok := c.Declared()
	if !ok {
		return true
	}
	switch {
	case strings.HasPrefix(method, "resources/"):
		return u.Resources != nil
	case strings.HasPrefix(method, "prompts/"):
		return u.Prompts != nil
	case method == "completion/complete":
		return u.Completions != nil
	case strings.HasPrefix(method, "tools/"):
		return u.Tools != nil
	case method == "logging/setLevel":
		return u.Logging != nil
	case strings.HasPrefix(method, "skills/"):
		return c.Extension(skills.Extension) != nil
	}
	return true
}
