package metrics

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestUpstreamCallEMF: one line per call, a valid EMF directive over both dimension sets,
// the connection id and outcome as dimension values, latency in ms; nil writers are safe.
func TestUpstreamCallEMF(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	m := New(&buf)
	m.UpstreamCall("conn-1", "error", "req-1", 1500*time.Microsecond)
	var l struct {
		AWS struct {
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []map[string]string
			}
		} `json:"_aws"`
		ConnectionID string  `json:"connection_id"`
		Outcome      string  `json:"outcome"`
		RequestID    string  `json:"request_id"`
		Latency      float64 `json:"UpstreamLatency"`
		Calls        int     `json:"UpstreamCalls"`
	}
	if err := json.Unmarshal(buf.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	cw := l.AWS.CloudWatchMetrics
	if len(cw) != 1 || cw[0].Namespace != "Agentpack/Gateway" || len(cw[0].Dimensions) != 2 ||
		l.ConnectionID != "conn-1" || l.Outcome != "error" || l.RequestID != "req-1" || l.Latency != 1.5 || l.Calls != 1 {
		t.Errorf("EMF line %s", buf.String())
	}
	var none *EMF
	none.UpstreamCall("c", "ok", "", 0)
	(&EMF{}).UpstreamCall("c", "ok", "", 0)
}

// TestToolCallEMF: one line per call with the {kind, outcome} dimension set.
func TestToolCallEMF(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	New(&buf).ToolCall("proxied", "mcp_x_echo", "ok", "req-2", 2*time.Millisecond)
	var l struct {
		AWS struct {
			CloudWatchMetrics []struct {
				Dimensions [][]string
			}
		} `json:"_aws"`
		Kind, Outcome, Tool string
		Duration            float64 `json:"ToolCallDuration"`
		Calls               int     `json:"ToolCalls"`
	}
	if err := json.Unmarshal(buf.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	if l.Kind != "proxied" || l.Outcome != "ok" || l.Tool != "mcp_x_echo" || l.Duration != 2 || l.Calls != 1 ||
		len(l.AWS.CloudWatchMetrics) != 1 || len(l.AWS.CloudWatchMetrics[0].Dimensions[0]) != 2 {
		t.Errorf("EMF line %s", buf.String())
	}
}

// TestRateLimitEMF: one RateLimitDecisions line by {outcome}, the refusing window as a
// property; nil writers are safe.
func TestRateLimitEMF(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	New(&buf).RateLimit("refused", "minute", "req-2")
	var l struct {
		AWS struct {
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []map[string]string
			}
		} `json:"_aws"`
		Outcome   string `json:"outcome"`
		Window    string `json:"window"`
		RequestID string `json:"request_id"`
		Decisions int    `json:"RateLimitDecisions"`
	}
	if err := json.Unmarshal(buf.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	cw := l.AWS.CloudWatchMetrics
	if len(cw) != 1 || cw[0].Namespace != Namespace || len(cw[0].Dimensions) != 1 || cw[0].Dimensions[0][0] != "outcome" ||
		cw[0].Metrics[0]["Name"] != "RateLimitDecisions" || l.Outcome != "refused" || l.Window != "minute" || l.RequestID != "req-2" || l.Decisions != 1 {
		t.Errorf("EMF line %s", buf.String())
	}
	var none *EMF
	none.RateLimit("allowed", "", "")
}
