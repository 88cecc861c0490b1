package gateway

import (
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The single-server endpoint (POST /mcp/{workspaceId}/servers/{connection}, DESIGN §4)
// serves one installed connection as if it were that server: its tools under their
// upstream names (from the catalog snapshot, like the aggregate endpoint), and its
// resources, resource templates, prompts and completions passed through to the upstream
// on each request. Auth, workspace access, the protocol guard, metrics and audit are the
// aggregate endpoint's. The upstream's log and progress notifications during a tools/call
// are relayed to the caller (relay.go).

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
// edge's (forward.go).
func (g *Gateway) buildSingleServer(_ *catalog.Connection) *mcp.Server {
	return g.newMCPServer(singleServerCapabilities)
}
