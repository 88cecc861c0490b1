package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
)

// addCustomDomainRule adds the condition HasCustomDomain (both CustomDomainName and
// CustomDomainCertificateArn set) and the rule refusing one without the other, as in
// template.yaml, and returns the condition.
func addCustomDomainRule(stack awscdk.Stack, p params) awscdk.CfnCondition {
	// ------------------------------------------------------------ custom domain (optional)
	customDomain := awscdk.NewCfnCondition(stack, jsii.String("HasCustomDomain"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionAnd(
			awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(p.customDomainName.ValueAsString(), jsii.String(""))),
			awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(p.customDomainCert.ValueAsString(), jsii.String("")))),
	})
	awscdk.NewCfnRule(stack, jsii.String("CustomDomainNeedsCertificate"), &awscdk.CfnRuleProps{
		Assertions: &[]*awscdk.CfnRuleAssertion{{
			Assert: awscdk.Fn_ConditionOr(
				awscdk.Fn_ConditionAnd(awscdk.Fn_ConditionEquals(p.customDomainName.ValueAsString(), jsii.String("")),
					awscdk.Fn_ConditionEquals(p.customDomainCert.ValueAsString(), jsii.String(""))),
				awscdk.Fn_ConditionAnd(
					awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(p.customDomainName.ValueAsString(), jsii.String(""))),
					awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(p.customDomainCert.ValueAsString(), jsii.String("")))),
			),
			AssertDescription: jsii.String("CustomDomainName and CustomDomainCertificateArn go together"),
		}},
	})
	return customDomain
}

// onDomain is https://<CustomDomainName><path> with a custom domain (HasCustomDomain),
// else otherwise: the public base URL of the outputs and of PUBLIC_BASE_URL.
func onDomain(path string, otherwise *string) *string {
	return awscdk.Token_AsString(awscdk.Fn_ConditionIf(jsii.String("HasCustomDomain"),
		awscdk.Fn_Sub(jsii.String("https://${CustomDomainName}"+path), nil), otherwise), nil)
}

// addAPI adds the HTTP API (payload 2.0; CORS answered by the functions), its access log
// group and its $default stage (throttled, access-logged), and sets g.api and g.stage.
func (g *gateway) addAPI() {
	stack := g.stack

	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		Description: jsii.String("Agentpack MCP gateway and marketplace API"),
		// CORS preflights are answered by the functions (the ANY routes reach them), as
		// in template.yaml: no API-level CORS configuration.
		CreateDefaultStage: jsii.Bool(false),
	})
	overrideID(api, "HttpApi")
	accessLogs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention: awslogs.RetentionDays_ONE_MONTH, RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	stage := awsapigatewayv2.NewHttpStage(stack, jsii.String("DefaultStage"), &awsapigatewayv2.HttpStageProps{
		HttpApi:    api,
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		Throttle:   &awsapigatewayv2.ThrottleSettings{RateLimit: jsii.Number(100), BurstLimit: jsii.Number(200)},
	})
	stage.Node().DefaultChild().(awsapigatewayv2.CfnStage).AddPropertyOverride(jsii.String("AccessLogSettings"), map[string]any{
		"DestinationArn": accessLogs.LogGroupArn(),
		"Format":         `{"requestId":"$context.requestId","ip":"$context.identity.sourceIp","method":"$context.httpMethod","routeKey":"$context.routeKey","status":"$context.status","latencyMs":"$context.responseLatency","integrationStatus":"$context.integrationStatus","integrationError":"$context.integrationErrorMessage"}`,
	})
	g.api, g.stage = api, stage
}
