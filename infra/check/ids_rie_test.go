package check

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/infra/rie"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/telemetry/otlptest"
	"github.com/agentpack/gateway/shared/testpeer"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

var startRE = regexp.MustCompile(`START RequestId: ([0-9a-fA-F-]+)`)

// TestRequestIDsUnderEmulator (issue 17): the pins and the mcp bootstraps under the
// Lambda runtime emulator, with tracing exported to a real OTLP/HTTP receiver on loopback,
// each answer one API Gateway v2 event with exactly one access line whose
// lambda_request_id is the id the emulator assigned (its START line) and whose
// apigw_request_id is the event's requestContext.requestId — not the forged
// X-GoLambdaProxy-* header the event also carries — with the route, status and the
// request_id the client got as X-Request-Id (for pins, which takes its request id from
// the middleware, that is the Lambda id itself; pins also logs workspace and principal).
// The invocation's spans reach the receiver before the invoke returns (flushed per
// invocation): a server span carrying the Lambda id, for pins with a query span under it.
func TestRequestIDsUnderEmulator(t *testing.T) {
	root := testpeer.RepoRoot(t)
	emulator := requireEmulator(t, root)
	_, dbURL := dbtest.Fresh(t)
	seedEventRows(t, dbURL)
	token, err := auth.Mint(testJWTSecret, auth.Principal{Subject: "infra-ids", Role: auth.RoleMember,
		Workspaces: []string{eventWorkspace}}, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fn, event, route string
		pins             bool
	}{
		{"pins", "pins-list.json", "GET /api/chats/{chatId}/pins", true},
		{"mcp", "mcp-tools-list.json", "/mcp/{workspaceId}", false},
	} {
		t.Run(c.fn, func(t *testing.T) {
			rcv := otlptest.New(t)
			ctx := t.Context()
			bootstrap, _, err := rie.Build(ctx, root, c.fn, t.TempDir(), "")
			if err != nil {
				t.Fatal(err)
			}
			e, err := rie.Start(ctx, rie.Options{Emulator: emulator, Bootstrap: bootstrap, Timeout: 30 * time.Second,
				Env: []string{"AWS_LAMBDA_FUNCTION_NAME=" + c.fn, "AWS_REGION=eu-west-1", "APP_ENV=local", "LOG_LEVEL=info",
					"DATABASE_URL=" + dbURL, "JWT_SECRET=" + testJWTSecret, "CATALOG_DIR=" + t.TempDir(),
					"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.Endpoint}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Stop)
			defer func() {
				if t.Failed() {
					t.Logf("emulator output:\n%s", e.Output())
				}
			}()

			var ev map[string]any
			if err := json.Unmarshal(loadEvent(t, root, c.event, token), &ev); err != nil {
				t.Fatal(err)
			}
			h := ev["headers"].(map[string]any)
			h["x-golambdaproxy-apigw-context"] = `{"requestId":"forged-apigw-id","routeKey":"forged"}`
			h["x-request-id"] = "forged-client-id"
			apigwID := ev["requestContext"].(map[string]any)["requestId"].(string)
			payload, _ := json.Marshal(ev)
			inv, err := e.Invoke(ctx, payload)
			if err != nil {
				t.Fatal(err)
			}
			r := httpOK(t, inv, 200)

			out := e.Output()
			m := startRE.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no START line in the emulator output")
			}
			lambdaID := m[1]
			var access []map[string]any
			for _, l := range strings.Split(out, "\n") {
				var line map[string]any
				if json.Unmarshal([]byte(strings.TrimSpace(l)), &line) == nil && line["msg"] == "access" {
					access = append(access, line)
				}
			}
			if len(access) != 1 {
				t.Fatalf("%d access lines, want 1", len(access))
			}
			a := access[0]
			want := map[string]any{"lambda_request_id": lambdaID, "apigw_request_id": apigwID,
				"request_id": r.Headers["X-Request-Id"], "route": c.route, "status": 200.0}
			if c.pins {
				want["request_id"], want["workspace"], want["principal"], want["method"] = lambdaID, eventWorkspace, "infra-ids", "GET"
				if r.Headers["X-Request-Id"] != lambdaID {
					t.Errorf("X-Request-Id %q, want the Lambda id %q", r.Headers["X-Request-Id"], lambdaID)
				}
			}
			for k, v := range want {
				if a[k] != v {
					t.Errorf("access %s = %v, want %v", k, a[k], v)
				}
			}
			for _, k := range []string{"duration_ms", "bytes", "trace_id", "method"} {
				if _, ok := a[k]; !ok {
					t.Errorf("access line without %s: %v", k, a)
				}
			}
			if strings.Contains(out, "forged") || strings.Contains(out, token) {
				t.Error("the output holds a forged id or the token")
			}

			// Flushed within the invocation: already at the receiver (a short grace for the
			// receiver's own bookkeeping).
			spans, _ := rcv.WaitFor(time.Second, func(s []otlptest.Span) bool {
				return otlptest.Find(s, func(s otlptest.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER }) != nil
			})
			server := otlptest.Find(spans, func(s otlptest.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER })
			if server == nil {
				t.Fatalf("no server span received:\n%s", otlptest.Text(spans))
			}
			if server.Attributes["faas.invocation_id"] != lambdaID || server.Attributes["aws.apigateway.request_id"] != apigwID ||
				server.TraceID != a["trace_id"] || server.Resource["faas.name"] != c.fn {
				t.Errorf("server span %+v", *server)
			}
			if c.pins && otlptest.Find(spans, func(s otlptest.Span) bool {
				return s.ParentSpanID == server.SpanID && s.Attributes["db.system.name"] == "postgresql"
			}) == nil {
				t.Errorf("no query span under the request span:\n%s", otlptest.Text(spans))
			}
		})
	}
}
