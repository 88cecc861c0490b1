package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
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

	g := &gateway{stack: stack, cfg: cfg, p: p, mon: mon}

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
	g.bucket = bucket

	g.db = newDatabase(stack, cfg)
	g.addKeys()
	customDomain := addCustomDomainRule(stack, p)
	g.setEnv()
	g.addAPI()
	g.addMigration()
	g.addFunctions()

	// ------------------------------------------------------------ dashboard, alarms
	var proxyRes awscdk.CfnResource
	if g.db != nil {
		proxyRes = g.db.proxy.Node().DefaultChild().(awscdk.CfnResource)
	}
	addMonitoring(stack, mon, cfg.Environment, g.api.Node().DefaultChild().(awscdk.CfnResource), g.fns, proxyRes)

	g.addOutputs(customDomain)
	return stack
}

// gateway is what the parts of the stack share while NewGatewayStack builds it, in this
// order: the parameters and monitoring, the catalog bucket, the database (nil with
// Config.DatabaseURL), the keys and secrets, the functions' environment, the API, the
// migration and the serving functions.
type gateway struct {
	stack awscdk.Stack
	cfg   Config
	p     params
	mon   *monitoring

	bucket awss3.Bucket
	db     *database

	authKey, signingKey awskms.Key
	sessionKey          awssecretsmanager.Secret
	idpSecretARN        *string

	env, identityEnv map[string]*string

	api       awsapigatewayv2.HttpApi
	stage     awsapigatewayv2.HttpStage
	migration awscdk.CfnResource
	fns       map[string]awslambda.Function
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
