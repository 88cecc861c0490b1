package gateway

import (
	"encoding/json"
	"time"
)

// upstreamEMF is one EMF line per proxied call's upstream leg (issue 17): UpstreamCalls
// (Count) and UpstreamLatency (Milliseconds) in namespace Agentpack/Gateway, published
// per connection ({connection_id}) and per connection and outcome ({connection_id,
// outcome}). The dashboard's "Upstream latency by connection" widget searches the first
// set. Each connection that receives calls is its own metric (CloudWatch bills per
// metric): a workspace with many rarely used connections costs little, since a metric
// without data points is not billed.
type upstreamEMF struct {
	AWS struct {
		Timestamp         int64       `json:"Timestamp"`
		CloudWatchMetrics []emfMetric `json:"CloudWatchMetrics"`
	} `json:"_aws"`
	ConnectionID string  `json:"connection_id"`
	Outcome      string  `json:"outcome"`
	RequestID    string  `json:"request_id,omitempty"`
	LatencyMS    float64 `json:"UpstreamLatency"`
	Calls        int     `json:"UpstreamCalls"`
}

var upstreamDirective = []emfMetric{{
	Namespace:  "Agentpack/Gateway",
	Dimensions: [][]string{{"connection_id"}, {"connection_id", "outcome"}},
	Metrics: []map[string]string{
		{"Name": "UpstreamLatency", "Unit": "Milliseconds"},
		{"Name": "UpstreamCalls", "Unit": "Count"},
	},
}}

// upstreamCall records the upstream leg of one proxied tool call: connectionID is the
// connection's id (never its URL), outcome "ok", "tool_error" (the upstream answered
// isError) or "error" (no answer: transport failure, timeout, JSON-RPC error), latency
// the time from sending the call upstream to its answer. requestID joins it to the
// access line.
func (m *metrics) upstreamCall(connectionID, outcome, requestID string, latency time.Duration) {
	if m == nil || m.w == nil {
		return
	}
	var l upstreamEMF
	l.AWS.Timestamp = time.Now().UnixMilli()
	l.AWS.CloudWatchMetrics = upstreamDirective
	l.ConnectionID, l.Outcome, l.RequestID = connectionID, outcome, requestID
	l.LatencyMS = float64(latency.Microseconds()) / 1000
	l.Calls = 1
	b, _ := json.Marshal(l)
	b = append(b, '\n')
	m.mu.Lock()
	_, _ = m.w.Write(b)
	m.mu.Unlock()
}
