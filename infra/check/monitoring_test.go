package check

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/awslabs/goformation/v7/intrinsics"
	"github.com/google/go-cmp/cmp"
)

// wantAlarms are the alarms of issue 17 (docs/OPERATIONS.md) in both templates.
var wantAlarms = []string{
	"Gateway5xxAlarm", "GatewayErrorRateAlarm", "UpstreamFailureRateAlarm", "GatewayP99DurationAlarm",
	"HealthCheckFailuresAlarm", "HealthCheckDownAlarm",
	"McpFunctionErrorsAlarm", "McpFunctionThrottlesAlarm", "MarketplaceFunctionErrorsAlarm",
	"MarketplaceFunctionThrottlesAlarm", "PinsFunctionErrorsAlarm", "PinsFunctionThrottlesAlarm",
	"HealthCheckFunctionErrorsAlarm", "HealthCheckFunctionThrottlesAlarm",
	"DbProxySaturationAlarm", "DbProxyPinnedSessionsAlarm",
}

// samRaw is template.yaml as JSON with its intrinsics left as they are ({"Ref": …}).
func samRaw(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testpeer.RepoRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := intrinsics.ProcessYAML(raw, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// monitoringFacts is what both templates must agree on for operations: every alarm's
// properties (tags aside), the dashboard body, and the functions' tracing settings.
type monitoringFacts struct {
	Alarms    map[string]any
	Dashboard string // compact JSON of the body
	Tracing   map[string]any
}

func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("dashboard body is not JSON: %v", err)
	}
	return b.String()
}

// dashboardBody returns the body string of a {"Fn::Sub": [body, vars]} and its variable names.
func dashboardBody(t *testing.T, props map[string]any) (string, []string) {
	t.Helper()
	sub, _ := props["DashboardBody"].(map[string]any)["Fn::Sub"].([]any)
	if len(sub) != 2 {
		t.Fatalf("DashboardBody is not Fn::Sub [body, vars]: %v", props["DashboardBody"])
	}
	var vars []string
	for k := range sub[1].(map[string]any) {
		vars = append(vars, k)
	}
	slices.Sort(vars)
	return compactJSON(t, sub[0].(string)), vars
}

func extractMonitoring(t *testing.T, doc map[string]any, sam bool) monitoringFacts {
	t.Helper()
	f := monitoringFacts{Alarms: map[string]any{}, Tracing: map[string]any{}}
	for id, r := range doc["Resources"].(map[string]any) {
		r := r.(map[string]any)
		props, _ := r["Properties"].(map[string]any)
		switch r["Type"] {
		case "AWS::CloudWatch::Alarm":
			p := map[string]any{}
			for k, v := range props {
				if k != "Tags" {
					p[k] = v
				}
			}
			f.Alarms[id] = p
		case "AWS::CloudWatch::Dashboard":
			body, vars := dashboardBody(t, props)
			if id != "Dashboard" || !slices.Equal(vars, []string{"ProxyName"}) {
				t.Errorf("dashboard %s with variables %v", id, vars)
			}
			f.Dashboard = body
		case "AWS::Lambda::Function": // CDK
			f.Tracing["Mode"] = props["TracingConfig"].(map[string]any)["Mode"]
			f.Tracing["Layers"] = props["Layers"]
		}
	}
	if sam {
		g := doc["Globals"].(map[string]any)["Function"].(map[string]any)
		f.Tracing["Mode"], f.Tracing["Layers"] = g["Tracing"], g["Layers"]
	}
	return f
}

// TestMonitoringParitySAMvsCDK (issue 17): both templates define the same alarms with the
// same properties (metric, statistic, period, threshold, actions — tags aside), the same
// dashboard body (the one of infra/cdk/dashboard.json), the same X-Ray and ADOT settings
// on every function, the alarm topic with its optional e-mail subscription, and every
// alarm notifies the topic.
func TestMonitoringParitySAMvsCDK(t *testing.T) {
	sam := extractMonitoring(t, samRaw(t), true)
	cdk := extractMonitoring(t, cdkTemplate(t), false)
	if d := cmp.Diff(sam, cdk); d != "" {
		t.Errorf("monitoring differs (-template.yaml +cdk):\n%s", d)
	}
	b, err := os.ReadFile(filepath.Join(testpeer.RepoRoot(t), "infra", "cdk", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sam.Dashboard != compactJSON(t, string(b)) {
		t.Error("template.yaml's dashboard body is not infra/cdk/dashboard.json")
	}
	var ids []string
	for id, a := range sam.Alarms {
		ids = append(ids, id)
		a := a.(map[string]any)
		js, _ := json.Marshal([]any{a["AlarmActions"], a["OKActions"]})
		if string(js) != `[[{"Ref":"AlarmTopic"}],[{"Ref":"AlarmTopic"}]]` || a["TreatMissingData"] != "notBreaching" {
			t.Errorf("%s: actions %s, missing data %v", id, js, a["TreatMissingData"])
		}
	}
	slices.Sort(ids)
	want := slices.Sorted(slices.Values(wantAlarms))
	if !slices.Equal(ids, want) {
		t.Errorf("alarms %v, want %v", ids, want)
	}
	// Every metric the alarms watch is drawn on the dashboard.
	for id, a := range sam.Alarms {
		js, _ := json.Marshal(a)
		for _, name := range metricNames(js) {
			if !strings.Contains(sam.Dashboard, `"`+name+`"`) {
				t.Errorf("%s watches %s, which the dashboard does not show", id, name)
			}
		}
	}
	res := samRaw(t)["Resources"].(map[string]any)
	for id, typ := range map[string]string{"AlarmTopic": "AWS::SNS::Topic", "AlarmEmailSubscription": "AWS::SNS::Subscription"} {
		r, ok := res[id].(map[string]any)
		if !ok || r["Type"] != typ {
			t.Errorf("template.yaml has no %s %s", typ, id)
		}
	}
	if res["AlarmEmailSubscription"].(map[string]any)["Condition"] != "HasAlarmEmail" ||
		res["DbProxySaturationAlarm"].(map[string]any)["Condition"] != "UseRds" {
		t.Error("the e-mail subscription or the proxy alarm is not conditional")
	}
}

// metricNames returns the MetricName values in an alarm's JSON.
func metricNames(js []byte) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "MetricName" {
					out = append(out, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var v any
	_ = json.Unmarshal(js, &v)
	walk(v)
	return out
}

// TestMonitoringParityDetectsDrift: a changed threshold, a missing alarm or a changed
// widget is noticed.
func TestMonitoringParityDetectsDrift(t *testing.T) {
	sam := extractMonitoring(t, samRaw(t), true)
	for _, mutate := range []func(f *monitoringFacts){
		func(f *monitoringFacts) { f.Alarms["Gateway5xxAlarm"].(map[string]any)["Threshold"] = 50.0 },
		func(f *monitoringFacts) { delete(f.Alarms, "DbProxySaturationAlarm") },
		func(f *monitoringFacts) { f.Dashboard = strings.Replace(f.Dashboard, "p99", "p90", 1) },
	} {
		cdk := extractMonitoring(t, cdkTemplate(t), false)
		mutate(&cdk)
		if cmp.Equal(sam, cdk) {
			t.Error("the comparison did not notice a drift")
		}
	}
}

// TestSAMTracingParameters: X-Ray mode and the ADOT layer are parameters; with the layer
// set the functions export to the collector's local OTLP/HTTP receiver, else nowhere.
func TestSAMTracingParameters(t *testing.T) {
	for _, c := range []struct {
		layer, endpoint string
	}{{"", ""}, {"arn:aws:lambda:eu-west-1:901920570463:layer:aws-otel-collector-arm64-ver-0-117-0:1", "http://localhost:4318"}} {
		tpl := parseSAM(t, map[string]any{"AdotCollectorLayerArn": c.layer, "XRayTracing": "PassThrough"})
		g, _ := json.Marshal(tpl.Globals["Function"])
		var glob struct {
			Tracing     string
			Layers      []string
			Environment struct{ Variables map[string]any }
		}
		if err := json.Unmarshal(g, &glob); err != nil {
			t.Fatal(err)
		}
		if glob.Tracing != "PassThrough" || glob.Environment.Variables["OTEL_EXPORTER_OTLP_ENDPOINT"] != c.endpoint ||
			(c.layer == "") != (len(glob.Layers) == 0) || (c.layer != "" && glob.Layers[0] != c.layer) {
			t.Errorf("layer %q: tracing %q, layers %v, endpoint %v", c.layer, glob.Tracing, glob.Layers,
				glob.Environment.Variables["OTEL_EXPORTER_OTLP_ENDPOINT"])
		}
	}
}
