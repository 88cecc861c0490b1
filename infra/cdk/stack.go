package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsrds"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Config holds the synth-time choices of the stack. Deploy-time settings (JWT, log level,
// upstream policy) are CloudFormation parameters, as in template.yaml.
type Config struct {
	// Environment names the stage (dev, staging, prod, localstack); it goes into tags and names.
	Environment string
	// AssetDir holds <dir>/bootstrap for every function (the Makefile's bin/ folder).
	AssetDir string
	// DatabaseURL, when set, skips the VPC, RDS, RDS Proxy and secret and hands every
	// function DATABASE_URL instead (LocalStack community has no RDS). In CDK this is a
	// synth-time choice (context "databaseUrl"), where template.yaml uses a Condition.
	DatabaseURL string
}

// ConfigFromApp reads Config from the app's context, falling back to environment
// variables so that `go run .` works without the cdk CLI:
// environment / AGENTPACK_ENV, assetDir / AGENTPACK_ASSET_DIR, databaseUrl / AGENTPACK_DATABASE_URL.
func ConfigFromApp(app awscdk.App) Config {
	get := func(key, env, def string) string {
		if v, ok := app.Node().TryGetContext(jsii.String(key)).(string); ok && v != "" {
			return v
		}
		if v := os.Getenv(env); v != "" {
			return v
		}
		return def
	}
	return Config{
		Environment: get("environment", "AGENTPACK_ENV", "dev"),
		AssetDir:    get("assetDir", "AGENTPACK_ASSET_DIR", filepath.Join("..", "..", "bin")),
		DatabaseURL: get("databaseUrl", "AGENTPACK_DATABASE_URL", ""),
	}
}

// NewGatewayStack defines the whole stack of docs/DESIGN.md §10: the HTTP API and its routes, the
// four functions, the health-check schedule, the catalog bucket and, unless
// cfg.DatabaseURL is set, the VPC, PostgreSQL on RDS, RDS Proxy and the credentials secret.
func NewGatewayStack(scope constructs.Construct, id string, props *awscdk.StackProps, cfg Config) awscdk.Stack {
	stack := awscdk.NewStack(scope, jsii.String(id), props)
	// AWS::RDS::DBProxyTargetGroup has no Tags property in CloudFormation; CDK would add one
	// (cfn-lint E3002), so it is left out.
	tagProps := &awscdk.TagProps{ExcludeResourceTypes: jsii.Strings("AWS::RDS::DBProxyTargetGroup")}
	awscdk.Tags_Of(stack).Add(jsii.String("app"), jsii.String("agentpack-gateway"), tagProps)
	awscdk.Tags_Of(stack).Add(jsii.String("env"), jsii.String(cfg.Environment), tagProps)

	p := newParams(stack)
	mon := newMonitoring(stack)

	// ------------------------------------------------------------ catalog bucket
	bucket := awss3.NewBucket(stack, jsii.String("CatalogBucket"), &awss3.BucketProps{
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		BucketKeyEnabled:  jsii.Bool(true),
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		Versioned:         jsii.Bool(true),
		EnforceSSL:        jsii.Bool(true),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                          jsii.String("ExpireOldCatalogVersions"),
			NoncurrentVersionExpiration: awscdk.Duration_Days(jsii.Number(30)),
		}},
	})
	overrideID(bucket, "CatalogBucket")

	// ------------------------------------------------------------ network + database
	var (
		vpc       awsec2.Vpc
		lambdaSG  awsec2.SecurityGroup
		migrateSG awsec2.SecurityGroup
		dbInst    awsrds.DatabaseInstance
		dbSecret  awssecretsmanager.ISecret
		dbProxy   awsrds.DatabaseProxy
		useRDS    = cfg.DatabaseURL == ""
		vpcSubnet *awsec2.SubnetSelection
	)
	if useRDS {
		vpc = awsec2.NewVpc(stack, jsii.String("Vpc"), &awsec2.VpcProps{
			IpAddresses: awsec2.IpAddresses_Cidr(jsii.String("10.40.0.0/16")),
			MaxAzs:      jsii.Number(2),
			// One NAT gateway: the functions reach external MCP servers through it.
			NatGateways: jsii.Number(1),
			SubnetConfiguration: &[]*awsec2.SubnetConfiguration{
				{Name: jsii.String("public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(24)},
				{Name: jsii.String("private"), SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS, CidrMask: jsii.Number(24)},
			},
			// Catalog reads and writes stay off the NAT gateway.
			GatewayEndpoints: &map[string]*awsec2.GatewayVpcEndpointOptions{
				"S3": {Service: awsec2.GatewayVpcEndpointAwsService_S3()},
			},
		})
		vpcSubnet = &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS}

		lambdaSG = awsec2.NewSecurityGroup(stack, jsii.String("LambdaSecurityGroup"), &awsec2.SecurityGroupProps{
			Vpc: vpc, Description: jsii.String("Agentpack functions (egress only)"), AllowAllOutbound: jsii.Bool(false),
		})
		lambdaSG.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(443)),
			jsii.String("HTTPS to MCP upstreams, AWS APIs and the JWKS endpoint"), nil)
		lambdaSG.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(80)),
			jsii.String("Plain HTTP upstreams (refused in deployed mode by the URL guard)"), nil)
		lambdaSG.AddEgressRule(awsec2.Peer_Ipv4(vpc.VpcCidrBlock()), awsec2.Port_Tcp(jsii.Number(5432)),
			jsii.String("PostgreSQL through RDS Proxy"), nil)
		proxySG := awsec2.NewSecurityGroup(stack, jsii.String("ProxySecurityGroup"), &awsec2.SecurityGroupProps{
			Vpc: vpc, Description: jsii.String("RDS Proxy (PostgreSQL from the functions only)"), AllowAllOutbound: jsii.Bool(false),
		})
		proxySG.AddIngressRule(lambdaSG, awsec2.Port_Tcp(jsii.Number(5432)), jsii.String("PostgreSQL from the functions"), nil)
		proxySG.AddEgressRule(awsec2.Peer_Ipv4(vpc.VpcCidrBlock()), awsec2.Port_Tcp(jsii.Number(5432)),
			jsii.String("PostgreSQL to the instance"), nil)
		dbSG := awsec2.NewSecurityGroup(stack, jsii.String("DbSecurityGroup"), &awsec2.SecurityGroupProps{
			Vpc: vpc, Description: jsii.String("RDS PostgreSQL (from RDS Proxy only)"), AllowAllOutbound: jsii.Bool(false),
		})
		dbSG.AddIngressRule(proxySG, awsec2.Port_Tcp(jsii.Number(5432)), jsii.String("PostgreSQL from RDS Proxy"), nil)
		// The migration function reaches the instance directly (goose's session lock;
		// docs/DATABASE.md), as in template.yaml.
		migrateSG = awsec2.NewSecurityGroup(stack, jsii.String("MigrationSecurityGroup"), &awsec2.SecurityGroupProps{
			Vpc: vpc, Description: jsii.String("Agentpack migration function (the database directly, AWS APIs)"), AllowAllOutbound: jsii.Bool(false),
		})
		migrateSG.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(443)),
			jsii.String("HTTPS to Secrets Manager and the CloudFormation response URL"), nil)
		migrateSG.AddEgressRule(awsec2.Peer_Ipv4(vpc.VpcCidrBlock()), awsec2.Port_Tcp(jsii.Number(5432)),
			jsii.String("PostgreSQL to the instance directly (not RDS Proxy)"), nil)
		dbSG.AddIngressRule(migrateSG, awsec2.Port_Tcp(jsii.Number(5432)),
			jsii.String("PostgreSQL from the migration function (goose's session lock; docs/DATABASE.md)"), nil)

		secret := awsrds.NewDatabaseSecret(stack, jsii.String("DbSecret"), &awsrds.DatabaseSecretProps{
			Username:          jsii.String("agentpack"),
			Dbname:            jsii.String("agentpack"),
			ExcludeCharacters: jsii.String("\"@/\\ '%:?#[]"),
		})
		overrideID(secret, "DbSecret")
		dbSecret = secret

		db := awsrds.NewDatabaseInstance(stack, jsii.String("Database"), &awsrds.DatabaseInstanceProps{
			Engine: awsrds.DatabaseInstanceEngine_Postgres(&awsrds.PostgresInstanceEngineProps{
				Version: awsrds.PostgresEngineVersion_VER_16_9(),
			}),
			InstanceType:            awsec2.NewInstanceType(jsii.String("t4g.micro")),
			Credentials:             awsrds.Credentials_FromSecret(secret, nil),
			DatabaseName:            jsii.String("agentpack"),
			Vpc:                     vpc,
			VpcSubnets:              vpcSubnet,
			SecurityGroups:          &[]awsec2.ISecurityGroup{dbSG},
			PubliclyAccessible:      jsii.Bool(false),
			StorageEncrypted:        jsii.Bool(true),
			AllocatedStorage:        jsii.Number(20),
			MaxAllocatedStorage:     jsii.Number(100),
			StorageType:             awsrds.StorageType_GP3,
			MultiAz:                 jsii.Bool(false),
			BackupRetention:         awscdk.Duration_Days(jsii.Number(7)),
			DeletionProtection:      jsii.Bool(false),
			CopyTagsToSnapshot:      jsii.Bool(true),
			AutoMinorVersionUpgrade: jsii.Bool(true),
			RemovalPolicy:           awscdk.RemovalPolicy_SNAPSHOT,
		})
		overrideID(db, "Database")
		dbInst = db

		dbProxy = db.AddProxy(jsii.String("DbProxy"), &awsrds.DatabaseProxyOptions{
			Secrets:                   &[]awssecretsmanager.ISecret{secret},
			Vpc:                       vpc,
			VpcSubnets:                vpcSubnet,
			SecurityGroups:            &[]awsec2.ISecurityGroup{proxySG},
			RequireTLS:                jsii.Bool(true),
			IamAuth:                   jsii.Bool(false),
			IdleClientTimeout:         awscdk.Duration_Seconds(jsii.Number(1800)),
			MaxConnectionsPercent:     jsii.Number(90),
			MaxIdleConnectionsPercent: jsii.Number(10),
			BorrowTimeout:             awscdk.Duration_Seconds(jsii.Number(30)),
			DbProxyName:               jsii.String("agentpack-" + cfg.Environment),
		})
		overrideID(dbProxy, "DbProxy")
	}

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
	// The public base URL: https://<CustomDomainName> with a custom domain, else the API's
	// own URL (outputs) or PublicBaseUrl (the functions' PUBLIC_BASE_URL).
	onDomain := func(path string, otherwise *string) *string {
		return awscdk.Token_AsString(awscdk.Fn_ConditionIf(jsii.String("HasCustomDomain"),
			awscdk.Fn_Sub(jsii.String("https://${CustomDomainName}"+path), nil), otherwise), nil)
	}
	identityEnv := map[string]*string{
		"IDP_ISSUER":             p.idpIssuer.ValueAsString(),
		"IDP_CLIENT_ID":          p.idpClientID.ValueAsString(),
		"IDP_CLIENT_SECRET_ARN":  idpSecretARN,
		"IDP_SCOPES":             p.idpScopes.ValueAsString(),
		"IDP_GROUPS_CLAIM":       p.idpGroupsClaim.ValueAsString(),
		"IDP_TRUST_EMAIL":        p.idpTrustEmail.ValueAsString(),
		"SESSION_KEY_SECRET_ARN": sessionKey.SecretArn(),
	}

	// ------------------------------------------------------------ functions
	env := map[string]*string{
		"APP_ENV":                 jsii.String("deployed"),
		"LOG_LEVEL":               p.logLevel.ValueAsString(),
		"JWT_ISSUER":              p.jwtIssuer.ValueAsString(),
		"JWT_AUDIENCE":            p.jwtAudience.ValueAsString(),
		"JWT_JWKS_URL":            p.jwtJwksURL.ValueAsString(),
		"JWT_SECRET":              p.jwtSecret.ValueAsString(),
		"AUTH_SERVER_URL":         p.authServerURL.ValueAsString(),
		"PUBLIC_BASE_URL":         onDomain("", p.publicBaseURL.ValueAsString()),
		"ALLOWED_ORIGINS":         p.allowedOrigins.ValueAsString(),
		"ALLOW_PRIVATE_UPSTREAMS": p.allowPrivate.ValueAsString(),
		"CATALOG_BUCKET":          bucket.BucketName(),
		"CATALOG_TTL":             p.catalogTTL.ValueAsString(),
		"NEW_TOOLS_NEED_APPROVAL": p.newToolsNeedApproval.ValueAsString(),
		// The admin console's OAuth 2.1 + PKCE sign-in (public client; docs/CONSOLE.md).
		"CONSOLE_OAUTH_CLIENT_ID":     p.consoleClientID.ValueAsString(),
		"CONSOLE_OAUTH_AUTHORIZE_URL": p.consoleAuthorizeURL.ValueAsString(),
		"CONSOLE_OAUTH_TOKEN_URL":     p.consoleTokenURL.ValueAsString(),
		"CONSOLE_OAUTH_SCOPE":         p.consoleScope.ValueAsString(),
		"CONSOLE_OAUTH_AUDIENCE":      p.consoleAudience.ValueAsString(),
		"DATABASE_PORT":               jsii.String("5432"),
		"DATABASE_NAME":               jsii.String("agentpack"),
		// Spans go to the ADOT collector layer when AdotCollectorLayerArn is set.
		"OTEL_EXPORTER_OTLP_ENDPOINT": mon.otlpEndpoint(),
		"UPSTREAM_AUTH_KMS_KEY_ID":    authKey.KeyId(),
	}
	if useRDS {
		env["DATABASE_URL"] = jsii.String("")
		env["DATABASE_SECRET_ARN"] = dbSecret.SecretArn()
		env["DATABASE_HOST"] = dbProxy.Endpoint()
		env["DATABASE_SSLMODE"] = jsii.String("require")
	} else {
		env["DATABASE_URL"] = jsii.String(cfg.DatabaseURL)
		env["DATABASE_SECRET_ARN"] = jsii.String("")
		env["DATABASE_HOST"] = jsii.String("")
		env["DATABASE_SSLMODE"] = jsii.String("prefer")
	}

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

	// ------------------------------------------------------------ migrations (docs/DEPLOY.md)
	// The migration function and the custom resource that runs it on every deploy whose
	// function code changed (a new version), as in template.yaml; every serving function
	// depends on the custom resource.
	migrateEnv := maps.Clone(env)
	migrateProps := &awslambda.FunctionProps{
		Description:  jsii.String("Migrations, curated catalog, first workspace and first admin, run by the DatabaseMigration custom resource (cmd/migrate)"),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(assetPath(cfg.AssetDir, MigrationAssetDir), nil),
		MemorySize:   jsii.Number(256),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(900)),
		Tracing:      awslambda.Tracing_ACTIVE,
		Environment:  &migrateEnv,
	}
	if useRDS {
		// The instance's own endpoint, never the proxy's.
		migrateEnv["DATABASE_HOST"] = dbInst.DbInstanceEndpointAddress()
		migrateProps.Vpc = vpc
		migrateProps.VpcSubnets = vpcSubnet
		migrateProps.SecurityGroups = &[]awsec2.ISecurityGroup{migrateSG}
	}
	migrateFn := awslambda.NewFunction(stack, jsii.String("MigrationFunction"), migrateProps)
	overrideID(migrateFn, "MigrationFunction")
	mon.instrument(migrateFn)
	if useRDS {
		migrateFn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("DatabaseSecretRead"),
			Actions:   jsii.Strings("secretsmanager:GetSecretValue"),
			Resources: jsii.Strings(*dbSecret.SecretArn()),
		}))
	}
	awslogs.NewLogGroup(stack, jsii.String("MigrationLogGroup"), &awslogs.LogGroupProps{
		LogGroupName:  jsii.String("/aws/lambda/" + *migrateFn.FunctionName()),
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	migration := awscdk.NewCfnResource(stack, jsii.String("DatabaseMigration"), &awscdk.CfnResourceProps{
		Type: jsii.String("Custom::DatabaseMigration"),
		Properties: &map[string]any{
			"ServiceToken":       migrateFn.FunctionArn(),
			"ServiceTimeout":     960,
			"CodeVersion":        migrateFn.CurrentVersion().Version(),
			"FirstAdminEmail":    p.firstAdminEmail.ValueAsString(),
			"FirstWorkspaceName": p.firstWorkspaceName.ValueAsString(),
		},
	})
	migration.OverrideLogicalId(jsii.String("DatabaseMigration"))

	fns := map[string]awslambda.Function{}
	for _, spec := range Functions {
		fnProps := &awslambda.FunctionProps{
			Description:  jsii.String(spec.Description),
			Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
			Architecture: awslambda.Architecture_ARM_64(),
			Handler:      jsii.String("bootstrap"),
			Code:         awslambda.Code_FromAsset(assetPath(cfg.AssetDir, spec.Dir), nil),
			MemorySize:   jsii.Number(spec.MemoryMB),
			Timeout:      awscdk.Duration_Seconds(jsii.Number(spec.TimeoutSeconds)),
			Tracing:      awslambda.Tracing_ACTIVE,
			Environment:  &env,
		}
		if spec.RegistrySync || spec.Identity || spec.Signing != NoKey {
			fnEnv := maps.Clone(env)
			if spec.RegistrySync {
				fnEnv["REGISTRY_SYNC_URL"] = p.registrySyncURL.ValueAsString()
			}
			if spec.Identity {
				maps.Copy(fnEnv, identityEnv)
			}
			if spec.Signing != NoKey {
				fnEnv["AUTH_SIGNING_KMS_KEY_ID"] = signingKey.KeyId()
			}
			fnProps.Environment = &fnEnv
		}
		if spec.InvokeSelf {
			// As in template.yaml: a task's worker runs once (no async retry).
			fnProps.RetryAttempts = jsii.Number(0)
		}
		if useRDS {
			fnProps.Vpc = vpc
			fnProps.VpcSubnets = vpcSubnet
			fnProps.SecurityGroups = &[]awsec2.ISecurityGroup{lambdaSG}
		}
		fn := awslambda.NewFunction(stack, jsii.String(spec.LogicalID), fnProps)
		overrideID(fn, spec.LogicalID)
		// New code goes live only after its schema (docs/DEPLOY.md, "Upgrades").
		fn.Node().DefaultChild().(awscdk.CfnResource).AddDependency(migration)
		mon.instrument(fn)
		fns[spec.LogicalID] = fn
		// The function's default log group, created here to give it a retention (as in
		// template.yaml).
		awslogs.NewLogGroup(stack, jsii.String(spec.LogicalID+"LogGroup"), &awslogs.LogGroupProps{
			LogGroupName:  jsii.String("/aws/lambda/" + *fn.FunctionName()),
			Retention:     awslogs.RetentionDays_ONE_MONTH,
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})

		// Least privilege, statement for statement as in template.yaml.
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("CatalogObjects"),
			Actions:   jsii.Strings(spec.CatalogActions...),
			Resources: jsii.Strings(*bucket.ArnForObjects(jsii.String("catalog/*"))),
		}))
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("CatalogListForNotFound"),
			Actions:    jsii.Strings("s3:ListBucket"),
			Resources:  jsii.Strings(*bucket.BucketArn()),
			Conditions: &map[string]any{"StringLike": map[string]any{"s3:prefix": "catalog/*"}},
		}))
		if spec.UpstreamAuth {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:        jsii.String("UpstreamAuthKeyUse"),
				Actions:    jsii.Strings("kms:GenerateDataKey", "kms:Decrypt"),
				Resources:  jsii.Strings(*authKey.KeyArn()),
				Conditions: &map[string]any{"StringEquals": map[string]any{"kms:EncryptionContext:purpose": "agentpack-upstream-auth"}},
			}))
		}
		switch spec.Signing {
		case SignerKey:
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:       jsii.String("AuthSigningKeySign"),
				Actions:   jsii.Strings("kms:Sign", "kms:GetPublicKey"),
				Resources: jsii.Strings(*signingKey.KeyArn()),
			}))
		case VerifierKey:
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:       jsii.String("AuthSigningKeyVerify"),
				Actions:   jsii.Strings("kms:GetPublicKey"),
				Resources: jsii.Strings(*signingKey.KeyArn()),
			}))
		}
		if spec.Identity {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:       jsii.String("SessionKeyRead"),
				Actions:   jsii.Strings("secretsmanager:GetSecretValue"),
				Resources: jsii.Strings(*sessionKey.SecretArn()),
			}))
			// The given client secret (HasIdpClientSecret), else the stack's slot, as
			// template.yaml.
			awsiam.NewCfnPolicy(stack, jsii.String(spec.LogicalID+"IdpClientSecretRead"), &awsiam.CfnPolicyProps{
				PolicyName: jsii.String("IdpClientSecretRead"),
				Roles:      jsii.Strings(*fn.Role().RoleName()),
				PolicyDocument: map[string]any{
					"Version": "2012-10-17",
					"Statement": []any{map[string]any{
						"Sid": "IdpClientSecretRead", "Effect": "Allow", "Action": "secretsmanager:GetSecretValue",
						"Resource": idpSecretARN,
					}},
				},
			})
		}
		if spec.InvokeSelf {
			// As in template.yaml: the function's generated name (a reference to its own ARN
			// would be a circular dependency).
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:     jsii.String("InvokeSelfForTasks"),
				Actions: jsii.Strings("lambda:InvokeFunction"),
				Resources: jsii.Strings(*awscdk.Fn_Sub(jsii.String(
					"arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${AWS::StackName}-"+spec.LogicalID+"-*"), nil)),
			}))
		}
		if useRDS {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:       jsii.String("DatabaseSecretRead"),
				Actions:   jsii.Strings("secretsmanager:GetSecretValue"),
				Resources: jsii.Strings(*dbSecret.SecretArn()),
			}))
		}

		if len(spec.Routes) > 0 {
			integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(
				jsii.String(spec.LogicalID+"Integration"), fn,
				&awsapigatewayv2integrations.HttpLambdaIntegrationProps{
					PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0(),
				})
			for _, r := range spec.Routes {
				api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
					Path:        jsii.String(r.Path),
					Methods:     &[]awsapigatewayv2.HttpMethod{httpMethod(r.Method)},
					Integration: integration,
				})
			}
		}
		if spec.Schedule != "" {
			rule := awsevents.NewRule(stack, jsii.String(spec.LogicalID+"Schedule"), &awsevents.RuleProps{
				Description: jsii.String("Agentpack health check pass (docs/DESIGN.md §9a)"),
				Schedule:    awsevents.Schedule_Expression(jsii.String(spec.Schedule)),
			})
			rule.AddTarget(awseventstargets.NewLambdaFunction(fn, nil))
		}
		if spec.RegistrySync {
			addRegistrySync(stack, p, fn)
		}
	}

	// ------------------------------------------------------------ dashboard, alarms
	var proxyRes awscdk.CfnResource
	if useRDS {
		proxyRes = dbProxy.Node().DefaultChild().(awscdk.CfnResource)
	}
	addMonitoring(stack, mon, cfg.Environment, api.Node().DefaultChild().(awscdk.CfnResource), fns, proxyRes)

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
			Description: jsii.String("Secrets Manager secret of the database (DATABASE_SECRET_ARN)"), Value: dbSecret.SecretArn(),
		})
		awscdk.NewCfnOutput(stack, jsii.String("DatabaseProxyEndpoint"), &awscdk.CfnOutputProps{
			Description: jsii.String("RDS Proxy endpoint (DATABASE_HOST)"), Value: dbProxy.Endpoint(),
		})
	}
	return stack
}

// params are the deploy-time CloudFormation parameters, named as in template.yaml.
type params struct {
	logLevel, jwtIssuer, jwtAudience, jwtJwksURL, jwtSecret, authServerURL,
	publicBaseURL, allowedOrigins, allowPrivate, catalogTTL awscdk.CfnParameter
	newToolsNeedApproval                                                                 awscdk.CfnParameter
	consoleClientID, consoleAuthorizeURL, consoleTokenURL, consoleScope, consoleAudience awscdk.CfnParameter
	registrySyncURL, registrySyncRate                                                    awscdk.CfnParameter
	idpIssuer, idpClientID, idpClientSecretARN, idpScopes, idpGroupsClaim, idpTrustEmail awscdk.CfnParameter
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

// overrideID gives a construct's CloudFormation resource the logical id template.yaml uses,
// so that both templates name the same things alike.
func overrideID(c constructs.IConstruct, logicalID string) {
	if res, ok := c.Node().DefaultChild().(awscdk.CfnResource); ok {
		res.OverrideLogicalId(jsii.String(logicalID))
		return
	}
	panic(fmt.Sprintf("overrideID: %s has no CfnResource default child", *c.Node().Path()))
}

// assetPath is <assetDir>/<dir>, which must hold the built bootstrap (make lambda-build).
func assetPath(assetDir, dir string) *string {
	p := filepath.Join(assetDir, dir)
	if _, err := os.Stat(filepath.Join(p, "bootstrap")); err != nil {
		panic(fmt.Sprintf("no bootstrap in %s: run `make lambda-build` first (or set AGENTPACK_ASSET_DIR): %v", p, err))
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return jsii.String(abs)
}
