package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/jsii-runtime-go"
)

// addOutputs adds the optional custom domain (ApiDomainName and its mapping to the
// $default stage, under customDomain) and the stack's outputs, named as in template.yaml.
func (g *gateway) addOutputs(customDomain awscdk.CfnCondition) {
	stack, p, api, stage, migration, bucket, idpSecretARN := g.stack, g.p, g.api, g.stage, g.migration, g.bucket, g.idpSecretARN
	useRDS := g.db != nil
	// ------------------------------------------------------------ outputs
	// The custom domain: an API Gateway domain name and its mapping to the $default stage.
	domain := awsapigatewayv2.NewCfnDomainName(stack, jsii.String("ApiDomainName"), &awsapigatewayv2.CfnDomainNameProps{
		DomainName: p.customDomainName.ValueAsString(),
		DomainNameConfigurations: &[]any{&awsapigatewayv2.CfnDomainName_DomainNameConfigurationProperty{
			CertificateArn: p.customDomainCert.ValueAsString(), EndpointType: jsii.String("REGIONAL"),
			SecurityPolicy: jsii.String("TLS_1_2"),
		}},
	})
	domain.CfnOptions().SetCondition(customDomain)
	mapping := awsapigatewayv2.NewCfnApiMapping(stack, jsii.String("ApiDomainMapping"), &awsapigatewayv2.CfnApiMappingProps{
		ApiId: api.ApiId(), DomainName: domain.Ref(), Stage: jsii.String("$default"),
	})
	mapping.CfnOptions().SetCondition(customDomain)
	mapping.AddDependency(stage.Node().DefaultChild().(awscdk.CfnResource))

	apiURL := api.ApiEndpoint()
	out := func(id, desc string, v *string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Description: jsii.String(desc), Value: v})
	}
	out("ApiUrl", "The HTTP API's own URL (execute-api)", apiURL)
	out("BaseUrl", "Public base URL of the gateway (the custom domain when set) and the OAuth issuer of its authorization server",
		onDomain("", apiURL))
	out("McpUrl", "MCP endpoint of a workspace, to give an MCP client (replace {workspaceId}; the console shows each workspace's URL)",
		onDomain("/mcp/{workspaceId}", jsii.String(*apiURL+"/mcp/{workspaceId}")))
	wsID := migration.GetAtt(jsii.String("WorkspaceId"), awscdk.ResolutionTypeHint_STRING).ToString()
	out("FirstWorkspaceMcpUrl", "MCP endpoint of the first workspace (created by the first deploy)",
		awscdk.Token_AsString(awscdk.Fn_ConditionIf(jsii.String("HasCustomDomain"),
			awscdk.Fn_Join(jsii.String(""), &[]*string{awscdk.Fn_Sub(jsii.String("https://${CustomDomainName}/mcp/"), nil), wsID}),
			awscdk.Fn_Join(jsii.String(""), &[]*string{apiURL, jsii.String("/mcp/"), wsID})), nil))
	out("ConsoleUrl", "The admin console", onDomain("/admin/", jsii.String(*apiURL+"/admin/")))
	out("OAuthIssuer", "Issuer of the gateway's authorization server (RFC 8414 metadata at /.well-known/oauth-authorization-server)",
		onDomain("", apiURL))
	out("IdpRedirectUri", "Redirect URI to register at the identity provider for the gateway's client",
		onDomain("/auth/callback", jsii.String(*apiURL+"/auth/callback")))
	out("IdpClientSecretArnUsed", "Secrets Manager secret the gateway reads the identity provider's client secret from (put the value here)",
		idpSecretARN)
	target := awscdk.NewCfnOutput(stack, jsii.String("CustomDomainTarget"), &awscdk.CfnOutputProps{
		Description: jsii.String("Point CustomDomainName's DNS (CNAME or Route 53 alias) here"),
		Value:       domain.AttrRegionalDomainName(),
	})
	target.SetCondition(customDomain)
	out("SchemaVersion", "Database schema version after this deploy's migrations",
		migration.GetAtt(jsii.String("SchemaVersion"), awscdk.ResolutionTypeHint_STRING).ToString())
	awscdk.NewCfnOutput(stack, jsii.String("CatalogBucketName"), &awscdk.CfnOutputProps{
		Description: jsii.String("S3 bucket of the precomputed catalog (CATALOG_BUCKET)"), Value: bucket.BucketName(),
	})
	if useRDS {
		awscdk.NewCfnOutput(stack, jsii.String("DatabaseSecretArn"), &awscdk.CfnOutputProps{
			Description: jsii.String("Secrets Manager secret of the database (DATABASE_SECRET_ARN)"), Value: g.db.secret.SecretArn(),
		})
		awscdk.NewCfnOutput(stack, jsii.String("DatabaseProxyEndpoint"), &awscdk.CfnOutputProps{
			Description: jsii.String("RDS Proxy endpoint (DATABASE_HOST)"), Value: g.db.proxy.Endpoint(),
		})
	}
}
