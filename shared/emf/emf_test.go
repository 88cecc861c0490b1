package emf

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var testSchema = NewSchema("Agentpack/Test", [][]string{{"kind"}, {"kind", "outcome"}},
	Metric{"Calls", Count}, Metric{"Latency", Milliseconds})

func newTestWriter(buf *bytes.Buffer) *Writer {
	w := NewWriter(buf)
	w.now = func() time.Time { return time.UnixMilli(1700000000123) }
	return w
}

// TestLineIsEMF: the line decodes as the EMF specification's shape — the directive under
// _aws, every dimension a member, every metric a number member.
func TestLineIsEMF(t *testing.T) {
	var buf bytes.Buffer
	newTestWriter(&buf).Write(testSchema, []Prop{{"kind", "proxied"}, {"outcome", "ok"}, {"request_id", ""}, {"tool", "a\"b\n\xff"}}, 1, 2.5)
	line := buf.String()
	if !strings.HasSuffix(line, "}\n") || strings.Count(line, "\n") != 1 {
		t.Fatalf("not one line: %q", line)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("line is not JSON: %v\n%s", err, line)
	}
	want := map[string]any{
		"_aws": map[string]any{
			"Timestamp": float64(1700000000123),
			"CloudWatchMetrics": []any{map[string]any{
				"Namespace":  "Agentpack/Test",
				"Dimensions": []any{[]any{"kind"}, []any{"kind", "outcome"}},
				"Metrics": []any{
					map[string]any{"Name": "Calls", "Unit": "Count"},
					map[string]any{"Name": "Latency", "Unit": "Milliseconds"},
				},
			}},
		},
		"kind": "proxied", "outcome": "ok", "tool": "a\"b\n\uFFFD",
		"Calls": float64(1), "Latency": 2.5,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("line (-want +got):\n%s", d)
	}
}

// TestValuesJSONCannotCarry: missing values are 0 and NaN/Inf become 0, so the line stays JSON.
func TestValuesJSONCannotCarry(t *testing.T) {
	var buf bytes.Buffer
	newTestWriter(&buf).Write(testSchema, nil, math.NaN())
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("line is not JSON: %v\n%s", err, buf.String())
	}
	if got["Calls"] != 0.0 || got["Latency"] != 0.0 {
		t.Errorf("Calls, Latency = %v, %v; want 0, 0", got["Calls"], got["Latency"])
	}
	buf.Reset()
	newTestWriter(&buf).Write(testSchema, nil, math.Inf(1), 3, 99)
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil || got["Calls"] != 0.0 || got["Latency"] != 3.0 {
		t.Errorf("Inf line = %s (err %v)", buf.String(), err)
	}
}

func TestNilWriterWritesNothing(t *testing.T) {
	var w *Writer
	w.Write(testSchema, nil, 1) // must not panic
	NewWriter(nil).Write(testSchema, nil, 1)
}

// TestConcurrentLinesStayWhole: lines written from many goroutines never interleave.
func TestConcurrentLinesStayWhole(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { w.Write(testSchema, []Prop{{"kind", strings.Repeat("x", i)}}, float64(i)) })
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d lines, want 50", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("interleaved line: %q", l)
		}
	}
}

func TestNewSchemaRefusesBadSchemas(t *testing.T) {
	for name, f := range map[string]func(){
		"no metric":     func() { NewSchema("N", nil) },
		"repeated name": func() { NewSchema("N", nil, Metric{"A", Count}, Metric{"A", Bytes}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("NewSchema did not panic")
				}
			}()
			f()
		})
	}
}

// TestAppendStringIsJSONMarshal: appendString writes the bytes json.Marshal writes, for
// every single byte, a request id, a tool name, HTML characters, non-ASCII and invalid UTF-8.
func TestAppendStringIsJSONMarshal(t *testing.T) {
	ins := []string{"", "ToolCalls", "mcp_demo_echo", "3f2a9c1e-0000-4000-8000-000000000001", `a"b\c`,
		"<script>&", "héllo", "日本", "\xff\xfe", "tab\there", "\u2028", "del\x7f"}
	for c := range 256 {
		ins = append(ins, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
	}
	for _, s := range ins {
		want, _ := json.Marshal(s)
		if got := appendString([]byte("p:"), s); string(got) != "p:"+string(want) {
			t.Errorf("appendString(%q) = %s, json.Marshal %s", s, got[2:], want)
		}
	}
}
