// Package metrics writes the gateway's CloudWatch Embedded Metric Format lines
// (docs/OPERATIONS.md): one per tool call and one per upstream leg of a proxied call, in
// namespace Agentpack/Gateway. Lambda sends stdout to CloudWatch Logs, which extracts the
// metrics; locally the lines go wherever the writer points.
package metrics

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of every metric written here.
const Namespace = "Agentpack/Gateway"

// EMF writes EMF lines to one writer, a whole line per Write. A nil *EMF, or one with a
// nil writer, writes nothing.
type EMF struct {
	mu sync.Mutex
	w  io.Writer
}

// New returns an EMF writing to w (nil disables).
func New(w io.Writer) *EMF { return &EMF{w: w} }

type directive struct {
	Namespace  string              `json:"Namespace"`
	Dimensions [][]string          `json:"Dimensions"`
	Metrics    []map[string]string `json:"Metrics"`
}

type awsMeta struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

// toolCallLine: ToolCallDuration (Milliseconds) and ToolCalls (Count) by {kind, outcome},
// the tool name as a property.
type toolCallLine struct {
	AWS        awsMeta `json:"_aws"`
	Kind       string  `json:"kind"`
	Outcome    string  `json:"outcome"`
	Tool       string  `json:"tool"`
	RequestID  string  `json:"request_id,omitempty"`
	DurationMS float64 `json:"ToolCallDuration"`
	Calls      int     `json:"ToolCalls"`
}

var toolCallDirective = []directive{{
	Namespace:  Namespace,
	Dimensions: [][]string{{"kind", "outcome"}},
	Metrics: []map[string]string{
		{"Name": "ToolCallDuration", "Unit": "Milliseconds"},
		{"Name": "ToolCalls", "Unit": "Count"},
	},
}}

// upstreamLine: UpstreamCalls (Count) and UpstreamLatency (Milliseconds), per connection
// ({connection_id}) and per connection and outcome ({connection_id, outcome}). The
// dashboard's "Upstream latency by connection" widget searches the first set. Each
// connection that receives calls is its own metric (CloudWatch bills per metric; one
// without data points costs nothing).
type upstreamLine struct {
	AWS          awsMeta `json:"_aws"`
	ConnectionID string  `json:"connection_id"`
	Outcome      string  `json:"outcome"`
	RequestID    string  `json:"request_id,omitempty"`
	LatencyMS    float64 `json:"UpstreamLatency"`
	Calls        int     `json:"UpstreamCalls"`
}

var upstreamDirective = []directive{{
	Namespace:  Namespace,
	Dimensions: [][]string{{"connection_id"}, {"connection_id", "outcome"}},
	Metrics: []map[string]string{
		{"Name": "UpstreamLatency", "Unit": "Milliseconds"},
		{"Name": "UpstreamCalls", "Unit": "Count"},
	},
}}

// ToolCall records one tool call: kind "builtin" or "proxied"; outcome "ok", "tool_error",
// "error", "rate_limited" (refused by a rate limit, nothing forwarded) or "input_required"
// (the upstream asked the client for input; the retry completes the call); d the call's duration. requestID joins the line to the access log line.
func (m *EMF) ToolCall(kind, tool, outcome, requestID string, d time.Duration) {
	if m == nil || m.w == nil {
		return
	}
	m.write(toolCallLine{AWS: awsMeta{time.Now().UnixMilli(), toolCallDirective},
		Kind: kind, Tool: tool, Outcome: outcome, RequestID: requestID, DurationMS: ms(d), Calls: 1})
}

// UpstreamCall records the upstream leg of one proxied tool call: connectionID is the
// connection's id (never its URL), outcome "ok", "tool_error" (the upstream answered
// isError), "input_required" (an InputRequiredResult), "rpc_error" (the upstream answered a JSON-RPC error) or "error" (no answer:
// transport failure, timeout), latency
// the time from sending the call upstream to its answer.
func (m *EMF) UpstreamCall(connectionID, outcome, requestID string, latency time.Duration) {
	if m == nil || m.w == nil {
		return
	}
	m.write(upstreamLine{AWS: awsMeta{time.Now().UnixMilli(), upstreamDirective},
		ConnectionID: connectionID, Outcome: outcome, RequestID: requestID, LatencyMS: ms(latency), Calls: 1})
}

// rateLimitLine: RateLimitDecisions (Count) by {outcome}, the refusing window as a
// property (docs/RATE-LIMITS.md).
type rateLimitLine struct {
	AWS       awsMeta `json:"_aws"`
	Outcome   string  `json:"outcome"`
	Window    string  `json:"window,omitempty"`
	RequestID string  `json:"request_id,omitempty"`
	Decisions int     `json:"RateLimitDecisions"`
}

var rateLimitDirective = []directive{{
	Namespace:  Namespace,
	Dimensions: [][]string{{"outcome"}},
	Metrics:    []map[string]string{{"Name": "RateLimitDecisions", "Unit": "Count"}},
}}

// RateLimit records one rate-limit decision on a call some limit applies to: outcome
// "allowed", "refused" (window "minute" or "day", the one that refused) or "error" (the
// count could not be taken).
func (m *EMF) RateLimit(outcome, window, requestID string) {
	if m == nil || m.w == nil {
		return
	}
	m.write(rateLimitLine{AWS: awsMeta{time.Now().UnixMilli(), rateLimitDirective},
		Outcome: outcome, Window: window, RequestID: requestID, Decisions: 1})
}

// cacheLine: CacheHits, CacheMisses, CacheEvictions (Count, since the previous line of
// that cache) and CacheBytes (Bytes, the weight held now) by {cache}
// (docs/CATALOG.md "Many workspaces per instance").
type cacheLine struct {
	AWS       awsMeta `json:"_aws"`
	Cache     string  `json:"cache"`
	Hits      uint64  `json:"CacheHits"`
	Misses    uint64  `json:"CacheMisses"`
	Evictions uint64  `json:"CacheEvictions"`
	Bytes     uint64  `json:"CacheBytes"`
}

var cacheDirective = []directive{{
	Namespace:  Namespace,
	Dimensions: [][]string{{"cache"}},
	Metrics: []map[string]string{
		{"Name": "CacheHits", "Unit": "Count"},
		{"Name": "CacheMisses", "Unit": "Count"},
		{"Name": "CacheEvictions", "Unit": "Count"},
		{"Name": "CacheBytes", "Unit": "Bytes"},
	},
}}

// Cache records one cache's counters over an interval: name "catalog", "servers",
// "targets" or "sessions" (the upstream session pool, whose hits and misses are always 0);
// hits, misses and evictions since the previous line for it; bytes held now.
func (m *EMF) Cache(name string, hits, misses, evictions, bytes uint64) {
	if m == nil || m.w == nil {
		return
	}
	m.write(cacheLine{AWS: awsMeta{time.Now().UnixMilli(), cacheDirective},
		Cache: name, Hits: hits, Misses: misses, Evictions: evictions, Bytes: bytes})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (m *EMF) write(line any) {
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	b = append(b, '\n')
	m.mu.Lock()
	_, _ = m.w.Write(b)
	m.mu.Unlock()
}
