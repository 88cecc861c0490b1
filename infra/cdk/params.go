package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// params are the deploy-time CloudFormation parameters, named as in template.yaml.
type params struct {
	logLevel, jwtIssuer, jwtAudience, jwtJwksURL, jwtSecret, authServerURL,
	publicBaseURL, allowedOrigins, allowPrivate, catalogTTL awscdk.CfnParameter
	newToolsNeedApproval                                                                 awscdk.CfnParameter
	consoleClientID, consoleAuthorizeURL, consoleTokenURL, consoleScope, consoleAudience awscdk.CfnParameter
	registrySyncURL, registrySyncRate                                                    awscdk.CfnParameter
	idpIssuer, idpClientID, idpClientSecretARN, idpScopes, idpGroupsClaim, idpTrustEmail awscdk.CfnParameter
	trustedIdps                                                                          awscdk.CfnParameter
	firstAdminEmail, firstWorkspaceName, customDomainName, customDomainCert              awscdk.CfnParameter
}

func newParams(stack awscdk.Stack) params {
	str := func(id, def, desc string, noEcho bool, allowed ...string) awscdk.CfnParameter {
		props := &awscdk.CfnParameterProps{
			Type: jsii.String("String"), Default: jsii.String(def), Description: jsii.String(desc),
		}
		if noEcho {
			props.NoEcho = jsii.Bool(true)
		}
		if len(allowed) > 0 {
			props.AllowedValues = jsii.Strings(allowed...)
		}
		return awscdk.NewCfnParameter(stack, jsii.String(id), props)
	}
	firstAdmin := str("FirstAdminEmail", "",
		"Email of the first admin, invited by the deploy as admin of the first workspace and superuser (docs/DEPLOY.md).", false)
	firstAdmin.SetAllowedPattern(jsii.String(`^$|^[^@\s,<>]+@[^@\s,<>]+$`))
	firstAdmin.SetConstraintDescription(jsii.String("one email address, or empty"))
	firstWs := str("FirstWorkspaceName", "Default workspace", "Name of the workspace the first deploy creates.", false)
	firstWs.SetMaxLength(jsii.Number(200))
	return params{
		firstAdminEmail: firstAdmin, firstWorkspaceName: firstWs,
		customDomainName: str("CustomDomainName", "",
			"Optional custom domain of the API (e.g. mcp.example.com); needs CustomDomainCertificateArn (docs/DEPLOY.md).", false),
		customDomainCert: str("CustomDomainCertificateArn", "", "ACM certificate (in the stack's region) covering CustomDomainName.", false),
		logLevel:         str("LogLevel", "info", "LOG_LEVEL of every function.", false, "debug", "info", "warn", "error"),
		jwtIssuer:        str("JwtIssuer", "", "Expected iss of bearer tokens (JWT_ISSUER).", false),
		jwtAudience:      str("JwtAudience", "", "Expected aud of bearer tokens (JWT_AUDIENCE).", false),
		jwtJwksURL:       str("JwtJwksUrl", "", "Optional JWKS URL of another token issuer (JWT_JWKS_URL); empty: the gateway's own tokens.", false),
		jwtSecret:        str("JwtSecret", "", "HS256 secret (JWT_SECRET); LocalStack only.", true),
		authServerURL:    str("AuthServerUrl", "", "Authorization server of the RFC 9728 metadata (AUTH_SERVER_URL).", false),
		publicBaseURL:    str("PublicBaseUrl", "", "Public base URL (PUBLIC_BASE_URL); empty derives it from the request.", false),
		allowedOrigins:   str("AllowedOrigins", "", "Browser origins allowed to call /mcp (ALLOWED_ORIGINS).", false),
		allowPrivate:     str("AllowPrivateUpstreams", "false", "ALLOW_PRIVATE_UPSTREAMS.", false, "true", "false"),
		catalogTTL:       str("CatalogTtl", "5s", "CATALOG_TTL.", false),
		newToolsNeedApproval: str("NewToolsNeedApproval", "false",
			"NEW_TOOLS_NEED_APPROVAL; \"true\" holds tools new on a refresh as pending until an admin approves them.", false, "true", "false"),
		consoleClientID: str("ConsoleOAuthClientId", "",
			"Optional: the console's sign-in with an external token issuer (CONSOLE_OAUTH_CLIENT_ID; docs/CONSOLE.md); empty: the gateway's own authorization server.", false),
		consoleAuthorizeURL: str("ConsoleOAuthAuthorizeUrl", "", "Authorization endpoint, https (CONSOLE_OAUTH_AUTHORIZE_URL).", false),
		consoleTokenURL:     str("ConsoleOAuthTokenUrl", "", "Token endpoint, https (CONSOLE_OAUTH_TOKEN_URL).", false),
		consoleScope:        str("ConsoleOAuthScope", "openid", "Scopes the console asks for (CONSOLE_OAUTH_SCOPE).", false),
		consoleAudience:     str("ConsoleOAuthAudience", "", "Optional audience parameter (CONSOLE_OAUTH_AUDIENCE).", false),
		registrySyncURL: str("RegistrySyncUrl", "",
			"Base URL of an MCP registry (v0.1 API) to import on a schedule (REGISTRY_SYNC_URL); empty: no schedule (docs/REGISTRY.md).", false),
		idpIssuer: str("IdpIssuer", "",
			"Issuer URL of the organisation's OpenID Connect identity provider, https (IDP_ISSUER; docs/AUTH.md); empty: no sign-in through one.", false),
		idpClientID: str("IdpClientId", "", "The gateway's confidential client id at the identity provider (IDP_CLIENT_ID).", false),
		idpClientSecretARN: str("IdpClientSecretArn", "",
			"Optional ARN of an existing secret holding that client's secret (IDP_CLIENT_SECRET_ARN); empty: the stack's IdpClientSecret slot.", false),
		idpScopes:      str("IdpScopes", "openid email profile", "Scopes asked of the identity provider (IDP_SCOPES).", false),
		idpGroupsClaim: str("IdpGroupsClaim", "", "ID token claim listing the person's groups (IDP_GROUPS_CLAIM); empty reads none.", false),
		idpTrustEmail: str("IdpTrustEmail", "false",
			"IDP_TRUST_EMAIL; \"true\" counts an email as verified when the provider sends no email_verified claim.", false, "true", "false"),
		trustedIdps: str("TrustedIdps", "",
			"Enterprise identity providers whose ID-JAGs the authorization server accepts (TRUSTED_IDPS; docs/AUTH.md \"The enterprise path\"): a JSON array of {issuer, jwksUrl, allowedClientIds, linkByEmail, enabled}; empty adds none.", false),
		registrySyncRate: str("RegistrySyncRate", "rate(1 day)",
			"EventBridge schedule expression of the registry sync; used only when RegistrySyncUrl is set.", false),
	}
}

// addRegistrySync adds the optional registry sync of docs/REGISTRY.md, as template.yaml
// does: the condition SyncRegistry (RegistrySyncUrl set), and under it the rule
// RegistrySyncSchedule (RegistrySyncRate) invoking fn with {"action":"registry-sync"} and
// the permission letting EventBridge invoke fn.
func addRegistrySync(stack awscdk.Stack, p params, fn awslambda.Function) {
	cond := awscdk.NewCfnCondition(stack, jsii.String("SyncRegistry"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(p.registrySyncURL.ValueAsString(), jsii.String(""))),
	})
	rule := awsevents.NewCfnRule(stack, jsii.String("RegistrySyncSchedule"), &awsevents.CfnRuleProps{
		Description:        jsii.String("Agentpack registry sync (docs/REGISTRY.md)"),
		ScheduleExpression: p.registrySyncRate.ValueAsString(),
		State:              jsii.String("ENABLED"),
		Targets: &[]any{&awsevents.CfnRule_TargetProperty{
			Id: jsii.String("RegistrySync"), Arn: fn.FunctionArn(), Input: jsii.String(`{"action":"registry-sync"}`),
		}},
	})
	rule.CfnOptions().SetCondition(cond)
	perm := awslambda.NewCfnPermission(stack, jsii.String("RegistrySyncPermission"), &awslambda.CfnPermissionProps{
		Action: jsii.String("lambda:InvokeFunction"), FunctionName: fn.FunctionName(),
		Principal: jsii.String("events.amazonaws.com"), SourceArn: rule.AttrArn(),
	})
	perm.CfnOptions().SetCondition(cond)
}
