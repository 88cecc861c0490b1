package main

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// One synth per configuration: a jsii synth of the stack takes seconds.
var (
	rdsOnce, extOnce         sync.Once
	rdsTemplate, extTemplate assertions.Template
)

func synth(t *testing.T, databaseURL string) assertions.Template {
	t.Helper()
	build := func() assertions.Template {
		assets := t.TempDir()
		dirs := []string{MigrationAssetDir}
		for _, f := range Functions {
			dirs = append(dirs, f.Dir)
		}
		for _, d := range dirs {
			dir := filepath.Join(assets, d)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("placeholder"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
		stack := NewGatewayStack(app, StackName, nil, Config{Environment: "test", AssetDir: assets, DatabaseURL: databaseURL})
		return assertions.Template_FromStack(stack, nil)
	}
	if databaseURL == "" {
		rdsOnce.Do(func() { rdsTemplate = build() })
		return rdsTemplate
	}
	extOnce.Do(func() { extTemplate = build() })
	return extTemplate
}

func TestFunctions(t *testing.T) {
	tpl := synth(t, "")
	// The four serving functions and the migration function (docs/DEPLOY.md).
	tpl.ResourceCountIs(jsii.String("AWS::Lambda::Function"), jsii.Number(5))
	tpl.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
		"Runtime":       "provided.al2023",
		"Architectures": []any{"arm64"},
		"Handler":       "bootstrap",
		"VpcConfig":     assertions.Match_ObjectLike(&map[string]any{"SubnetIds": assertions.Match_AnyValue()}),
	})
	for id, want := range map[string]int{"McpFunction": 900, "MarketplaceFunction": 29, "PinsFunction": 29, "MigrationFunction": 900} {
		// McpFunction: 900 s for the asynchronous task path (docs/TASKS.md).
		props := tpl.FindResources(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Properties": map[string]any{"Timeout": want},
		})
		if _, ok := (*props)[id]; !ok {
			t.Errorf("%s: timeout is not %d s", id, want)
		}
	}
	tpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
		"Timeout": 300,
		"Environment": map[string]any{"Variables": assertions.Match_ObjectLike(&map[string]any{
			"APP_ENV":             "deployed",
			"DATABASE_URL":        "",
			"DATABASE_SECRET_ARN": assertions.Match_AnyValue(),
			"DATABASE_HOST":       assertions.Match_AnyValue(),
			"DATABASE_SSLMODE":    "require",
			"CATALOG_BUCKET":      assertions.Match_AnyValue(),
		})},
	})
}

func TestSchedule(t *testing.T) {
	tpl := synth(t, "")
	// The health check's, and the registry sync's (conditional, docs/REGISTRY.md).
	tpl.ResourceCountIs(jsii.String("AWS::Events::Rule"), jsii.Number(2))
	tpl.HasResource(jsii.String("AWS::Events::Rule"), map[string]any{
		"Condition": "SyncRegistry",
		"Properties": assertions.Match_ObjectLike(&map[string]any{
			"ScheduleExpression": map[string]any{"Ref": "RegistrySyncRate"},
			"Targets": []any{assertions.Match_ObjectLike(&map[string]any{
				"Arn":   map[string]any{"Fn::GetAtt": []any{"HealthCheckFunction", "Arn"}},
				"Input": `{"action":"registry-sync"}`,
			})},
		}),
	})
	tpl.HasResource(jsii.String("AWS::Lambda::Permission"), map[string]any{
		"Condition": "SyncRegistry",
		"Properties": assertions.Match_ObjectLike(&map[string]any{
			"Principal": "events.amazonaws.com",
			"SourceArn": map[string]any{"Fn::GetAtt": []any{"RegistrySyncSchedule", "Arn"}},
		}),
	})
	tpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
		"ScheduleExpression": "rate(30 minutes)",
		"State":              "ENABLED",
		"Targets": []any{assertions.Match_ObjectLike(&map[string]any{
			"Arn": map[string]any{"Fn::GetAtt": []any{"HealthCheckFunction", "Arn"}},
		})},
	})
}

func TestRoutes(t *testing.T) {
	tpl := synth(t, "")
	want := 0
	for _, f := range Functions {
		for _, r := range f.Routes {
			want++
			tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), map[string]any{
				"RouteKey": r.Method + " " + r.Path,
			})
		}
	}
	// 14 of the first release, plus /api/chats, /api/events, /admin and /admin/{proxy+}
	// (issue 13), plus GET /api/oauth/{proxy+} (upstream OAuth callback, issue 12), plus
	// /api/rate-limits and /api/rate-limits/{proxy+} (issue 24), /api/workspaces/{proxy+}
	// and /auth/{proxy+} (members and the sign-in, docs/AUTH.md), /api/policies,
	// /api/policies/{proxy+} and GET /api/usage (docs/POLICIES.md), the authorization
	// server's /oauth/{proxy+}, its RFC 8414 metadata (two) and the connected clients (two;
	// docs/AUTH.md), /api/mcp-tokens and /api/mcp-tokens/{id} (MCP access tokens), and
	// /api/workspaces (workspace creation, docs/DEPLOY.md), GET /api/me (the console's
	// header) and /api/trusted-idps (enterprise-managed authorization, docs/AUTH.md).
	if want != 36 {
		t.Errorf("function table has %d routes, want 36", want)
	}
	tpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Route"), jsii.Number(float64(want)))
	for _, key := range []string{"ANY /mcp", "ANY /mcp/{workspaceId}", "ANY /mcp/{workspaceId}/servers/{connection}"} {
		tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), map[string]any{"RouteKey": key})
	}
	tpl.AllResourcesProperties(jsii.String("AWS::ApiGatewayV2::Integration"), map[string]any{
		"IntegrationType":      "AWS_PROXY",
		"PayloadFormatVersion": "2.0",
	})
	tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), map[string]any{
		"ProtocolType":      "HTTP",
		"CorsConfiguration": assertions.Match_Absent(),
	})
}

func TestBucket(t *testing.T) {
	tpl := synth(t, "")
	tpl.HasResourceProperties(jsii.String("AWS::S3::Bucket"), map[string]any{
		"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": []any{
			assertions.Match_ObjectLike(&map[string]any{
				"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"},
			}),
		}},
		"PublicAccessBlockConfiguration": map[string]any{
			"BlockPublicAcls": true, "BlockPublicPolicy": true,
			"IgnorePublicAcls": true, "RestrictPublicBuckets": true,
		},
		"VersioningConfiguration": map[string]any{"Status": "Enabled"},
	})
	tpl.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), map[string]any{
		"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
			assertions.Match_ObjectLike(&map[string]any{
				"Effect":    "Deny",
				"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
			}),
		})},
	})
}

func TestDatabase(t *testing.T) {
	tpl := synth(t, "")
	tpl.HasResourceProperties(jsii.String("AWS::RDS::DBInstance"), map[string]any{
		"Engine":             "postgres",
		"PubliclyAccessible": false,
		"StorageEncrypted":   true,
	})
	tpl.HasResourceProperties(jsii.String("AWS::RDS::DBProxy"), map[string]any{
		"EngineFamily": "POSTGRESQL",
		"RequireTLS":   true,
	})
	// The database's secret, the browser session key (docs/AUTH.md) and the identity
	// provider's client-secret slot (docs/DEPLOY.md).
	tpl.ResourceCountIs(jsii.String("AWS::SecretsManager::Secret"), jsii.Number(3))
	tpl.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(1))
	tpl.HasResourceProperties(jsii.String("AWS::EC2::Route"), map[string]any{
		"DestinationCidrBlock": "0.0.0.0/0",
		"NatGatewayId":         assertions.Match_AnyValue(),
	})
}

// TestLeastPrivilege: the gateway only reads catalog objects; only the writers write.
func TestLeastPrivilege(t *testing.T) {
	tpl := synth(t, "")
	for _, f := range Functions {
		var actions any = f.CatalogActions[0]
		if len(f.CatalogActions) > 1 {
			list := make([]any, len(f.CatalogActions))
			for i, a := range f.CatalogActions {
				list[i] = a
			}
			actions = list
		}
		tpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
			"Roles": []any{map[string]any{"Ref": assertions.Match_StringLikeRegexp(jsii.String("^" + f.LogicalID + "ServiceRole"))}},
			"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
				assertions.Match_ObjectLike(&map[string]any{"Sid": "CatalogObjects", "Action": actions}),
			})},
		})
	}
	if got := Functions[0].CatalogActions; len(got) != 1 || got[0] != "s3:GetObject" {
		t.Errorf("McpFunction catalog actions = %v, want only s3:GetObject", got)
	}
}

// TestExternalDatabase: with a database URL (LocalStack) there is no VPC and no RDS.
func TestExternalDatabase(t *testing.T) {
	tpl := synth(t, "postgres://u@db:5432/agentpack")
	for _, typ := range []string{"AWS::EC2::VPC", "AWS::RDS::DBInstance", "AWS::RDS::DBProxy", "AWS::EC2::NatGateway"} {
		tpl.ResourceCountIs(jsii.String(typ), jsii.Number(0))
	}
	// The browser session key's secret (docs/AUTH.md) and the identity provider's client
	// secret slot (docs/DEPLOY.md), no database secret.
	tpl.ResourceCountIs(jsii.String("AWS::SecretsManager::Secret"), jsii.Number(2))
	tpl.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
		"VpcConfig": assertions.Match_Absent(),
		"Environment": map[string]any{"Variables": assertions.Match_ObjectLike(&map[string]any{
			"DATABASE_URL": "postgres://u@db:5432/agentpack",
		})},
	})
}
