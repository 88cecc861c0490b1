// Package testpeer starts real MCP peers on loopback for tests. It is test-only: no
// non-test package may import it (the rule test in test/rules enforces it).
//
// Two kinds of peer:
//
//   - In-process Go peers (fixture.go, raw.go, oauth.go): NewFixture serves the demo
//     upstream (shared/demoupstream) on an httptest loopback server in streamable
//     (stateless or stateful) or SSE mode, with knobs for drift, fault and header tests;
//     NewRawUpstream answers from bytes; the OAuth peer is a protected MCP server with its
//     own authorization server.
//   - Processes (node.go, moto.go): Everything starts @modelcontextprotocol/server-everything
//     from the pinned test/npm lockfile, TSClient runs the official TypeScript SDK client
//     (test/npm/ts-client.mjs), Moto a moto_server. They need `make npm-deps` (or
//     moto_server on PATH); when missing the test is skipped, or fails when REQUIRE_PEERS=1.
//
// Every peer binds 127.0.0.1 only and is stopped in t.Cleanup. Readiness waits scale with
// TEST_TIMEOUT_SCALE (Scaled).
package testpeer

import "github.com/agentpack/gateway/shared/demoupstream"

// Serving modes of the in-process peers (demoupstream's, named here for the tests).
const (
	ModeStreamable = demoupstream.ModeStreamable
	ModeStateful   = demoupstream.ModeStateful
	ModeSSE        = demoupstream.ModeSSE
	// MaxSlowMS is the longest delay the peers accept, in milliseconds.
	MaxSlowMS = demoupstream.MaxSlowMS
)
