// Package gateway is the MCP gateway's HTTP edge (docs/DESIGN.md §4, docs/ARCHITECTURE.md):
// one stateless Streamable HTTP endpoint (go-sdk, JSON responses) that shows each caller
// the gateway's built-in tools plus the proxied tools of every connection its workspace
// installed. [New] builds a [Gateway] from [Options]; [Gateway.Handler] returns its routes.
//
// # Routes
//
// POST /mcp, POST /mcp/{workspaceId} and POST /mcp/{workspaceId}/servers/{connection}
// (one installed server alone, under its upstream names), the RFC 9728 protected-resource
// metadata under /.well-known/oauth-protected-resource, and GET /health. GET and DELETE
// on the MCP routes answer 405 (docs/DESIGN.md §4).
//
// # Per request
//
// Authenticate → resolve the workspace (and optional project, chat, toolsets; package
// request) → load that workspace's precomputed catalog snapshot → obtain an [mcp.Server]
// holding only what this caller may see (reused across requests with the same key:
// workspace, catalog ETag, role class, toolsets, chat resolution, endpoint) → route and
// serve the one JSON-RPC message → write the answer. Built-in tool calls run the layers of
// docs/DESIGN.md §4 in order: instrument → access → validate → default project → handler
// → classify → seal → audit. Above [DefaultDiscoveryThreshold] visible proxied tools (or
// the workspace's own threshold), tools/list switches to discovery.
//
// # Answers
//
// Answers are JSON, except a single-server tools/call during which the upstream sent log
// or progress notifications: that answer is a buffered text/event-stream holding the
// relayed notifications and then the response (package response, Writer.Relay).
//
// # Long-running calls
//
// A tools/call made as an MCP task (docs/TASKS.md) is started through
// [Options.StartTask] with a [tasks.Job]; the worker (a goroutine locally, an asynchronous
// invocation in Lambda) calls [Gateway.RunTask], which runs the call and stores its
// outcome.
//
// # Packages behind the edge
//
// The roles behind the edge have packages of their own: builtin (the agentpack_* tools and
// the gateway's own resources and prompt), forward (the one path to upstreams), tasks (MCP
// Tasks: their rows, worker and both wire forms), apps (MCP Apps' ui://<handle>/… views),
// skills (Skills' skill://<handle>/… on the aggregate endpoint), audit (the audit rule's
// rows), wire (every envelope and JSON-RPC error the gateway produces), metrics (EMF
// lines), access (the access policies' decisions), listing (tools/list's definitions,
// order and pages; the unknown tool's suggestion), message (reading a POST's JSON-RPC
// envelope and the 2026-07-28 header checks), response (the answer's buffer: size limit,
// ids, SSE) and web (Origin guard, CORS, RFC 9728 metadata, the 401/403/404 answers). This
// package makes no queries of its own (test/rules), and holds only the files
// test/rules/gatewayroot_test.go lists within its line budget: the next feature starts as
// a package. [TuneRuntime] sets the garbage collector's defaults for the deployed function
// and `make run` alike.
package gateway
