package conformance_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
)

// The reference upstream: the conformance suite's own "everything" server
// (test/npm/conformance-everything-server.mts, vendored from modelcontextprotocol/conformance
// at 0.2.0-alpha.11), run by test/npm's Node 22 and put behind a second single-server
// endpoint. It implements the 2026-07-28 diagnostic tools and prompt the Go fixture lacks
// (test_missing_capability, test_streaming_elicitation, test_logging_tool, the
// test_input_required_result_* tools and prompt), so the scenarios that call them verify
// the gateway's pass-through of InputRequiredResult, inputResponses and requestState
// instead of being excused.

// referenceScenarios are the 2026-07-28 scenarios of conformance 0.2.0-alpha.12 that run
// against the reference upstream, each by name, gating with
// expected-failures-2026-07-28.yaml. The Go fixture's full-suite run excuses exactly these
// (fixtureBaseline): they need the reference server's tools, and this leg verifies them.
var referenceScenarios = []string{
	"server-stateless",
	"input-required-result-basic-elicitation", "input-required-result-basic-sampling",
	"input-required-result-basic-list-roots", "input-required-result-request-state",
	"input-required-result-multiple-input-requests", "input-required-result-multi-round",
	"input-required-result-non-tool-request", "input-required-result-result-type",
	"input-required-result-tampered-state", "input-required-result-capability-check",
	"input-required-result-missing-input-response", "input-required-result-ignore-extra-params",
}

// startReference starts the reference server on a free loopback port with node (test/npm's
// Node 22: it runs the .mts by type stripping) behind refuseInitialize, and returns the
// proxy's MCP endpoint URL; t.Cleanup stops both.
func startReference(t *testing.T, node, npm string) string {
	t.Helper()
	addr := testpeer.StartNodeBinary(t, node, npm, []string{"PORT=0"}, filepath.Join(npm, "conformance-everything-server.mts"))
	s := httptest.NewServer(refuseInitialize(&url.URL{Scheme: "http", Host: addr}))
	t.Cleanup(s.Close)
	return s.URL + "/mcp"
}

// refuseInitialize is a loopback proxy to target that makes the reference server a
// 2026-07-28-only upstream: it answers an initialize with HTTP 400 and -32022 naming
// 2026-07-28 (as a server of that revision only does) and passes everything else on. The
// reference server also serves the older revisions with sessions, and the gateway offers
// 2025-11-25 first (mcpclient.PreferredProtocolVersion), but the diagnostic tools are
// listed and served only on its 2026-07-28 path. Refused, the gateway connects again with
// the newest revision (server/discover) and forwards the caller's requests at 2026-07-28.
func refuseInitialize(target *url.URL) http.Handler {
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = target.Host }}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "initialize" {
			if len(m.ID) == 0 {
				m.ID = json.RawMessage("null")
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2026-07-28"]}}}`))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		rp.ServeHTTP(w, r)
	})
}

// headerScenarios run against testpeer.HeaderUpstream (x-mcp-header tools), by name, gating
// with expected-failures-2026-07-28.yaml; the Go fixture's full run excuses them too.
var headerScenarios = []string{"http-custom-header-server-validation"}

// fixtureBaseline writes the baseline of the Go fixture's 2026-07-28 full-suite run: the
// committed expected-failures-2026-07-28.yaml plus referenceScenarios (verified against the
// reference upstream instead, so the committed file lists only what the gateway fails).
// It returns the file's path.
func fixtureBaseline(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(expectedFailuresFile(t, "expected-failures-2026-07-28.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(raw)
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	b.WriteString("  # Run against the reference upstream instead (reference_test.go):\n")
	for _, sc := range append(slices.Clone(referenceScenarios), headerScenarios...) {
		if !strings.Contains(string(raw), "\n  - "+sc+"\n") {
			b.WriteString("  - " + sc + "\n")
		}
	}
	p := filepath.Join(t.TempDir(), "expected-failures-fixture.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
