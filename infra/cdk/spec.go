package main

import "github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"

// Route is one HTTP API route: a method ("ANY" or a verb) and a path with {params}.
type Route struct {
	Method string
	Path   string
}

// FunctionSpec describes one Lambda function of the stack. The logical ids, routes and
// settings are the ones of template.yaml; infra/check fails when the two disagree.
type FunctionSpec struct {
	// LogicalID is the CloudFormation logical id, as in template.yaml (e.g. "McpFunction").
	LogicalID string
	// Dir is the folder under functions/ and under the asset root (bin/<Dir>/bootstrap).
	Dir         string
	Description string
	// TimeoutSeconds is the function timeout; HTTP functions stay under API Gateway's
	// 30 s integration limit.
	TimeoutSeconds float64
	MemoryMB       float64
	// CatalogActions are the S3 object actions on catalog/* the function needs.
	CatalogActions []string
	Routes         []Route
	// Schedule is an EventBridge schedule expression, empty for HTTP functions.
	Schedule string
	// InvokeSelf grants lambda:InvokeFunction on the function itself (the MCP gateway runs
	// tasks in asynchronous invocations of itself).
	InvokeSelf bool
	// UpstreamAuth: the function reads and refreshes upstream OAuth tokens, so it may use
	// the UpstreamAuthKey (kms:GenerateDataKey, kms:Decrypt; docs/UPSTREAM-AUTH.md).
	UpstreamAuth bool
	// Identity: the function serves the sign-in and the browser session (docs/AUTH.md), so
	// it gets the IDP_* and SESSION_KEY_SECRET_ARN settings and may read the session key
	// secret and the identity provider's client secret.
	Identity bool
	// RegistrySync: the function also runs the optional scheduled registry sync
	// (REGISTRY_SYNC_URL, the SyncRegistry rule; docs/REGISTRY.md).
	RegistrySync bool
	// Signing is the function's use of the AuthSigningKey, the KMS key of the access
	// tokens of the gateway's own authorization server (docs/AUTH.md "Signing key"):
	// SignerKey signs (kms:Sign, kms:GetPublicKey), VerifierKey only verifies
	// (kms:GetPublicKey at cold start); both get AUTH_SIGNING_KMS_KEY_ID. Zero: neither.
	Signing KeyUse
}

// KeyUse is a function's use of the access-token signing key.
type KeyUse int

const (
	NoKey KeyUse = iota
	VerifierKey
	SignerKey
)

// MigrationAssetDir is the migration function's folder under the asset root
// (bin/migrate/bootstrap, built from cmd/migrate; docs/DEPLOY.md). It is not in Functions:
// it serves no route and no schedule, and the serving functions depend on it.
const MigrationAssetDir = "migrate"

// Functions is the stack's function table (docs/DESIGN.md §2, §4, §7, §9a).
var Functions = []FunctionSpec{
	{
		LogicalID:      "McpFunction",
		Dir:            "mcp",
		Description:    "MCP gateway (Streamable HTTP, stateless; docs/DESIGN.md §4)",
		TimeoutSeconds: 900, // the asynchronous task path; synchronous requests keep 25 s
		InvokeSelf:     true,
		MemoryMB:       512,
		CatalogActions: []string{"s3:GetObject"},
		UpstreamAuth:   true,
		Signing:        VerifierKey,
		Routes: []Route{
			{"ANY", "/mcp"},
			{"ANY", "/mcp/{workspaceId}"},
			{"ANY", "/mcp/{workspaceId}/servers/{connection}"},
			{"GET", "/.well-known/oauth-protected-resource"},
			{"GET", "/.well-known/oauth-protected-resource/{proxy+}"},
			{"GET", "/health"},
		},
	},
	{
		LogicalID:      "MarketplaceFunction",
		Dir:            "marketplace",
		Description:    "Catalog, install and connections REST API (docs/DESIGN.md §6)",
		TimeoutSeconds: 29,
		MemoryMB:       512,
		CatalogActions: []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"},
		UpstreamAuth:   true,
		Identity:       true,
		Signing:        SignerKey,
		Routes: []Route{
			{"ANY", "/api/mcp-marketplace"},
			{"ANY", "/api/mcp-marketplace/{proxy+}"},
			{"ANY", "/api/mcp-connections"},
			{"ANY", "/api/mcp-connections/{proxy+}"},
			{"GET", "/api/openapi.json"},
			{"GET", "/api/events"},
			{"GET", "/admin"},
			{"GET", "/admin/{proxy+}"},
			{"ANY", "/api/oauth/{proxy+}"},
			{"ANY", "/api/rate-limits"},
			{"ANY", "/api/rate-limits/{proxy+}"},
			{"ANY", "/api/workspaces"},
			{"ANY", "/api/workspaces/{proxy+}"},
			{"ANY", "/auth/{proxy+}"},
			{"ANY", "/api/policies"},
			{"ANY", "/api/policies/{proxy+}"},
			{"GET", "/api/usage"},
			{"GET", "/api/me"},
			// The gateway's own authorization server and its connected clients (docs/AUTH.md).
			{"ANY", "/oauth/{proxy+}"},
			{"ANY", "/.well-known/oauth-authorization-server"},
			{"ANY", "/.well-known/oauth-authorization-server/{proxy+}"},
			{"ANY", "/api/connected-clients"},
			{"ANY", "/api/connected-clients/{id}"},
			{"ANY", "/api/mcp-tokens"},
			{"ANY", "/api/mcp-tokens/{id}"},
			{"ANY", "/api/trusted-idps"},
		},
	},
	{
		LogicalID:      "PinsFunction",
		Dir:            "pins",
		Description:    "Per-chat pins REST API (docs/DESIGN.md §7)",
		TimeoutSeconds: 29,
		MemoryMB:       512,
		CatalogActions: []string{"s3:GetObject", "s3:PutObject"},
		Signing:        VerifierKey,
		Routes: []Route{
			{"ANY", "/api/chats"},
			{"ANY", "/api/chats/{chatId}/pins"},
			{"ANY", "/api/chats/{chatId}/pins/{pinId}"},
			{"GET", "/api/chats/{chatId}/tools"},
		},
	},
	{
		LogicalID:      "HealthCheckFunction",
		Dir:            "healthcheck",
		Description:    "Scheduled health check of installed catalog entries (docs/DESIGN.md §9a)",
		TimeoutSeconds: 300,
		MemoryMB:       256,
		// A refresh that finds changed tool definitions rebuilds the catalog document (§6)
		// and deletes the part it replaced (docs/CATALOG.md).
		CatalogActions: []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"},
		Schedule:       "rate(30 minutes)",
		UpstreamAuth:   true,
		RegistrySync:   true,
	},
}

func httpMethod(m string) awsapigatewayv2.HttpMethod {
	switch m {
	case "ANY":
		return awsapigatewayv2.HttpMethod_ANY
	case "GET":
		return awsapigatewayv2.HttpMethod_GET
	case "POST":
		return awsapigatewayv2.HttpMethod_POST
	case "DELETE":
		return awsapigatewayv2.HttpMethod_DELETE
	case "OPTIONS":
		return awsapigatewayv2.HttpMethod_OPTIONS
	}
	panic("unsupported method " + m)
}
