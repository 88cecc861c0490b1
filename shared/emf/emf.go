// Package emf writes CloudWatch Embedded Metric Format lines: one JSON object per line whose
// "_aws" member tells CloudWatch Logs which of its members are metrics, in which namespace,
// by which dimensions (the EMF specification, "Specification: Embedded metric format" in the
// CloudWatch user guide). Lambda sends stdout to CloudWatch Logs, which extracts the metrics;
// locally the lines go wherever the writer points.
//
// Every EMF line of the project goes through this package: the gateway's per-call lines
// (functions/mcp/gateway/metrics), the catalog's revalidation failures and the health
// check's pass summary.
package emf

import (
	"encoding/json"
	"io"
	"math"
	"strconv"
	"sync"
	"time"
)

// Unit is a CloudWatch metric unit.
type Unit string

// The units the project writes.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	Bytes        Unit = "Bytes"
)

// Metric names one metric of a Schema and its unit.
type Metric struct {
	Name string
	Unit Unit
}

// Schema is one kind of line: a namespace, its dimension sets (each a list of property
// names that every line of the kind carries) and its metrics, in the order Write takes
// their values. Build it once (NewSchema) and share it: its "_aws" directive is encoded once.
type Schema struct {
	directive []byte // the CloudWatchMetrics array, encoded
	metrics   []string
}

// NewSchema returns the Schema of namespace with the given dimension sets and metrics. It
// panics when metrics is empty or a name repeats: a schema is a package-level constant.
func NewSchema(namespace string, dimensions [][]string, metrics ...Metric) *Schema {
	if len(metrics) == 0 {
		panic("emf: a schema needs at least one metric")
	}
	defs := make([]map[string]string, len(metrics))
	names := make([]string, len(metrics))
	seen := map[string]bool{}
	for i, m := range metrics {
		if seen[m.Name] {
			panic("emf: metric " + m.Name + " repeats")
		}
		seen[m.Name] = true
		defs[i] = map[string]string{"Name": m.Name, "Unit": string(m.Unit)}
		names[i] = m.Name
	}
	if dimensions == nil {
		dimensions = [][]string{}
	}
	b, err := json.Marshal([]any{map[string]any{"Namespace": namespace, "Dimensions": dimensions, "Metrics": defs}})
	if err != nil {
		panic("emf: " + err.Error())
	}
	return &Schema{directive: b, metrics: names}
}

// Prop is one property of a line: a dimension value (its Key named in the schema's
// dimension sets) or a plain property CloudWatch Logs keeps for queries (a request id).
// An empty Value is left out of the line.
type Prop struct {
	Key, Value string
}

// Writer writes whole lines to one io.Writer, one Write call per line, safe for concurrent
// use. A nil *Writer, or one made with a nil io.Writer, writes nothing.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

// NewWriter returns a Writer to w (nil disables).
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, now: time.Now} }

// Write writes one line of schema s: its properties, then one value per metric of s in the
// schema's order (a missing value is 0, extra values are ignored; NaN and ±Inf, which JSON
// cannot carry, are written as 0). Write errors are dropped: metrics never fail a request.
func (w *Writer) Write(s *Schema, props []Prop, values ...float64) {
	if w == nil || w.w == nil {
		return
	}
	b := make([]byte, 0, 256+len(s.directive))
	b = append(b, `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, w.now().UnixMilli(), 10)
	b = append(b, `,"CloudWatchMetrics":`...)
	b = append(b, s.directive...)
	b = append(b, '}')
	for _, p := range props {
		if p.Value == "" {
			continue
		}
		b = append(b, ',')
		b = appendString(b, p.Key)
		b = append(b, ':')
		b = appendString(b, p.Value)
	}
	for i, name := range s.metrics {
		v := 0.0
		if i < len(values) && !math.IsNaN(values[i]) && !math.IsInf(values[i], 0) {
			v = values[i]
		}
		b = append(b, ',')
		b = appendString(b, name)
		b = append(b, ':')
		b = strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	b = append(b, '}', '\n')
	w.mu.Lock()
	_, _ = w.w.Write(b)
	w.mu.Unlock()
}

// Millis is d in milliseconds with microsecond precision, the unit of the duration metrics.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// appendString appends s as a JSON string, the bytes json.Marshal would write: printable
// ASCII other than '"', '\\', '<', '>' and '&' goes as it is (every metric name, dimension
// and id), anything else through json.Marshal (escapes; invalid UTF-8 becomes U+FFFD).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
