// Package otlptest is a real OTLP/HTTP trace receiver for tests: an HTTP server on a
// loopback port that accepts POST /v1/traces with a protobuf (optionally gzip-compressed)
// ExportTraceServiceRequest, decodes it with the official OTLP protobuf types
// (go.opentelemetry.io/proto/otlp) and keeps the spans. The OpenTelemetry Collector is
// too heavy to build here for a test; this is the part of it the tests need.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened: ids in lowercase hex, attribute values as text.
type Span struct {
	Name         string
	TraceID      string
	SpanID       string
	ParentSpanID string // "" for a root span
	Kind         tracepb.Span_SpanKind
	Attributes   map[string]string
	Resource     map[string]string
	Scope        string
	StatusCode   tracepb.Status_StatusCode
	StatusText   string
	EventAttrs   []map[string]string
}

// Receiver is a running OTLP/HTTP trace receiver.
type Receiver struct {
	// Endpoint is the base URL to put in OTEL_EXPORTER_OTLP_ENDPOINT
	// ("http://127.0.0.1:PORT"); traces go to Endpoint + "/v1/traces".
	Endpoint string
	srv      *httptest.Server
	mu       sync.Mutex
	spans    []Span
	requests int
}

// New starts a receiver on a free loopback port; it is closed at t's cleanup.
func New(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.Endpoint = r.srv.URL
	t.Cleanup(r.srv.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "only POST /v1/traces", http.StatusNotFound)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "unsupported content type "+ct, http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(io.LimitReader(body, 32<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range msg.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()),
					SpanID: hex.EncodeToString(s.GetSpanId()), ParentSpanID: hex.EncodeToString(s.GetParentSpanId()),
					Kind: s.GetKind(), Attributes: attrs(s.GetAttributes()), Resource: res,
					Scope: ss.GetScope().GetName(), StatusCode: s.GetStatus().GetCode(), StatusText: s.GetStatus().GetMessage()}
				for _, ev := range s.GetEvents() {
					sp.EventAttrs = append(sp.EventAttrs, attrs(ev.GetAttributes()))
				}
				got = append(got, sp)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.requests++
	r.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = value(kv.GetValue())
	}
	return m
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, value(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return v.String()
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// WaitFor polls until ok(spans) holds or timeout passes, and returns the spans.
func (r *Receiver) WaitFor(timeout time.Duration, ok func([]Span) bool) ([]Span, bool) {
	deadline := time.Now().Add(timeout)
	for {
		s := r.Spans()
		if ok(s) {
			return s, true
		}
		if time.Now().After(deadline) {
			return s, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Find returns the first span of spans with the name, or nil.
func Find(spans []Span, pred func(Span) bool) *Span {
	for i := range spans {
		if pred(spans[i]) {
			return &spans[i]
		}
	}
	return nil
}

// Text is everything of spans as text (names, attributes, resources, statuses, event
// attributes), for checks that a value appears nowhere.
func Text(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%s %s %v %v %s %v\n", s.Name, s.Scope, s.Attributes, s.Resource, s.StatusText, s.EventAttrs)
	}
	return b.String()
}
