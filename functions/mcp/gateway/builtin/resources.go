package builtin

import (
	"context"
	"fmt"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Instructions tell an agent how to use the gateway: the server instructions of its MCP
// initialize and server/discover results (MCP "Lifecycle": instructions).
const Instructions = `Agentpack MCP Gateway: one MCP server that combines this workspace's built-in
marketplace tools (prefix agentpack_) with the tools of every MCP server the workspace installed
(named mcp_<server>_<tool>).

- Built-in tools answer with one envelope: {"ok":true,"data":...,"meta":{"tool","version"}} or
  {"ok":false,"error":{"code","message","retryable","hint","errorId"},...} with isError set.
  Retry only when error.retryable is true. The contract is the resource agentpack://contract/envelope.
- Proxied tools (mcp_*) return the upstream server's own result unchanged; if the gateway cannot
  reach the upstream you get an envelope with code UPSTREAM_UNAVAILABLE, UPSTREAM_TIMEOUT or UPSTREAM_ERROR.
- To find a capability: agentpack_tools_search (tools you can call now) or agentpack_catalog_list
  (servers that could be installed). Admins install with agentpack_catalog_install; the new tools
  appear in tools/list within seconds.
- agentpack_toolsets_list shows the toolsets; narrow built-ins with the X-MCP-Toolsets header.`

const envelopeContract = `{
  "description": "Every agentpack_* built-in tool returns this envelope as JSON text content and as structuredContent. isError is true exactly when ok is false.",
  "success": {"ok": true, "data": "<tool-specific>", "meta": {"tool": "<tool name>", "version": "<semver>"}},
  "failure": {"ok": false, "error": {"code": "<one of codes>", "message": "<safe to show>", "retryable": "<bool>", "hint": "<optional>", "errorId": "<for INTERNAL_ERROR and upstream failures; quote it in bug reports>"}, "meta": {"tool": "<tool name>", "version": "<semver>"}},
  "codes": ["VALIDATION_ERROR", "UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "INVALID_REFERENCE", "UNAVAILABLE", "UPSTREAM_UNAVAILABLE", "UPSTREAM_TIMEOUT", "UPSTREAM_ERROR", "RATE_LIMITED", "INTERNAL_ERROR"],
  "retryable": ["UNAVAILABLE", "UPSTREAM_UNAVAILABLE", "UPSTREAM_TIMEOUT", "RATE_LIMITED"],
  "proxied": "Tools named mcp_<server>_<tool> return the upstream result intact; only gateway-side failures use the envelope with UPSTREAM_* codes."
}`

// AddResourcesAndPrompts registers the gateway's own resources on srv — agentpack://catalog
// (the curated catalog as JSON, read under the request's deadline) and
// agentpack://contract/envelope (the built-ins' envelope and error codes, docs/DESIGN.md §5)
// — and its prompt find_and_install_server.
func (s *Set) AddResourcesAndPrompts(srv *mcp.Server) {
	srv.AddResource(&mcp.Resource{
		URI: "agentpack://catalog", Name: "catalog", Title: "Marketplace catalog",
		Description: "The curated catalog of remote MCP servers (JSON), with tier and health.",
		MIMEType:    "application/json",
	}, s.readCatalogResource)
	srv.AddResource(&mcp.Resource{
		URI: "agentpack://contract/envelope", Name: "envelope-contract", Title: "Built-in tool envelope contract",
		Description: "The response envelope of every agentpack_* tool and its error codes (JSON).",
		MIMEType:    "application/json",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: req.Params.URI, MIMEType: "application/json", Text: envelopeContract}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{
		Name: "find_and_install_server", Title: "Find and install an MCP server",
		Description: "Find a catalog server that provides a capability and install it into this workspace.",
		Arguments:   []*mcp.PromptArgument{{Name: "capability", Description: "What you need, e.g. 'search GitHub issues'", Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		capability := req.Params.Arguments["capability"]
		if capability == "" {
			capability = "the capability the user asked for"
		}
		return &mcp.GetPromptResult{
			Description: "Find and install a server for: " + capability,
			Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf(
				"I need: %s.\n1. Call agentpack_tools_search with a keyword for it; if a tool already does this, use it.\n"+
					"2. Otherwise call agentpack_catalog_list with a search term and pick the best entry (prefer verification tier verified_community and health healthy).\n"+
					"3. Show me the entry (agentpack_catalog_get) and the headers it needs; ask me for any credential.\n"+
					"4. Install it with agentpack_catalog_install (admins only) and list the new mcp_* tools.", capability)}}},
		}, nil
	})
}

// readCatalogResource reads agentpack://catalog (CatalogJSON).
func (s *Set) readCatalogResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if st := request.From(ctx); st != nil {
		var cancel context.CancelFunc
		ctx, cancel = st.WithDeadline(ctx)
		defer cancel()
	}
	b, err := s.CatalogJSON(ctx)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
}
