package telemetry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// httpClient is the OTLP/HTTP (binary protobuf) transport of the official SDK's OTLP trace
// exporter (otlptrace.New): it POSTs ExportTraceServiceRequest bodies to the traces
// endpoint. It replaces otlptracehttp, whose configuration code pulls gRPC into the
// binary (about 11 MB of the function's bootstrap, make build); the spans, their protobuf
// form and the batching are the SDK's own. Configured by the standard variables
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or OTEL_EXPORTER_OTLP_ENDPOINT (+
// "/v1/traces"), OTEL_EXPORTER_OTLP[_TRACES]_HEADERS ("k=v,k2=v2", values URL-encoded) and
// OTEL_EXPORTER_OTLP[_TRACES]_TIMEOUT (milliseconds, default 10000).
type httpClient struct {
	endpoint string
	headers  map[string]string
	client   *http.Client
}

func newHTTPClient() (*httpClient, error) {
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = strings.TrimRight(os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces"
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("telemetry: OTLP traces endpoint %q is not an http(s) URL", endpoint)
	}
	timeout := 10 * time.Second
	if v := firstEnv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"); v != "" {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			timeout = time.Duration(ms) * time.Millisecond
		}
	}
	headers := map[string]string{}
	for _, kv := range strings.Split(firstEnv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			continue
		}
		if dv, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
			v = dv
		}
		headers[strings.TrimSpace(k)] = v
	}
	return &httpClient{endpoint: endpoint, headers: headers, client: &http.Client{Timeout: timeout}}, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

func (c *httpClient) Start(context.Context) error { return nil }
func (c *httpClient) Stop(context.Context) error  { return nil }

// UploadTraces sends one ExportTraceServiceRequest: field 1, resource_spans, repeated
// (opentelemetry-proto collector/trace/v1), encoded here with protowire so that the
// collector package and its gRPC service stubs stay out of the binary.
func (c *httpClient) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	var body []byte
	for _, rs := range spans {
		b, err := proto.Marshal(rs)
		if err != nil {
			return err
		}
		body = protowire.AppendTag(body, 1, protowire.BytesType)
		body = protowire.AppendBytes(body, b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("telemetry: OTLP endpoint answered %d", resp.StatusCode)
	}
	return nil
}
