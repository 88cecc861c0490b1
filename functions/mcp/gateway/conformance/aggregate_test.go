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
	"regexp"
	"slices"
	"strings"
	"testing"
)

// aggregateBaseline is the committed baseline of the 2026-07-28 run on the aggregate
// endpoint.
const aggregateBaseline = "expected-failures-2026-07-28-aggregate.yaml"

// aggregateDesignFailures names, per scenario, the checks of aggregateBaseline (its
// <scenario>:<check-id> entries) that fail on the aggregate endpoint by design, each with a
// text its error message contains that shows why (the fixture's tool, prompt or resource is
// addressed by its upstream name; the reasons are in the YAML file). The runner already
// fails the run when a listed check passes or another check fails; this adds that the
// listed check fails for the listed reason, so that a gateway bug cannot hide behind a
// design entry.
var aggregateDesignFailures = map[string]map[string]string{
	"tools-call-simple-text":       {"tools-call-simple-text": `unknown tool "test_simple_text"`},
	"tools-call-image":             {"tools-call-image": `unknown tool "test_image_content"`},
	"tools-call-audio":             {"tools-call-audio": `unknown tool "test_audio_content"`},
	"tools-call-embedded-resource": {"tools-call-embedded-resource": `unknown tool "test_embedded_resource"`},
	"tools-call-mixed-content":     {"tools-call-mixed-content": `unknown tool "test_multiple_content_types"`},
	"tools-call-error":             {"tools-call-error": `unknown tool "test_error_handling"`},
	"tools-call-with-progress":     {"tools-call-with-progress": `unknown tool "test_tool_with_progress"`},
	"json-schema-2020-12":          {"json-schema-2020-12-tool-found": `Tool 'json_schema_2020_12_tool' not found`},
	"server-stateless": {
		"sep-2575-server-rejects-undeclared-capability":          `does not list the diagnostic tool 'test_missing_capability'`,
		"sep-2575-missing-capability-http-400":                   `does not list the diagnostic tool 'test_missing_capability'`,
		"sep-2575-http-server-no-independent-requests-on-stream": `does not list the diagnostic tool 'test_streaming_elicitation'`,
		"sep-2575-server-no-log-without-loglevel":                `does not list the diagnostic tool 'test_logging_tool'`,
	},
	"input-required-result-basic-elicitation":       {"sep-2322-elicitation-incomplete": `unknown tool "test_input_required_result_elicitation"`},
	"input-required-result-basic-sampling":          {"sep-2322-sampling-incomplete": `unknown tool "test_input_required_result_sampling"`},
	"input-required-result-basic-list-roots":        {"sep-2322-list-roots-incomplete": `unknown tool "test_input_required_result_list_roots"`},
	"input-required-result-request-state":           {"sep-2322-request-state-incomplete": `unknown tool "test_input_required_result_request_state"`},
	"input-required-result-multiple-input-requests": {"sep-2322-multiple-inputs-incomplete": `unknown tool "test_input_required_result_multiple_inputs"`},
	// The scenario reports the unknown tool's error only as the missing first round.
	"input-required-result-multi-round":      {"sep-2322-multi-round-r1": `Expected InputRequiredResult with inputRequests and requestState`},
	"input-required-result-result-type":      {"sep-2322-result-type-included": `unknown tool "test_input_required_result_elicitation"`},
	"input-required-result-tampered-state":   {"sep-2322-reject-tampered-state": `could not get initial InputRequiredResult`},
	"input-required-result-capability-check": {"sep-2322-respect-client-capabilities": `unknown tool "test_input_required_result_capabilities"`},
	// Two WARNING checks: each quotes or implies the unknown tool's JSON-RPC error.
	"input-required-result-ignore-extra-params":    {"sep-2322-ignore-unexpected-params": `unknown tool "test_input_required_result_elicitation"`},
	"input-required-result-missing-input-response": {"sep-2322-missing-response-rerequests": `Server returned JSON-RPC error instead of re-requesting`},
	"prompts-get-simple":                           {"prompts-get-simple": `unknown prompt "test_simple_prompt"`},
	"prompts-get-with-args":                        {"prompts-get-with-args": `unknown prompt "test_prompt_with_arguments"`},
	"prompts-get-embedded-resource":                {"prompts-get-embedded-resource": `unknown prompt "test_prompt_with_embedded_resource"`},
	"prompts-get-with-image":                       {"prompts-get-with-image": `unknown prompt "test_prompt_with_image"`},
	"input-required-result-non-tool-request":       {"sep-2322-non-tool-incomplete": `unknown prompt "test_input_required_result_prompt"`},
	"completion-complete":                          {"completion-complete": `method not found: "completion/complete"`},
	"resources-read-text":                          {"resources-read-text": `Resource not found`},
	"resources-read-binary":                        {"resources-read-binary": `Resource not found`},
	"resources-templates-read":                     {"resources-templates-read": `Resource not found`},
}

// resultDir matches the runner's result directory of one scenario:
// server-<scenario>-<ISO timestamp>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// scenarioOf is the scenario name of a checks map key (a result directory), or the key.
func scenarioOf(dir string) string {
	if m := resultDir.FindStringSubmatch(dir); m != nil {
		return m[1]
	}
	return dir
}

// listedScenarios returns the "  - <entry>" lines of the baseline file name (a scenario, or
// <scenario>:<check-id>).
func listedScenarios(t *testing.T, name string) []string {
	t.Helper()
	raw, err := os.ReadFile(expectedFailuresFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if s, ok := strings.CutPrefix(line, "  - "); ok {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// unexpectedAggregateFailures returns the failed checks of an aggregate run that
// aggregateDesignFailures does not excuse (another check, or the named one with another
// message), and the excused checks that did not fail (the entry is stale).
func unexpectedAggregateFailures(checks map[string][]result) (unexpected, stale []string) {
	failed := map[string]bool{}
	for dir, rs := range checks {
		sc := scenarioOf(dir)
		for _, r := range rs {
			if r.Status != "FAILURE" && r.Status != "WARNING" {
				continue // the runner counts a WARNING as a failure too
			}
			want, ok := aggregateDesignFailures[sc][r.ID]
			if !ok || !strings.Contains(r.ErrorMessage, want) {
				unexpected = append(unexpected, sc+": "+r.ID+" ("+r.Status+"): "+r.ErrorMessage)
				continue
			}
			failed[sc+"\x00"+r.ID] = true
		}
	}
	for sc, ids := range aggregateDesignFailures {
		for id := range ids {
			if !failed[sc+"\x00"+id] {
				stale = append(stale, sc+": "+id)
			}
		}
	}
	slices.Sort(unexpected)
	slices.Sort(stale)
	return unexpected, stale
}

// TestAggregateBaselineInStep: the <scenario>:<check-id> entries of the committed
// aggregate baseline are exactly the checks aggregateDesignFailures explains, so the two
// lists cannot drift apart.
func TestAggregateBaselineInStep(t *testing.T) {
	listed := listedScenarios(t, aggregateBaseline)
	var explained []string
	for sc, ids := range aggregateDesignFailures {
		for id := range ids {
			explained = append(explained, sc+":"+id)
		}
	}
	slices.Sort(listed)
	slices.Sort(explained)
	if !slices.Equal(listed, explained) {
		t.Errorf("%s lists %v,\naggregateDesignFailures explains %v", aggregateBaseline, listed, explained)
	}
}

// renamedScenarios run against the aggregate endpoint behind renameProxy, by name: the
// scenarios of aggregateBaseline that fail there only because they call a tool by its
// upstream name. With the name the aggregate endpoint lists for it, each must pass, so the
// aggregate endpoint's forwarding (content, isError, progress, InputRequiredResult rounds)
// is gated by the suite's own checks. The fixture's scenarios (prefix of the Go fixture's
// connection), then the reference server's.
var renamedScenarios = map[string][]string{
	"fixture": {
		"tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource",
		"tools-call-mixed-content", "tools-call-error", "tools-call-with-progress",
	},
	"reference": {
		"input-required-result-basic-elicitation", "input-required-result-basic-sampling",
		"input-required-result-basic-list-roots", "input-required-result-request-state",
		"input-required-result-multiple-input-requests", "input-required-result-multi-round",
		"input-required-result-result-type", "input-required-result-tampered-state",
		"input-required-result-capability-check", "input-required-result-ignore-extra-params",
		"input-required-result-missing-input-response",
	},
}

// renameProxy serves a loopback reverse proxy to target that gives a tools/call the name
// the aggregate endpoint lists for it: params.name and the 2026-07-28 Mcp-Name header
// become prefix+name unless they already start with "mcp_" or "agentpack_". Nothing else
// is changed (ids, other members and the answers pass byte for byte).
func renameProxy(t *testing.T, target, prefix string) string {
	t.Helper()
	u, _ := url.Parse(target)
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Host = r.In.Host
	}}
	rename := func(n string) string {
		if n == "" || strings.HasPrefix(n, "mcp_") || strings.HasPrefix(n, "agentpack_") {
			return n
		}
		return prefix + n
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var m map[string]json.RawMessage
		var p map[string]json.RawMessage
		var name string
		if json.Unmarshal(body, &m) == nil && string(m["method"]) == `"tools/call"` &&
			json.Unmarshal(m["params"], &p) == nil && json.Unmarshal(p["name"], &name) == nil {
			p["name"], _ = json.Marshal(rename(name))
			m["params"], _ = json.Marshal(p)
			body, _ = json.Marshal(m)
			if h := r.Header.Get("Mcp-Name"); h != "" {
				r.Header.Set("Mcp-Name", rename(h))
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s.URL
}
