package main

import (
	_ "embed"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"
)

// dashboardBody is the CloudWatch dashboard, with ${…} references resolved by Fn::Sub
// (logical ids, AWS::Region, ProxyName). template.yaml holds the same body; infra/check
// fails when the two differ.
//
//go:embed dashboard.json
var dashboardBody string

// monitoring holds the parameters and conditions of the dashboard, alarms and tracing
// (AlarmEmail, XRayTracing, AdotCollectorLayerArn), named as in template.yaml.
type monitoring struct {
	alarmEmail, xrayTracing, adotLayer awscdk.CfnParameter
	hasAlarmEmail, useAdot             awscdk.CfnCondition
}

func newMonitoring(stack awscdk.Stack) *monitoring {
	m := &monitoring{
		alarmEmail: awscdk.NewCfnParameter(stack, jsii.String("AlarmEmail"), &awscdk.CfnParameterProps{
			Type: jsii.String("String"), Default: jsii.String(""),
			Description: jsii.String("Optional e-mail address subscribed to the alarm topic (AlarmTopic)."),
		}),
		xrayTracing: awscdk.NewCfnParameter(stack, jsii.String("XRayTracing"), &awscdk.CfnParameterProps{
			Type: jsii.String("String"), Default: jsii.String("Active"), AllowedValues: jsii.Strings("Active", "PassThrough"),
			Description: jsii.String("Lambda X-Ray tracing mode of every function."),
		}),
		adotLayer: awscdk.NewCfnParameter(stack, jsii.String("AdotCollectorLayerArn"), &awscdk.CfnParameterProps{
			Type: jsii.String("String"), Default: jsii.String(""),
			Description: jsii.String("Optional ADOT collector layer ARN (arm64); when set the functions export OpenTelemetry spans to it."),
		}),
	}
	m.hasAlarmEmail = awscdk.NewCfnCondition(stack, jsii.String("HasAlarmEmail"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(m.alarmEmail.ValueAsString(), jsii.String(""))),
	})
	m.useAdot = awscdk.NewCfnCondition(stack, jsii.String("UseAdot"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(m.adotLayer.ValueAsString(), jsii.String(""))),
	})
	return m
}

// otlpEndpoint is OTEL_EXPORTER_OTLP_ENDPOINT: the ADOT collector's local OTLP/HTTP
// receiver when the layer is on, else "" (no spans exported).
func (m *monitoring) otlpEndpoint() *string {
	return awscdk.Fn_ConditionIf(jsii.String("UseAdot"), jsii.String("http://localhost:4318"), jsii.String("")).ToString()
}

// instrument sets fn's X-Ray mode from XRayTracing and adds the ADOT layer when
// configured, as template.yaml's Globals do.
func (m *monitoring) instrument(fn awslambda.Function) {
	cfn := fn.Node().DefaultChild().(awslambda.CfnFunction)
	cfn.AddPropertyOverride(jsii.String("TracingConfig.Mode"), m.xrayTracing.ValueAsString())
	cfn.AddPropertyOverride(jsii.String("Layers"), awscdk.Fn_ConditionIf(jsii.String("UseAdot"),
		[]any{m.adotLayer.ValueAsString()}, awscdk.Aws_NO_VALUE()))
}

// dim is one CloudWatch dimension.
func dim(name string, value *string) *awscloudwatch.CfnAlarm_DimensionProperty {
	return &awscloudwatch.CfnAlarm_DimensionProperty{Name: jsii.String(name), Value: value}
}

func metricStat(id, namespace, name, stat string, dims ...*awscloudwatch.CfnAlarm_DimensionProperty) *awscloudwatch.CfnAlarm_MetricDataQueryProperty {
	ds := make([]any, len(dims))
	for i, d := range dims {
		ds[i] = d
	}
	return &awscloudwatch.CfnAlarm_MetricDataQueryProperty{
		Id: jsii.String(id), ReturnData: jsii.Bool(false),
		MetricStat: &awscloudwatch.CfnAlarm_MetricStatProperty{
			Metric: &awscloudwatch.CfnAlarm_MetricProperty{Namespace: jsii.String(namespace), MetricName: jsii.String(name), Dimensions: &ds},
			Period: jsii.Number(300), Stat: jsii.String(stat),
		},
	}
}

func expression(id, expr, label string) *awscloudwatch.CfnAlarm_MetricDataQueryProperty {
	return &awscloudwatch.CfnAlarm_MetricDataQueryProperty{Id: jsii.String(id), Expression: jsii.String(expr),
		Label: jsii.String(label), ReturnData: jsii.Bool(true)}
}

// addMonitoring defines the alarm topic (and its optional e-mail subscription), the
// dashboard and the alarms of docs/OPERATIONS.md, with the logical ids and properties of
// template.yaml. fns maps function logical ids to functions; proxyName is the RDS
// Proxy's name token, nil without RDS (no proxy widget data, no proxy alarms: saturation
// and pinned sessions).
func addMonitoring(stack awscdk.Stack, m *monitoring, env string, api awscdk.CfnResource, fns map[string]awslambda.Function, proxy awscdk.CfnResource) {
	topic := awssns.NewCfnTopic(stack, jsii.String("AlarmTopic"), &awssns.CfnTopicProps{
		DisplayName: jsii.String(fmt.Sprintf("Agentpack %s alarms", env)),
	})
	topic.OverrideLogicalId(jsii.String("AlarmTopic"))
	sub := awssns.NewCfnSubscription(stack, jsii.String("AlarmEmailSubscription"), &awssns.CfnSubscriptionProps{
		TopicArn: topic.Ref(), Protocol: jsii.String("email"), Endpoint: m.alarmEmail.ValueAsString(),
	})
	sub.OverrideLogicalId(jsii.String("AlarmEmailSubscription"))
	sub.CfnOptions().SetCondition(m.hasAlarmEmail)

	proxyName := jsii.String("none")
	if proxy != nil {
		proxyName = proxy.Ref()
	}
	dash := awscloudwatch.NewCfnDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.CfnDashboardProps{
		DashboardBody: awscdk.Fn_Sub(jsii.String(dashboardBody), &map[string]*string{"ProxyName": proxyName}),
	})
	dash.OverrideLogicalId(jsii.String("Dashboard"))
	// AWS::CloudWatch::Dashboard takes no Tags (cfn-lint E3002): undo the stack's tags.
	awscdk.Tags_Of(dash).Remove(jsii.String("app"), nil)
	awscdk.Tags_Of(dash).Remove(jsii.String("env"), nil)

	alarm := func(id, desc string, props *awscloudwatch.CfnAlarmProps) {
		props.AlarmDescription = jsii.String(desc)
		props.AlarmActions = &[]any{topic.Ref()}
		props.OkActions = &[]any{topic.Ref()}
		props.TreatMissingData = jsii.String("notBreaching")
		a := awscloudwatch.NewCfnAlarm(stack, jsii.String(id), props)
		a.OverrideLogicalId(jsii.String(id))
	}
	apiDims := []*awscloudwatch.CfnAlarm_DimensionProperty{dim("ApiId", api.Ref()), dim("Stage", jsii.String("$default"))}
	alarm("Gateway5xxAlarm", "HTTP API answered 5 or more 5xx in 5 minutes", &awscloudwatch.CfnAlarmProps{
		Namespace: jsii.String("AWS/ApiGateway"), MetricName: jsii.String("5xx"), Dimensions: &apiDims,
		Statistic: jsii.String("Sum"), Period: jsii.Number(300), EvaluationPeriods: jsii.Number(1),
		Threshold: jsii.Number(5), ComparisonOperator: jsii.String("GreaterThanOrEqualToThreshold"),
	})
	alarm("GatewayErrorRateAlarm", "More than 5% of HTTP API requests answered 5xx (at least 20 requests) in 2 of 3 five-minute periods", &awscloudwatch.CfnAlarmProps{
		EvaluationPeriods: jsii.Number(3), DatapointsToAlarm: jsii.Number(2), Threshold: jsii.Number(5),
		ComparisonOperator: jsii.String("GreaterThanThreshold"),
		Metrics: &[]any{
			expression("rate", "IF(requests >= 20, 100 * errors / requests, 0)", "5xx rate (%)"),
			metricStat("errors", "AWS/ApiGateway", "5xx", "Sum", apiDims...),
			metricStat("requests", "AWS/ApiGateway", "Count", "Sum", apiDims...),
		},
	})
	proxied := func(id, outcome string) *awscloudwatch.CfnAlarm_MetricDataQueryProperty {
		return metricStat(id, "Agentpack/Gateway", "ToolCalls", "Sum", dim("kind", jsii.String("proxied")), dim("outcome", jsii.String(outcome)))
	}
	alarm("UpstreamFailureRateAlarm", "More than 20% of proxied tool calls failed upstream (at least 10 calls) in 2 of 3 five-minute periods", &awscloudwatch.CfnAlarmProps{
		EvaluationPeriods: jsii.Number(3), DatapointsToAlarm: jsii.Number(2), Threshold: jsii.Number(20),
		ComparisonOperator: jsii.String("GreaterThanThreshold"),
		Metrics: &[]any{
			expression("rate", "IF(FILL(ok, 0) + FILL(te, 0) + FILL(err, 0) >= 10, 100 * FILL(err, 0) / (FILL(ok, 0) + FILL(te, 0) + FILL(err, 0)), 0)", "proxied failure rate (%)"),
			proxied("ok", "ok"), proxied("te", "tool_error"), proxied("err", "error"),
		},
	})
	fnDims := func(logicalID string) *[]*awscloudwatch.CfnAlarm_DimensionProperty {
		cfn := fns[logicalID].Node().DefaultChild().(awslambda.CfnFunction)
		return &[]*awscloudwatch.CfnAlarm_DimensionProperty{dim("FunctionName", cfn.Ref())}
	}
	alarm("GatewayP99DurationAlarm", "Gateway function p99 duration at or above 10 s for 15 minutes", &awscloudwatch.CfnAlarmProps{
		Namespace: jsii.String("AWS/Lambda"), MetricName: jsii.String("Duration"), Dimensions: fnDims("McpFunction"),
		ExtendedStatistic: jsii.String("p99"), Period: jsii.Number(300), EvaluationPeriods: jsii.Number(3),
		Threshold: jsii.Number(10000), ComparisonOperator: jsii.String("GreaterThanOrEqualToThreshold"),
	})
	hcDims := &[]*awscloudwatch.CfnAlarm_DimensionProperty{dim("Function", jsii.String("healthcheck"))}
	alarm("HealthCheckFailuresAlarm", "Health checks failed in two consecutive passes", &awscloudwatch.CfnAlarmProps{
		Namespace: jsii.String("Agentpack/HealthCheck"), MetricName: jsii.String("failed"), Dimensions: hcDims,
		Statistic: jsii.String("Maximum"), Period: jsii.Number(1800), EvaluationPeriods: jsii.Number(2),
		Threshold: jsii.Number(1), ComparisonOperator: jsii.String("GreaterThanOrEqualToThreshold"),
	})
	alarm("HealthCheckDownAlarm", "At least one installed catalog entry is down (3 failed passes in a row)", &awscloudwatch.CfnAlarmProps{
		Namespace: jsii.String("Agentpack/HealthCheck"), MetricName: jsii.String("down"), Dimensions: hcDims,
		Statistic: jsii.String("Maximum"), Period: jsii.Number(1800), EvaluationPeriods: jsii.Number(1),
		Threshold: jsii.Number(1), ComparisonOperator: jsii.String("GreaterThanOrEqualToThreshold"),
	})
	for _, f := range []string{"Mcp", "Marketplace", "Pins", "HealthCheck"} {
		for _, mw := range []struct{ metric, what string }{
			{"Errors", "errors (crash, timeout or out of memory)"}, {"Throttles", "throttles"},
		} {
			id := f + "Function"
			alarm(id+mw.metric+"Alarm", id+": Lambda "+mw.what, &awscloudwatch.CfnAlarmProps{
				Namespace: jsii.String("AWS/Lambda"), MetricName: jsii.String(mw.metric), Dimensions: fnDims(id),
				Statistic: jsii.String("Sum"), Period: jsii.Number(300), EvaluationPeriods: jsii.Number(1),
				Threshold: jsii.Number(1), ComparisonOperator: jsii.String("GreaterThanOrEqualToThreshold"),
			})
		}
	}
	if proxy != nil {
		pd := []*awscloudwatch.CfnAlarm_DimensionProperty{dim("ProxyName", proxy.Ref()),
			dim("TargetGroup", jsii.String("default")), dim("TargetRole", jsii.String("READ_WRITE"))}
		alarm("DbProxySaturationAlarm", "RDS Proxy has 80% or more of its database connections borrowed for 15 minutes", &awscloudwatch.CfnAlarmProps{
			EvaluationPeriods: jsii.Number(3), Threshold: jsii.Number(80),
			ComparisonOperator: jsii.String("GreaterThanOrEqualToThreshold"),
			Metrics: &[]any{
				expression("saturation", "IF(max > 0, 100 * borrowed / max, 0)", "borrowed connections (%)"),
				metricStat("borrowed", "AWS/RDS", "DatabaseConnectionsCurrentlyBorrowed", "Maximum", pd...),
				metricStat("max", "AWS/RDS", "MaxDatabaseConnectionsAllowed", "Maximum", pd...),
			},
		})
		// The functions' queries never pin a session (cache-describe query mode, no session
		// state; docs/DATABASE.md): any pinned session is a regression, or another client.
		alarm("DbProxyPinnedSessionsAlarm", "RDS Proxy pinned a client session to a database connection in 2 consecutive 5-minute periods (the functions' queries never pin one: docs/DATABASE.md)", &awscloudwatch.CfnAlarmProps{
			Namespace: jsii.String("AWS/RDS"), MetricName: jsii.String("DatabaseConnectionsCurrentlySessionPinned"), Dimensions: &pd,
			Statistic: jsii.String("Maximum"), Period: jsii.Number(300), EvaluationPeriods: jsii.Number(2),
			Threshold: jsii.Number(1), ComparisonOperator: jsii.String("GreaterThanOrEqualToThreshold"),
		})
	}

	awscdk.NewCfnOutput(stack, jsii.String("AlarmTopicArn"), &awscdk.CfnOutputProps{
		Description: jsii.String("SNS topic every alarm notifies (subscribe on-call here)"), Value: topic.Ref(),
	})
	awscdk.NewCfnOutput(stack, jsii.String("DashboardName"), &awscdk.CfnOutputProps{
		Description: jsii.String("CloudWatch dashboard of the stack"), Value: dash.Ref(),
	})
}
