// Package check holds the infrastructure checks of docs/DESIGN.md §10 and §12 that run in the
// root module: template.yaml parsed with goformation and checked for the facts of the
// stack, parity with the CDK app's synthesized template, and every function's bootstrap
// run under the Lambda runtime emulator with the events of events/.
package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"
)

// wantRoutes is the route table of the task's contract (issue 6), per function.
var wantRoutes = map[string][]string{
	"McpFunction": {
		"ANY /mcp", "ANY /mcp/{workspaceId}", "ANY /mcp/{workspaceId}/servers/{connection}",
		"GET /.well-known/oauth-protected-resource", "GET /.well-known/oauth-protected-resource/{proxy+}",
		"GET /health",
	},
	"MarketplaceFunction": {
		"ANY /api/mcp-marketplace", "ANY /api/mcp-marketplace/{proxy+}",
		"ANY /api/mcp-connections", "ANY /api/mcp-connections/{proxy+}", "GET /api/openapi.json",
		"GET /api/events", "GET /admin", "GET /admin/{proxy+}",
		"ANY /api/oauth/{proxy+}",                               // upstream OAuth callback, client metadata document and consent (issue 12)
		"ANY /api/rate-limits", "ANY /api/rate-limits/{proxy+}", // rate limits (issue 24)
		"ANY /api/workspaces",                                // workspace creation (superuser; docs/DEPLOY.md)
		"ANY /api/workspaces/{proxy+}", "ANY /auth/{proxy+}", // members and the sign-in (docs/AUTH.md)
		"ANY /api/policies", "ANY /api/policies/{proxy+}", "GET /api/usage", // access policies and usage (issue 33)
		"GET /api/me",                                                        // who the caller is (issue 44)
		"ANY /oauth/{proxy+}", "ANY /.well-known/oauth-authorization-server", // the gateway's authorization server (docs/AUTH.md)
		"ANY /.well-known/oauth-authorization-server/{proxy+}",
		"ANY /api/connected-clients", "ANY /api/connected-clients/{id}",
		"ANY /api/mcp-tokens", "ANY /api/mcp-tokens/{id}", // a person's MCP access tokens (docs/AUTH.md)
		"ANY /api/trusted-idps", // enterprise identity providers (docs/AUTH.md "The enterprise path")
	},
	"PinsFunction": {
		"ANY /api/chats", "ANY /api/chats/{chatId}/pins", "ANY /api/chats/{chatId}/pins/{pinId}", "GET /api/chats/{chatId}/tools",
	},
	"HealthCheckFunction": nil,
}

// stackFacts is what both templates must agree on.
type stackFacts struct {
	Functions map[string]functionFacts
	Routes    map[string]string // route key → function logical id
	Schedules map[string]string // schedule expression → function logical id
}

type functionFacts struct {
	Runtime      string
	Architecture string
	Handler      string
	Timeout      int
	MemorySize   int
	EnvKeys      []string
}

// parseSAM parses template.yaml with goformation, conditions evaluated for the given
// parameter overrides (nil: the defaults, i.e. with RDS).
//
// goformation v7.14.9 names the HttpApi access-log property "AccessLogSetting" (its SAM
// schema predates the rename); SAM and cfn-lint know it as AccessLogSettings, so the key
// is renamed before goformation's typed unmarshalling.
func parseSAM(t *testing.T, overrides map[string]any) *cloudformation.Template {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testpeer.RepoRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// goformation reads any object with a "Condition" key as the Condition intrinsic, which
	// turns a conditional resource into a bool: take resource conditions out first.
	js, err := intrinsics.ProcessYAML(raw, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatalf("goformation: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	for _, sect := range []string{"Resources", "Outputs"} {
		for _, r := range doc[sect].(map[string]any) {
			delete(r.(map[string]any), "Condition")
		}
	}
	js, _ = json.Marshal(doc)
	if js, err = intrinsics.ProcessJSON(js, &intrinsics.ProcessorOptions{
		ParameterOverrides: overrides, EvaluateConditions: true,
	}); err != nil {
		t.Fatalf("goformation: %v", err)
	}
	doc = nil
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc["Resources"].(map[string]any) {
		res := r.(map[string]any)
		if res["Type"] == "AWS::Serverless::HttpApi" {
			props := res["Properties"].(map[string]any)
			if v, ok := props["AccessLogSettings"]; ok {
				props["AccessLogSetting"] = v
				delete(props, "AccessLogSettings")
			}
		}
	}
	js, _ = json.Marshal(doc)
	tpl, err := goformation.ParseJSONWithOptions(js, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatalf("goformation: %v", err)
	}
	return tpl
}

// samFacts extracts stackFacts from the SAM template, applying its Globals.
func samFacts(t *testing.T, tpl *cloudformation.Template) stackFacts {
	t.Helper()
	g := tpl.Globals["Function"]
	gb, _ := json.Marshal(g)
	var glob struct {
		Runtime       string
		Architectures []string
		Handler       string
		Timeout       int
		MemorySize    int
		Environment   struct{ Variables map[string]any }
	}
	if err := json.Unmarshal(gb, &glob); err != nil {
		t.Fatalf("Globals.Function: %v", err)
	}
	f := stackFacts{Functions: map[string]functionFacts{}, Routes: map[string]string{}, Schedules: map[string]string{}}
	for id, fn := range tpl.GetAllServerlessFunctionResources() {
		ff := functionFacts{Runtime: glob.Runtime, Handler: glob.Handler, Timeout: glob.Timeout, MemorySize: glob.MemorySize}
		if len(glob.Architectures) == 1 {
			ff.Architecture = glob.Architectures[0]
		}
		if fn.Runtime != nil {
			ff.Runtime = *fn.Runtime
		}
		if len(fn.Architectures) == 1 {
			ff.Architecture = fn.Architectures[0]
		}
		if fn.Handler != nil {
			ff.Handler = *fn.Handler
		}
		if fn.Timeout != nil {
			ff.Timeout = *fn.Timeout
		}
		if fn.MemorySize != nil {
			ff.MemorySize = *fn.MemorySize
		}
		keys := map[string]bool{}
		for k := range glob.Environment.Variables {
			keys[k] = true
		}
		if fn.Environment != nil {
			for k := range fn.Environment.Variables {
				keys[k] = true
			}
		}
		for k := range keys {
			ff.EnvKeys = append(ff.EnvKeys, k)
		}
		sort.Strings(ff.EnvKeys)
		f.Functions[id] = ff

		for name, ev := range fn.Events {
			switch ev.Type {
			case "HttpApi":
				p := ev.Properties.HttpApiEvent
				if p == nil || p.Method == nil || p.Path == nil {
					t.Fatalf("%s.%s: HttpApi event without Method/Path", id, name)
				}
				if p.PayloadFormatVersion == nil || *p.PayloadFormatVersion != "2.0" {
					t.Errorf("%s.%s: PayloadFormatVersion must be 2.0", id, name)
				}
				f.Routes[*p.Method+" "+*p.Path] = id
			case "Schedule":
				p := ev.Properties.ScheduleEvent
				if p == nil || p.Schedule == "" {
					t.Fatalf("%s.%s: Schedule event without Schedule", id, name)
				}
				f.Schedules[p.Schedule] = id
			default:
				t.Errorf("%s.%s: unexpected event type %s", id, name, ev.Type)
			}
		}
	}
	return f
}

func TestSAMTemplateFacts(t *testing.T) {
	tpl := parseSAM(t, nil)
	if tpl.Transform == nil || tpl.Transform.String == nil || *tpl.Transform.String != "AWS::Serverless-2016-10-31" {
		t.Errorf("Transform = %v, want AWS::Serverless-2016-10-31", tpl.Transform)
	}
	f := samFacts(t, tpl)

	// The four serving functions and the migration function (docs/DEPLOY.md).
	if len(f.Functions) != 5 {
		t.Errorf("functions = %d, want 5", len(f.Functions))
	}
	if m := f.Functions[migrationFunction]; m.Runtime != "provided.al2023" || m.Architecture != "arm64" || m.Timeout != 900 {
		t.Errorf("%s: %+v", migrationFunction, m)
	}
	for id := range wantRoutes {
		fn, ok := f.Functions[id]
		if !ok {
			t.Errorf("function %s missing", id)
			continue
		}
		if fn.Runtime != "provided.al2023" || fn.Architecture != "arm64" || fn.Handler != "bootstrap" {
			t.Errorf("%s: runtime %s/%s handler %s, want provided.al2023/arm64 bootstrap", id, fn.Runtime, fn.Architecture, fn.Handler)
		}
		// McpFunction also runs tasks in asynchronous invocations of itself (docs/TASKS.md);
		// its synchronous requests keep their own budget under API Gateway's limit.
		if id != "HealthCheckFunction" && id != "McpFunction" && fn.Timeout > 30 {
			t.Errorf("%s: timeout %d s is over API Gateway's 30 s integration limit", id, fn.Timeout)
		}
		if fn.MemorySize < 128 || fn.MemorySize > 1024 {
			t.Errorf("%s: memory %d MB", id, fn.MemorySize)
		}
		for _, k := range []string{"APP_ENV", "DATABASE_URL", "DATABASE_SECRET_ARN", "DATABASE_HOST",
			"JWT_JWKS_URL", "JWT_ISSUER", "JWT_AUDIENCE", "AUTH_SERVER_URL", "CATALOG_BUCKET",
			"CATALOG_TTL", "ALLOW_PRIVATE_UPSTREAMS", "NEW_TOOLS_NEED_APPROVAL", "LOG_LEVEL"} {
			if !slices.Contains(fn.EnvKeys, k) {
				t.Errorf("%s: environment lacks %s", id, k)
			}
		}
		// The makefile builder needs build-<LogicalId> in mk/infra.mk.
		if md := tpl.Resources[id]; md != nil {
			b, _ := json.Marshal(tpl.GetAllServerlessFunctionResources()[id].AWSCloudFormationMetadata)
			if string(b) != `{"BuildMethod":"makefile"}` {
				t.Errorf("%s: Metadata = %s, want BuildMethod makefile", id, b)
			}
		}
	}
	if hc := f.Functions["HealthCheckFunction"]; hc.Timeout < 60 {
		t.Errorf("HealthCheckFunction timeout %d s: a pass needs minutes", hc.Timeout)
	}

	var want []string
	for id, rs := range wantRoutes {
		for _, r := range rs {
			want = append(want, r)
			if got := f.Routes[r]; got != id {
				t.Errorf("route %q → %q, want %s", r, got, id)
			}
		}
	}
	if len(f.Routes) != len(want) {
		t.Errorf("routes = %v, want exactly %v", keys(f.Routes), want)
	}
	// GET and DELETE /mcp must reach the function (its 405), not a gateway 404 (§4).
	for _, r := range []string{"ANY /mcp", "ANY /mcp/{workspaceId}"} {
		if f.Routes[r] != "McpFunction" {
			t.Errorf("%s is not an ANY route of McpFunction", r)
		}
	}
	if got := f.Schedules["rate(30 minutes)"]; got != "HealthCheckFunction" || len(f.Schedules) != 1 {
		t.Errorf("schedules = %v, want rate(30 minutes) → HealthCheckFunction", f.Schedules)
	}

	// No API-level CORS: OPTIONS goes to the ANY routes and the functions answer it.
	api := tpl.GetAllServerlessHttpApiResources()
	if len(api) != 1 {
		t.Fatalf("HttpApi resources = %d, want 1", len(api))
	}
	for _, a := range api {
		if a.CorsConfiguration != nil {
			t.Error("HttpApi has a CorsConfiguration; preflights are the functions' (both templates must agree)")
		}
	}

	// The catalog bucket: encrypted, versioned, every public access blocked, TLS only.
	b, err := tpl.GetS3BucketWithName("CatalogBucket")
	if err != nil {
		t.Fatal(err)
	}
	if b.BucketEncryption == nil || len(b.BucketEncryption.ServerSideEncryptionConfiguration) == 0 ||
		b.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault == nil {
		t.Error("CatalogBucket is not encrypted by default")
	}
	pab := b.PublicAccessBlockConfiguration
	if pab == nil || !isTrue(pab.BlockPublicAcls) || !isTrue(pab.BlockPublicPolicy) ||
		!isTrue(pab.IgnorePublicAcls) || !isTrue(pab.RestrictPublicBuckets) {
		t.Errorf("CatalogBucket public access block incomplete: %+v", pab)
	}
	if b.VersioningConfiguration == nil || b.VersioningConfiguration.Status != "Enabled" {
		t.Error("CatalogBucket is not versioned")
	}
	bp, err := tpl.GetS3BucketPolicyWithName("CatalogBucketPolicy")
	if err != nil {
		t.Fatal(err)
	}
	if pb, _ := json.Marshal(bp.PolicyDocument); !json.Valid(pb) || !containsAll(string(pb), `"aws:SecureTransport":"false"`, `"Effect":"Deny"`) {
		t.Errorf("CatalogBucketPolicy does not deny plain HTTP: %s", pb)
	}

	// The database: private, encrypted, behind RDS Proxy with TLS, credentials in a secret.
	db, err := tpl.GetRDSDBInstanceWithName("Database")
	if err != nil {
		t.Fatal(err)
	}
	if db.PubliclyAccessible == nil || *db.PubliclyAccessible {
		t.Error("Database must set PubliclyAccessible: false")
	}
	if !isTrue(db.StorageEncrypted) || db.Engine == nil || *db.Engine != "postgres" {
		t.Errorf("Database: engine %v encrypted %v", db.Engine, db.StorageEncrypted)
	}
	px, err := tpl.GetRDSDBProxyWithName("DbProxy")
	if err != nil {
		t.Fatal(err)
	}
	if px.EngineFamily != "POSTGRESQL" || !isTrue(px.RequireTLS) || len(px.Auth) != 1 ||
		px.Auth[0].AuthScheme == nil || *px.Auth[0].AuthScheme != "SECRETS" {
		t.Errorf("DbProxy: %+v", px)
	}
	if _, err := tpl.GetSecretsManagerSecretWithName("DbSecret"); err != nil {
		t.Error(err)
	}
	if _, err := tpl.GetEC2NatGatewayWithName("NatGateway"); err != nil {
		t.Error(err)
	}
	for _, s := range []string{"PrivateSubnetA", "PrivateSubnetB"} {
		sn, err := tpl.GetEC2SubnetWithName(s)
		if err != nil {
			t.Fatal(err)
		}
		if isTrue(sn.MapPublicIpOnLaunch) {
			t.Errorf("%s maps public IPs", s)
		}
	}
	for _, p := range []string{"Environment", "JwtIssuer", "JwtAudience", "JwtJwksUrl", "JwtSecret",
		"AllowPrivateUpstreams", "DatabaseUrl"} {
		if _, ok := tpl.Parameters[p]; !ok {
			t.Errorf("parameter %s missing", p)
		}
	}
}

// TestSAMTemplateLeastPrivilege checks each function's S3 actions on the catalog: the
// gateway only reads; the writers write.
func TestSAMTemplateLeastPrivilege(t *testing.T) {
	tpl := parseSAM(t, nil)
	want := map[string][]string{
		"McpFunction":         {"s3:GetObject"},
		"MarketplaceFunction": {"s3:DeleteObject", "s3:GetObject", "s3:PutObject"},
		"PinsFunction":        {"s3:GetObject", "s3:PutObject"},
		"HealthCheckFunction": {"s3:DeleteObject", "s3:GetObject", "s3:PutObject"},
	}
	for id, fn := range tpl.GetAllServerlessFunctionResources() {
		b, _ := json.Marshal(fn.Policies)
		got := s3ObjectActions(t, b)
		if !slices.Equal(got, want[id]) {
			t.Errorf("%s: S3 object actions %v, want %v", id, got, want[id])
		}
		if containsAll(string(b), `"s3:*"`) || containsAll(string(b), `"Resource":"*"`) {
			t.Errorf("%s: wildcard in policy: %s", id, b)
		}
	}
}

// TestSAMTemplateExternalDatabase checks the LocalStack path: with DatabaseUrl set, the
// VPC and the database are conditioned away and the functions get DATABASE_URL.
func TestSAMTemplateExternalDatabase(t *testing.T) {
	tpl := parseSAM(t, map[string]any{"DatabaseUrl": "postgres://u@db:5432/agentpack"})
	var doc struct {
		Resources map[string]struct{ Condition string }
	}
	raw, _ := os.ReadFile(filepath.Join(testpeer.RepoRoot(t), "template.yaml"))
	js, err := intrinsics.ProcessYAML(raw, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"Vpc", "NatGateway", "Database", "DbProxy", "DbSecret", "PrivateSubnetA"} {
		if doc.Resources[id].Condition != "UseRds" {
			t.Errorf("%s is not conditioned on UseRds", id)
		}
	}
	g, _ := json.Marshal(tpl.Globals["Function"])
	var glob struct {
		VpcConfig   any
		Environment struct{ Variables map[string]any }
	}
	_ = json.Unmarshal(g, &glob)
	if got := glob.Environment.Variables["DATABASE_URL"]; got != "postgres://u@db:5432/agentpack" {
		t.Errorf("DATABASE_URL = %v with DatabaseUrl set", got)
	}
	if glob.VpcConfig != nil {
		t.Errorf("VpcConfig = %v with DatabaseUrl set, want none", glob.VpcConfig)
	}
}

func s3ObjectActions(t *testing.T, policies []byte) []string {
	t.Helper()
	var v any
	_ = json.Unmarshal(policies, &v)
	set := map[string]bool{}
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if act, ok := x["Action"]; ok {
				for _, a := range asStrings(act) {
					if a != "s3:ListBucket" && len(a) > 3 && a[:3] == "s3:" {
						set[a] = true
					}
				}
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	return keys(set)
}

func asStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
