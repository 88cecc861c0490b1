// Package forward is the gateway's one path to upstream MCP servers (docs/ARCHITECTURE.md
// "A proxied call"): a proxied tools/call, a pass-through request of the single-server
// endpoint, and the requests that route a task to the upstream that runs it. It resolves
// the connection's target and the caller's upstream credentials, sends the request's
// bytes through shared/mcpclient (which owns the upstream sessions), and returns the
// upstream's result bytes or its JSON-RPC error unchanged. Only three things change on the
// way up: the id (the pool's), the tool name, and the downstream exchange's _meta fields
// (a 2026-07-28 caller's clientCapabilities go up, for multi round-trip requests); a
// requestState the gateway issued is verified and removed with its inputResponses. On the
// way down only what the client's revision forbids changes (ClientError,
// UpstreamElicitation). The per-revision authorization answer is upstreamauth.Answer's.
//
// A gateway-side failure becomes, for a tools/call, the envelope (wire.UpstreamFailure:
// a classified error keeps its code — UPSTREAM_UNAVAILABLE, UPSTREAM_TIMEOUT, NOT_FOUND for
// a connection removed meanwhile, UNAVAILABLE —, anything else is UPSTREAM_ERROR), and for other
// methods a -32603 whose data carries that code (wire.Failure); both log an errorId the
// client sees. Every proxied tools/call writes its metrics, and its audit row when the
// result is not isError, before it returns.
package forward

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/audit"
	"github.com/agentpack/gateway/functions/mcp/gateway/metrics"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/shared/budget"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/ratelimit"
	"github.com/agentpack/gateway/shared/telemetry"
)

// Options configure a Forwarder. Pool, Upstreams and Audit are required (every
// successful proxied call is audited).
type Options struct {
	Pool      *db.Pool
	Upstreams *mcpclient.Pool
	// Connections decides each caller's upstream credentials (OAuth connections); nil
	// sends every connection's stored headers only.
	Connections *connections.Service
	Logger      *slog.Logger
	Metrics     *metrics.EMF
	Audit       *audit.Trail
	// CallTimeout bounds a synchronous upstream call (the edge's budget, under API
	// Gateway's 29 s).
	CallTimeout time.Duration
	// Limiter counts every proxied tools/call against the workspace's rate limits before
	// anything goes upstream (docs/RATE-LIMITS.md); nil counts nothing.
	Limiter *ratelimit.Limiter
	// TargetCacheBytes bounds the cache of connection rows in estimated bytes (rowSize);
	// 0: DefaultTargetCacheBytes.
	TargetCacheBytes int64
}

// DefaultTargetCacheBytes bounds the connection-row cache when Options say nothing (8 MiB).
const DefaultTargetCacheBytes = 8 << 20

// Forwarder sends requests upstream. Safe for concurrent use.
type Forwarder struct {
	o       Options
	log     *slog.Logger
	targets *targetCache
}

// New returns a Forwarder.
func New(o Options) *Forwarder {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.TargetCacheBytes <= 0 {
		o.TargetCacheBytes = DefaultTargetCacheBytes
	}
	return &Forwarder{o: o, log: o.Logger, targets: newTargetCache(o.TargetCacheBytes)}
}

// TargetStats returns the connection-row cache's counters (a hit: a proxied call whose
// connection row, at the catalog's updatedAt, was in memory).
func (f *Forwarder) TargetStats() budget.Stats { return budget.StatsOf(f.targets.c) }

// Ref is one proxied tool as a server key exposes it: the name the client calls, its
// connection and its catalog tool.
type Ref struct {
	Name string
	Conn *catalog.Connection
	Tool *catalog.Tool
}

// Canonical is the name a call of r is counted under, whichever endpoint it came through:
// the tool's exposed name in its workspace (catalog.Tool.ExposedName), the name the
// aggregate endpoint lists, also for a call on the single-server endpoint, whose Name is
// the upstream's own. Audit rows (so the Usage page), rate-limit keys and task jobs use it
// (docs/POLICIES.md "Usage": the exposed name is unique in the workspace, the upstream's is
// only unique within its server, and rate limits already name exposed tools).
func (r Ref) Canonical() string {
	if r.Tool != nil && r.Tool.ExposedName != "" {
		return r.Tool.ExposedName
	}
	return r.Name
}

// CallContext is the context of an upstream call: bounded by CallTimeout and by the
// request's own deadline (the Lambda deadline less 1 s), which go-sdk does not pass to
// tool handlers, and cancelled with ctx — but carrying none of ctx's values except the
// request id, the span and the log fields. go-sdk keeps the inbound Mcp-Protocol-Version
// in the request context and its client would reuse it for the upstream connect (a
// 2026-07-28 client made the gateway offer 2026-07-28 to a 2025-11-25 upstream, which
// answered 400).
func (f *Forwarder) CallContext(ctx context.Context, st *request.State) (context.Context, context.CancelFunc) {
	timeout := f.o.CallTimeout
	if !st.Deadline.IsZero() {
		if left := time.Until(st.Deadline) - time.Second; left < timeout {
			timeout = max(left, 100*time.Millisecond)
		}
	}
	up, cancel := context.WithTimeout(logx.WithRequestID(telemetry.Carry(context.Background(), ctx), st.RequestID), timeout)
	stop := context.AfterFunc(ctx, cancel)
	return up, func() { stop(); cancel() }
}

// Send forwards one request to target with ctx's deadline (the task worker's path).
func (f *Forwarder) Send(ctx context.Context, target mcpclient.Target, method string, params json.RawMessage) (json.RawMessage, error) {
	return f.o.Upstreams.Forward(ctx, target, method, params, nil)
}
