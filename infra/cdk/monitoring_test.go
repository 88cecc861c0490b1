package main

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// TestMonitoring (issue 17): the alarm topic with an optional e-mail subscription, the
// dashboard, an alarm for each signal of docs/OPERATIONS.md notifying the topic, and the
// tracing parameters on every function. Without RDS there is no proxy alarm (saturation,
// pinned sessions: issue 31).
func TestMonitoring(t *testing.T) {
	tpl := synth(t, "")
	tpl.ResourceCountIs(jsii.String("AWS::SNS::Topic"), jsii.Number(1))
	tpl.HasResource(jsii.String("AWS::SNS::Subscription"), map[string]any{
		"Condition":  "HasAlarmEmail",
		"Properties": map[string]any{"Protocol": "email", "Endpoint": map[string]any{"Ref": "AlarmEmail"}},
	})
	tpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Dashboard"), jsii.Number(1))
	tpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(16))
	tpl.AllResourcesProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
		"AlarmActions":     []any{map[string]any{"Ref": "AlarmTopic"}},
		"OKActions":        []any{map[string]any{"Ref": "AlarmTopic"}},
		"TreatMissingData": "notBreaching",
	})
	for id, props := range map[string]map[string]any{
		"Gateway5xxAlarm":         {"Namespace": "AWS/ApiGateway", "MetricName": "5xx", "Threshold": 5},
		"GatewayP99DurationAlarm": {"MetricName": "Duration", "ExtendedStatistic": "p99", "Threshold": 10000},
		"HealthCheckDownAlarm":    {"Namespace": "Agentpack/HealthCheck", "MetricName": "down"},
		"McpFunctionThrottlesAlarm": {"MetricName": "Throttles",
			"Dimensions": []any{map[string]any{"Name": "FunctionName", "Value": map[string]any{"Ref": "McpFunction"}}}},
		"DbProxySaturationAlarm": {"Threshold": 80, "Metrics": assertions.Match_ArrayWith(&[]any{
			assertions.Match_ObjectLike(&map[string]any{"Id": "saturation"})})},
		"UpstreamFailureRateAlarm": {"Threshold": 20},
		"DbProxyPinnedSessionsAlarm": {"Namespace": "AWS/RDS", "MetricName": "DatabaseConnectionsCurrentlySessionPinned",
			"Statistic": "Maximum", "Threshold": 1, "EvaluationPeriods": 2},
	} {
		found := tpl.FindResources(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"Properties": assertions.Match_ObjectLike(&props)})
		if _, ok := (*found)[id]; !ok {
			t.Errorf("%s: no alarm with %v", id, props)
		}
	}
	tpl.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
		"TracingConfig": map[string]any{"Mode": map[string]any{"Ref": "XRayTracing"}},
		"Layers": map[string]any{"Fn::If": []any{"UseAdot", []any{map[string]any{"Ref": "AdotCollectorLayerArn"}},
			map[string]any{"Ref": "AWS::NoValue"}}},
		"Environment": map[string]any{"Variables": assertions.Match_ObjectLike(&map[string]any{
			"OTEL_EXPORTER_OTLP_ENDPOINT": map[string]any{"Fn::If": []any{"UseAdot", "http://localhost:4318", ""}},
		})},
	})
	ext := synth(t, "postgres://u@db:5432/agentpack")
	ext.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(14)) // no proxy: neither proxy alarm
}
