package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"
)

// addKeys adds the stack's keys and secrets: the upstream-token key (UpstreamAuthKey), the
// access-token signing key (AuthSigningKey), the browser session key (SessionKeySecret),
// and the identity provider's client-secret slot with its conditions, and sets
// g.authKey, g.signingKey, g.sessionKey and g.idpSecretARN.
func (g *gateway) addKeys() {
	stack, p, cfg := g.stack, g.p, g.cfg
	// ------------------------------------------------------------ upstream OAuth tokens
	// The key-encryption key of upstream OAuth tokens (envelope encryption,
	// docs/UPSTREAM-AUTH.md), as in template.yaml: rotated yearly, retained (deleting it would
	// make every stored token unreadable); the account administers it, and only the functions
	// with FunctionSpec.UpstreamAuth may use it, with the purpose encryption context.
	authKey := awskms.NewKey(stack, jsii.String("UpstreamAuthKey"), &awskms.KeyProps{
		Description:       jsii.String("Agentpack upstream OAuth token encryption"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
	})
	overrideID(authKey, "UpstreamAuthKey")

	// ------------------------------------------------------------ access-token signing
	// The RSA key of the access tokens the gateway's own authorization server issues
	// (docs/AUTH.md "Signing key"), as in template.yaml: RSA_2048 SIGN_VERIFY, the account
	// administers it, deleted with the stack after 7 days (the tokens live 15 minutes and
	// nothing stored depends on it); only the functions with FunctionSpec.Signing use it.
	signingKey := awskms.NewKey(stack, jsii.String("AuthSigningKey"), &awskms.KeyProps{
		Description:   jsii.String("Agentpack access-token signing (AUTH_SIGNING_KMS_KEY_ID)"),
		KeySpec:       awskms.KeySpec_RSA_2048,
		KeyUsage:      awskms.KeyUsage_SIGN_VERIFY,
		PendingWindow: awscdk.Duration_Days(jsii.Number(7)),
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	overrideID(signingKey, "AuthSigningKey")

	// ------------------------------------------------------------ browser sessions
	// The key sealing the browser session cookie (docs/AUTH.md "The session"), generated
	// by the stack as in template.yaml; only the functions with FunctionSpec.Identity read
	// it, and the identity provider's client secret (IdpClientSecretArn) when one is given.
	sessionKey := awssecretsmanager.NewSecret(stack, jsii.String("SessionKeySecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("Agentpack browser session key (SESSION_KEY_SECRET_ARN)"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength: jsii.Number(64), ExcludePunctuation: jsii.Bool(true),
		},
	})
	overrideID(sessionKey, "SessionKeySecret")
	awscdk.NewCfnCondition(stack, jsii.String("HasIdpClientSecret"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(p.idpClientSecretARN.ValueAsString(), jsii.String(""))),
	})
	// The identity provider's client-secret slot when IdpClientSecretArn is empty, as in
	// template.yaml (retained: it holds a value the stack did not make).
	createIdpSecret := awscdk.NewCfnCondition(stack, jsii.String("CreateIdpClientSecret"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionEquals(p.idpClientSecretARN.ValueAsString(), jsii.String("")),
	})
	idpSlot := awssecretsmanager.NewCfnSecret(stack, jsii.String("IdpClientSecret"), &awssecretsmanager.CfnSecretProps{
		Description: awscdk.Fn_Sub(jsii.String("Agentpack ${Environment} identity provider client secret (IDP_CLIENT_SECRET_ARN); replace the placeholder"),
			&map[string]*string{"Environment": jsii.String(cfg.Environment)}),
		GenerateSecretString: &awssecretsmanager.CfnSecret_GenerateSecretStringProperty{
			PasswordLength: jsii.Number(32), ExcludePunctuation: jsii.Bool(true),
		},
	})
	idpSlot.CfnOptions().SetCondition(createIdpSecret)
	idpSlot.ApplyRemovalPolicy(awscdk.RemovalPolicy_RETAIN, nil)
	idpSecretARN := awscdk.Token_AsString(awscdk.Fn_ConditionIf(jsii.String("HasIdpClientSecret"),
		p.idpClientSecretARN.ValueAsString(), idpSlot.Ref()), nil)
	g.authKey, g.signingKey, g.sessionKey, g.idpSecretARN = authKey, signingKey, sessionKey, idpSecretARN
}
