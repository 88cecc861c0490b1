package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
	"maps"
)

// setEnv sets g.env, the environment of every function (as template.yaml's Globals), and
// g.identityEnv, the sign-in settings only the functions with FunctionSpec.Identity get.
func (g *gateway) setEnv() {
	p, cfg, bucket, mon, authKey, sessionKey, idpSecretARN := g.p, g.cfg, g.bucket, g.mon, g.authKey, g.sessionKey, g.idpSecretARN
	useRDS := g.db != nil
	identityEnv := map[string]*string{
		"IDP_ISSUER":             p.idpIssuer.ValueAsString(),
		"IDP_CLIENT_ID":          p.idpClientID.ValueAsString(),
		"IDP_CLIENT_SECRET_ARN":  idpSecretARN,
		"IDP_SCOPES":             p.idpScopes.ValueAsString(),
		"IDP_GROUPS_CLAIM":       p.idpGroupsClaim.ValueAsString(),
		"IDP_TRUST_EMAIL":        p.idpTrustEmail.ValueAsString(),
		"TRUSTED_IDPS":           p.trustedIdps.ValueAsString(),
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
		env["DATABASE_SECRET_ARN"] = g.db.secret.SecretArn()
		env["DATABASE_HOST"] = g.db.proxy.Endpoint()
		env["DATABASE_SSLMODE"] = jsii.String("require")
	} else {
		env["DATABASE_URL"] = jsii.String(cfg.DatabaseURL)
		env["DATABASE_SECRET_ARN"] = jsii.String("")
		env["DATABASE_HOST"] = jsii.String("")
		env["DATABASE_SSLMODE"] = jsii.String("prefer")
	}
	g.env, g.identityEnv = env, identityEnv
}

// addMigration adds the migration function (cmd/migrate) with its log group and the
// custom resource DatabaseMigration that runs it, and sets g.migration.
func (g *gateway) addMigration() {
	stack, p, cfg, env, mon := g.stack, g.p, g.cfg, g.env, g.mon
	useRDS := g.db != nil

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
		migrateEnv["DATABASE_HOST"] = g.db.instance.DbInstanceEndpointAddress()
		migrateProps.Vpc = g.db.vpc
		migrateProps.VpcSubnets = g.db.subnets
		migrateProps.SecurityGroups = &[]awsec2.ISecurityGroup{g.db.migrateSG}
	}
	migrateFn := awslambda.NewFunction(stack, jsii.String("MigrationFunction"), migrateProps)
	overrideID(migrateFn, "MigrationFunction")
	mon.instrument(migrateFn)
	if useRDS {
		migrateFn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("DatabaseSecretRead"),
			Actions:   jsii.Strings("secretsmanager:GetSecretValue"),
			Resources: jsii.Strings(*g.db.secret.SecretArn()),
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
	g.migration = migration
}

// addFunctions adds the serving functions of Functions: each with its log group, its
// least-privilege role statements, its routes on g.api and its schedules, every one
// depending on g.migration; and sets g.fns (logical id → function).
func (g *gateway) addFunctions() {
	stack, p, cfg, env, identityEnv, mon := g.stack, g.p, g.cfg, g.env, g.identityEnv, g.mon
	bucket, authKey, signingKey, sessionKey, idpSecretARN := g.bucket, g.authKey, g.signingKey, g.sessionKey, g.idpSecretARN
	api, migration := g.api, g.migration
	useRDS := g.db != nil
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
			fnProps.Vpc = g.db.vpc
			fnProps.VpcSubnets = g.db.subnets
			fnProps.SecurityGroups = &[]awsec2.ISecurityGroup{g.db.lambdaSG}
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
				Resources: jsii.Strings(*g.db.secret.SecretArn()),
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
	g.fns = fns
}
