// Package apps serves MCP Apps on the gateway's aggregate endpoint (the
// io.modelcontextprotocol/ui extension, SEP-1865, stable 2026-01-26; docs/ARCHITECTURE.md
// "MCP Apps"). Upstream views are ui:// resources that tools name in _meta.ui.resourceUri
// (and the deprecated flat _meta["ui/resourceUri"]). Two upstreams may both name
// ui://dashboard/app.html, so the aggregate endpoint shows every upstream view URI under its
// connection's handle:
//
//	ui://<host+path…>  (upstream)  ⇄  ui://<handle>/<host+path…>  (client)
//
// The handle ([a-z0-9]{1,16}, unique in a workspace) becomes the URI's authority, so the
// client still sees a ui:// URI and each connection's views get an authority of their own.
// The mapping ([URI], [Target]) is a pure function both ways: no table, nothing stored.
//
// # What is listed
//
// [Build] makes a server key's [Tables] from the catalog snapshot, never from the upstreams
// at request time: the ui:// resources each upstream listed at its last refresh (stored,
// migrations/00017) and the view URIs the visible tools' definitions name (the spec makes
// tool metadata the discovery path: servers MAY leave UI-only resources out of
// resources/list). [Tables.Register] lists them through go-sdk's server, and
// [Tables.Capability] is the extension's settings to advertise.
//
// # What is rewritten
//
// Everywhere a view URI reaches the client: a tool definition in tools/list
// ([WithURIs]), a proxied tools/call result ([CallResult], and a task's result:
// [ResultView]), and a resources/read result ([Tables.Read], which reads ui://<handle>/…
// from that connection with the upstream's own URI). Every other byte is kept.
//
// The gateway's HTTP edge (package gateway) decides which requests reach this package and
// writes the answers; the upstream reads go through package forward.
package apps
