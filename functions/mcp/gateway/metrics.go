package gateway

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// metrics writes one CloudWatch Embedded Metric Format line per tool call (docs/DESIGN.md §4):
// ToolCallDuration (Milliseconds) and ToolCalls (Count), dimensioned by kind and outcome,
// with the tool name as a property.
type metrics struct {
	mu sync.Mutex
	w  io.Writer
}

type emfLine struct {
	AWS struct {
		Timestamp         int64       `json:"Timestamp"`
		CloudWatchMetrics []emfMetric `json:"CloudWatchMetrics"`
	} `json:"_aws"`
	Kind       string  `json:"kind"`
	Outcome    string  `json:"outcome"`
	Tool       string  `json:"tool"`
	RequestID  string  `json:"request_id,omitempty"`
	DurationMS float64 `json:"ToolCallDuration"`
	Calls      int     `json:"ToolCalls"`
}

type emfMetric struct {
	Namespace  string              `json:"Namespace"`
	Dimensions [][]string          `json:"Dimensions"`
	Metrics    []map[string]string `json:"Metrics"`
}

var emfDirective = []emfMetric{{
	Namespace:  "Agentpack/Gateway",
	Dimensions: [][]string{{"kind", "outcome"}},
	Metrics: []map[string]string{
		{"Name": "ToolCallDuration", "Unit": "Milliseconds"},
		{"Name": "ToolCalls", "Unit": "Count"},
	},
}}

// toolCall records one call. outcome is "ok", "tool_error" or "error".
func (m *metrics) toolCall(kind, tool, outcome, requestID string, d time.Duration) {
	if m == nil || m.w == nil {
		return
	}
	var l emfLine
	l.AWS.Timestamp = time.Now().UnixMilli()
	l.AWS.CloudWatchMetrics = emfDirective
	l.Kind, l.Tool, l.Outcome, l.RequestID = kind, tool, outcome, requestID
	l.DurationMS = float64(d.Microseconds()) / 1000
	l.Calls = 1
	b, _ := json.Marshal(l)
	b = append(b, '\n')
	m.mu.Lock()
	_, _ = m.w.Write(b)
	m.mu.Unlock()
}
