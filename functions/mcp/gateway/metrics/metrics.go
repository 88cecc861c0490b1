// Package metrics writes the gateway's CloudWatch Embedded Metric Format lines
// (docs/OPERATIONS.md): one per tool call and one per upstream leg of a proxied call, in
// namespace Agentpack/Gateway. Lambda sends stdout to CloudWatch Logs, which extracts the
// metrics; locally the lines go wherever the writer points.
package metrics

import (
	"io"
	"time"

	"github.com/agentpack/gateway/shared/emf"
)

// Namespace is the CloudWatch namespace of every metric written here.
const Namespace = "Agentpack/Gateway"

// EMF writes the gateway's EMF lines to one writer, a whole line per Write (shared/emf). A
// nil *EMF, or one with a nil writer, writes nothing.
type EMF struct {
	w *emf.Writer
}

// New returns an EMF writing to w (nil disables).
func New(w io.Writer) *EMF { return &EMF{w: emf.NewWriter(w)} }

// toolCallSchema: ToolCallDuration (Milliseconds) and ToolCalls (Count) by {kind, outcome},
// the tool name as a property.
var toolCallSchema = emf.NewSchema(Namespace, [][]string{{"kind", "outcome"}},
	emf.Metric{Name: "ToolCallDuration", Unit: emf.Milliseconds}, emf.Metric{Name: "ToolCalls", Unit: emf.Count})

// upstreamSchema: UpstreamCalls (Count) and UpstreamLatency (Milliseconds), per connection
// ({connection_id}) and per connection and outcome ({connection_id, outcome}). The
// dashboard's "Upstream latency by connection" widget searches the first set. Each
// connection that receives calls is its own metric (CloudWatch bills per metric; one
// without data points costs nothing).
var upstreamSchema = emf.NewSchema(Namespace, [][]string{{"connection_id"}, {"connection_id", "outcome"}},
	emf.Metric{Name: "UpstreamLatency", Unit: emf.Milliseconds}, emf.Metric{Name: "UpstreamCalls", Unit: emf.Count})

// rateLimitSchema: RateLimitDecisions (Count) by {outcome}, the refusing window as a
// property (docs/RATE-LIMITS.md).
var rateLimitSchema = emf.NewSchema(Namespace, [][]string{{"outcome"}},
	emf.Metric{Name: "RateLimitDecisions", Unit: emf.Count})

// cacheSchema: CacheHits, CacheMisses, CacheEvictions (Count, since the previous line of
// that cache) and CacheBytes (Bytes, the weight held now) by {cache}
// (docs/CATALOG.md "Many workspaces per instance").
var cacheSchema = emf.NewSchema(Namespace, [][]string{{"cache"}},
	emf.Metric{Name: "CacheHits", Unit: emf.Count}, emf.Metric{Name: "CacheMisses", Unit: emf.Count},
	emf.Metric{Name: "CacheEvictions", Unit: emf.Count}, emf.Metric{Name: "CacheBytes", Unit: emf.Bytes})

// ToolCall records one tool call: kind "builtin" or "proxied"; outcome "ok", "tool_error",
// "error", "rate_limited" (refused by a rate limit, nothing forwarded) or "input_required"
// (the upstream asked the client for input; the retry completes the call); d the call's duration. requestID joins the line to the access log line.
func (m *EMF) ToolCall(kind, tool, outcome, requestID string, d time.Duration) {
	if m == nil {
		return
	}
	m.w.Write(toolCallSchema, []emf.Prop{{Key: "kind", Value: kind}, {Key: "outcome", Value: outcome},
		{Key: "tool", Value: tool}, {Key: "request_id", Value: requestID}}, emf.Millis(d), 1)
}

// UpstreamCall records the upstream leg of one proxied tool call: connectionID is the
// connection's id (never its URL), outcome "ok", "tool_error" (the upstream answered
// isError), "input_required" (an InputRequiredResult), "rpc_error" (the upstream answered a JSON-RPC error) or "error" (no answer:
// transport failure, timeout), latency
// the time from sending the call upstream to its answer.
func (m *EMF) UpstreamCall(connectionID, outcome, requestID string, latency time.Duration) {
	if m == nil {
		return
	}
	m.w.Write(upstreamSchema, []emf.Prop{{Key: "connection_id", Value: connectionID}, {Key: "outcome", Value: outcome},
		{Key: "request_id", Value: requestID}}, emf.Millis(latency), 1)
}

// RateLimit records one rate-limit decision on a call some limit applies to: outcome
// "allowed", "refused" (window "minute" or "day", the one that refused) or "error" (the
// count could not be taken).
func (m *EMF) RateLimit(outcome, window, requestID string) {
	if m == nil {
		return
	}
	m.w.Write(rateLimitSchema, []emf.Prop{{Key: "outcome", Value: outcome}, {Key: "window", Value: window},
		{Key: "request_id", Value: requestID}}, 1)
}

// Cache records one cache's counters over an interval: name "catalog", "servers",
// "targets" or "sessions" (the upstream session pool, whose hits and misses are always 0);
// hits, misses and evictions since the previous line for it; bytes held now.
func (m *EMF) Cache(name string, hits, misses, evictions, bytes uint64) {
	if m == nil {
		return
	}
	m.w.Write(cacheSchema, []emf.Prop{{Key: "cache", Value: name}},
		float64(hits), float64(misses), float64(evictions), float64(bytes))
}
