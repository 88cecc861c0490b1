// Package mcpclient is the gateway's client for upstream MCP servers (docs/DESIGN.md §6
// "Upstream client — D-09"). The gateway uses a [Pool] to proxy tools/call and, through
// [Pool.Forward], every other request it passes through to one upstream (resources and
// prompts at a single-server endpoint, docs/DESIGN.md §6b); the marketplace REST function
// uses [Pool.ListTools] when a connection is created, tested or refreshed, and the health
// check uses [Pool.Ping] for its liveness exchange.
//
// A caller describes the upstream with a [Target] (connection id, URL, declared transport,
// declared headers, optional [Credentials]) and gets back the upstream's answer plus, from
// [Pool.ListTools] and [Pool.Ping], an [Info] recording the transport and protocol version
// that worked, for the caller to store and pass back as [Target.Remembered] and
// [Target.ProtocolVersion].
//
// # Transports
//
// Streamable HTTP is tried first; when its opening POST is answered 400, 404, 405 or 406,
// legacy SSE. A target declared "sse" ([TransportSSE]) uses SSE only. There is never a
// fallback on 401/403 (reported as an auth problem), 429, 5xx or network errors. A
// remembered working transport ([Target.Remembered]) is tried first.
//
// # Protocol version
//
// [PreferredProtocolVersion] (2025-11-25) is offered first, also to an upstream remembered
// at a newer version, because it is cheaper per call; an upstream that refuses it is
// connected with go-sdk's newest and the refusal remembered. A remembered version not newer
// than the preferred one ([Target.ProtocolVersion]) is offered as is, which skips go-sdk's
// server/discover probe.
//
// # Sessions
//
// A [Pool] keeps one live session per connection id for reuse in a warm process, keyed by
// a hash of URL, declared transport and headers (a changed configuration gets a new
// session; the old one is closed). One lock per connection id serialises connects. When
// the upstream may have lost the session (400 or 404 to a request carrying Mcp-Session-Id —
// judged by status, never by the body's text — or go-sdk's [mcp.ErrSessionMissing] /
// [mcp.ErrConnectionClosed]), the pool makes a new session and retries once.
// [Pool.Disconnect] drops one connection's session, [Pool.Status] reports the live ones,
// and [Pool.Close] closes them all.
//
// # Notifications
//
// [Pool.CallToolRelay] and [Pool.Forward] hand the notifications/progress and
// notifications/message an upstream sends on one call's own response stream to that call's
// [Relay], on the pooled session, never to another caller's (streamable HTTP only).
//
// # What goes upstream
//
// Only the target's declared headers, re-validated with headers.Validate at every connect
// (docs/DESIGN.md §9), over the urlguard's dialer (resolved addresses checked at dial time,
// no redirects, no environment proxy). Never an inbound header of the gateway's own client.
// Tool arguments bound to headers by the input schema are sent as Mcp-Param-* headers
// ([ParamHeaders], [HeaderBindings], [ParamHeaderPrefix]).
//
// # Limits
//
// Connect (handshake, fallback included) timeout 10 s ([DefaultConnectTimeout]), per-call
// timeout 25 s (under API Gateway's 29 s; it starts once the session is ready, so pass a
// ctx deadline to bound connect + call together; [WithCallTimeout] overrides it per call),
// response size 5 MiB per response body or SSE event, tools/list at most 100 pages. A tool
// whose input schema is unusable is dropped alone ([DroppedTool]); missing, {} or
// $schema-only schemas are normalised to an object schema ([NormalizeToolSchema]).
//
// # Errors
//
// Every error returned is an *apperr.Error (messages never contain header values):
//
//   - UPSTREAM_UNAVAILABLE: unreachable (dial refused, DNS, reset), 5xx, 429, session lost
//     twice, or the caller's context cancelled (Cause is then context.Canceled);
//   - UPSTREAM_TIMEOUT: the connect or call deadline passed;
//   - UPSTREAM_ERROR: 401/403 ("check the connection's headers"), other 4xx, a blocked
//     address, a too-large response, a protocol error, an invalid stored URL or header, or a
//     JSON-RPC error answered by the upstream — [RPCError] extracts that *jsonrpc.Error so
//     the gateway can pass it through to its client.
//
// [FailureOf] reads the [Failure] (the stage it happened at, and a hint) carried by an
// error, for the REST answers of test, install, create and refresh.
package mcpclient
