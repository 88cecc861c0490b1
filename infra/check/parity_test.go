package check

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/awslabs/goformation/v7/intrinsics"
	"github.com/google/go-cmp/cmp"
)

// cdkTemplate loads the CDK app's synthesized template: $CDK_OUT_DIR (make infra-test
// synthesizes there with placeholder bootstraps) or infra/cdk/cdk.out (make cdk-synth).
// Without one it skips, unless REQUIRE_INFRA=1.
func cdkTemplate(t *testing.T) map[string]any {
	t.Helper()
	dir := os.Getenv("CDK_OUT_DIR")
	if dir == "" {
		dir = filepath.Join(testpeer.RepoRoot(t), "infra", "cdk", "cdk.out")
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(testpeer.RepoRoot(t), dir)
	}
	path := filepath.Join(dir, "AgentpackGateway.template.json")
	b, err := os.ReadFile(path)
	if err != nil {
		if os.Getenv("REQUIRE_INFRA") == "1" {
			t.Fatalf("no CDK synth output (%v): run `make infra-test` or `make cdk-synth`", err)
		}
		t.Skipf("no CDK synth output at %s: run `make cdk-synth` (REQUIRE_INFRA=1 makes this a failure)", path)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// cdkFacts extracts stackFacts from a synthesized CDK template.
func cdkFacts(t *testing.T, doc map[string]any) stackFacts {
	t.Helper()
	res := doc["Resources"].(map[string]any)
	f := stackFacts{Functions: map[string]functionFacts{}, Routes: map[string]string{}, Schedules: map[string]string{}}
	integrationFn := map[string]string{} // integration logical id → function logical id
	for id, r := range res {
		r := r.(map[string]any)
		props, _ := r["Properties"].(map[string]any)
		switch r["Type"] {
		case "AWS::Lambda::Function":
			ff := functionFacts{
				Runtime: str(props["Runtime"]), Handler: str(props["Handler"]),
				Timeout: num(props["Timeout"]), MemorySize: num(props["MemorySize"]),
			}
			if a := asStrings(props["Architectures"]); len(a) == 1 {
				ff.Architecture = a[0]
			}
			if env, ok := props["Environment"].(map[string]any); ok {
				ff.EnvKeys = keys(env["Variables"].(map[string]any))
			}
			f.Functions[id] = ff
		case "AWS::ApiGatewayV2::Integration":
			if fmt := str(props["PayloadFormatVersion"]); fmt != "2.0" {
				t.Errorf("CDK integration %s: payload format %q, want 2.0", id, fmt)
			}
			integrationFn[id] = getAttTarget(props["IntegrationUri"])
		case "AWS::Events::Rule":
			if _, fixed := props["ScheduleExpression"].(string); !fixed {
				continue // the parameterised registry sync: TestParityRegistrySync
			}
			for _, tg := range props["Targets"].([]any) {
				f.Schedules[str(props["ScheduleExpression"])] = getAttTarget(tg.(map[string]any)["Arn"])
			}
		}
	}
	for _, r := range res {
		r := r.(map[string]any)
		if r["Type"] != "AWS::ApiGatewayV2::Route" {
			continue
		}
		props := r["Properties"].(map[string]any)
		// Target: {"Fn::Join": ["", ["integrations/", {"Ref": "<integration>"}]]}
		b, _ := json.Marshal(props["Target"])
		var integ string
		for id := range integrationFn {
			if strings.Contains(string(b), `"Ref":"`+id+`"`) {
				integ = id
			}
		}
		f.Routes[str(props["RouteKey"])] = integrationFn[integ]
	}
	return f
}

// TestParitySAMvsCDK fails when template.yaml and the CDK app disagree on the functions
// (runtime, architecture, handler, timeout, memory, environment names), the routes and
// which function serves each, or the schedule.
func TestParitySAMvsCDK(t *testing.T) {
	doc := cdkTemplate(t)
	sam := samFacts(t, parseSAM(t, nil))
	cdk := cdkFacts(t, doc)
	if d := cmp.Diff(sam.Functions, cdk.Functions); d != "" {
		t.Errorf("functions differ (-template.yaml +cdk):\n%s", d)
	}
	if d := cmp.Diff(sam.Routes, cdk.Routes); d != "" {
		t.Errorf("routes differ (-template.yaml +cdk):\n%s", d)
	}
	if d := cmp.Diff(sam.Schedules, cdk.Schedules); d != "" {
		t.Errorf("schedules differ (-template.yaml +cdk):\n%s", d)
	}

	// Same parameters for the deploy-time settings (DatabaseUrl and Environment are
	// synth-time context in CDK).
	var samParams []string
	for p := range parseSAM(t, nil).Parameters {
		if p != "DatabaseUrl" && p != "Environment" && p != "DbInstanceClass" {
			samParams = append(samParams, p)
		}
	}
	slices.Sort(samParams)
	var cdkParams []string
	for p := range doc["Parameters"].(map[string]any) {
		if p != "BootstrapVersion" {
			cdkParams = append(cdkParams, p)
		}
	}
	slices.Sort(cdkParams)
	if d := cmp.Diff(samParams, cdkParams); d != "" {
		t.Errorf("parameters differ (-template.yaml +cdk):\n%s", d)
	}

	// Same bucket and database posture.
	res := doc["Resources"].(map[string]any)
	for _, c := range []struct{ id, typ, must string }{
		{"CatalogBucket", "AWS::S3::Bucket", `"BlockPublicAcls":true`},
		{"CatalogBucket", "AWS::S3::Bucket", `"Status":"Enabled"`},
		{"CatalogBucket", "AWS::S3::Bucket", `"SSEAlgorithm":"AES256"`},
		{"Database", "AWS::RDS::DBInstance", `"PubliclyAccessible":false`},
		{"Database", "AWS::RDS::DBInstance", `"StorageEncrypted":true`},
		{"DbProxy", "AWS::RDS::DBProxy", `"RequireTLS":true`},
	} {
		r, ok := res[c.id].(map[string]any)
		if !ok || r["Type"] != c.typ {
			t.Errorf("CDK template has no %s %s", c.typ, c.id)
			continue
		}
		if b, _ := json.Marshal(r); !strings.Contains(string(b), c.must) {
			t.Errorf("CDK %s lacks %s", c.id, c.must)
		}
	}
}

// TestParityDetectsDrift makes sure the parity comparison is not vacuous: a route, a
// schedule or an environment variable in one stack and not the other is noticed.
func TestParityDetectsDrift(t *testing.T) {
	doc := cdkTemplate(t)
	cdk := cdkFacts(t, doc)
	sam := samFacts(t, parseSAM(t, nil))
	delete(cdk.Routes, "ANY /mcp")
	cdk.Schedules = map[string]string{"rate(1 hour)": "HealthCheckFunction"}
	if cmp.Equal(sam.Routes, cdk.Routes) || cmp.Equal(sam.Schedules, cdk.Schedules) {
		t.Fatal("parity comparison did not notice a removed route or a changed schedule")
	}
	// An environment variable in one stack and not the other.
	mk := cdk.Functions["MarketplaceFunction"]
	mk.EnvKeys = slices.DeleteFunc(slices.Clone(mk.EnvKeys), func(k string) bool { return k == "AUTH_SIGNING_KMS_KEY_ID" })
	cdk.Functions["MarketplaceFunction"] = mk
	if cmp.Equal(sam.Functions, cdk.Functions) {
		t.Fatal("parity comparison did not notice an environment variable missing from one stack")
	}
}

// registrySyncIDs are the resources and the condition of the optional registry sync
// (docs/REGISTRY.md): template.yaml writes them as plain CloudFormation, so both templates
// must hold them alike, intrinsics included.
var registrySyncIDs = []string{"RegistrySyncSchedule", "RegistrySyncPermission"}

// registrySyncFacts returns the registry sync of a template as JSON documents: each
// resource's type, condition and properties (without Tags, which CDK adds to every
// resource, and Description), the SyncRegistry condition, and the health-check function's
// REGISTRY_SYNC_URL value (SAM: in the function's own environment).
func registrySyncFacts(t *testing.T, doc map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	res := doc["Resources"].(map[string]any)
	for _, id := range registrySyncIDs {
		r, ok := res[id].(map[string]any)
		if !ok {
			out[id] = "missing"
			continue
		}
		props := map[string]any{}
		for k, v := range r["Properties"].(map[string]any) {
			if k != "Tags" && k != "Description" {
				props[k] = v
			}
		}
		b, _ := json.Marshal(map[string]any{"Type": r["Type"], "Condition": r["Condition"], "Properties": props})
		out[id] = string(b)
	}
	b, _ := json.Marshal(doc["Conditions"].(map[string]any)["SyncRegistry"])
	out["Condition SyncRegistry"] = string(b)
	fn := res["HealthCheckFunction"].(map[string]any)["Properties"].(map[string]any)
	env, _ := fn["Environment"].(map[string]any)
	vars, _ := env["Variables"].(map[string]any)
	b, _ = json.Marshal(vars["REGISTRY_SYNC_URL"])
	out["HealthCheckFunction REGISTRY_SYNC_URL"] = string(b)
	return out
}

// rawSAM is template.yaml as JSON with its intrinsics unevaluated (short forms expanded;
// !GetAtt A.B becomes ["A", "B"], the form CDK writes).
func rawSAM(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testpeer.RepoRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := intrinsics.ProcessYAML(raw, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	var norm func(v any)
	norm = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["Fn::GetAtt"].(string); ok {
				if res, attr, ok := strings.Cut(s, "."); ok {
					v["Fn::GetAtt"] = []any{res, attr}
				}
			}
			for _, e := range v {
				norm(e)
			}
		case []any:
			for _, e := range v {
				norm(e)
			}
		}
	}
	norm(doc)
	return doc
}

// TestParityRegistrySync (issue 24 item 3): both templates create the registry sync rule and
// its invoke permission only under SyncRegistry (RegistrySyncUrl set), on the schedule
// RegistrySyncRate, targeting HealthCheckFunction with {"action":"registry-sync"}, and hand
// the function REGISTRY_SYNC_URL. A drifted copy is noticed.
func TestParityRegistrySync(t *testing.T) {
	doc := cdkTemplate(t)
	sam, cdk := registrySyncFacts(t, rawSAM(t)), registrySyncFacts(t, doc)
	if d := cmp.Diff(sam, cdk); d != "" {
		t.Errorf("registry sync differs (-template.yaml +cdk):\n%s", d)
	}
	for _, want := range []string{`"Condition":"SyncRegistry"`, `"ScheduleExpression":{"Ref":"RegistrySyncRate"}`,
		`"Fn::GetAtt":["HealthCheckFunction","Arn"]`, `"Input":"{\"action\":\"registry-sync\"}"`} {
		if !strings.Contains(sam["RegistrySyncSchedule"], want) {
			t.Errorf("template.yaml RegistrySyncSchedule lacks %s: %s", want, sam["RegistrySyncSchedule"])
		}
	}
	if sam["Condition SyncRegistry"] != `{"Fn::Not":[{"Fn::Equals":[{"Ref":"RegistrySyncUrl"},""]}]}` ||
		sam["HealthCheckFunction REGISTRY_SYNC_URL"] != `{"Ref":"RegistrySyncUrl"}` {
		t.Errorf("template.yaml: %v", sam)
	}
	// Not vacuous: an unconditional rule in one template is a difference.
	res := doc["Resources"].(map[string]any)
	delete(res["RegistrySyncSchedule"].(map[string]any), "Condition")
	if cmp.Equal(sam, registrySyncFacts(t, doc)) {
		t.Error("parity did not notice a rule without its condition")
	}
}

func str(v any) string { s, _ := v.(string); return s }

func num(v any) int { f, _ := v.(float64); return int(f) }

// getAttTarget returns X from {"Fn::GetAtt": ["X", "Arn"]}, or "".
func getAttTarget(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	a, ok := m["Fn::GetAtt"].([]any)
	if !ok || len(a) == 0 {
		return ""
	}
	return str(a[0])
}

// TestParityIdentitySecrets (docs/AUTH.md): in both templates the stack generates the
// session key secret, only MarketplaceFunction may read it (SessionKeyRead), and the
// identity provider's client secret is readable by MarketplaceFunction only, under the
// condition HasIdpClientSecret (no policy with an empty resource).
func TestParityIdentitySecrets(t *testing.T) {
	doc := cdkTemplate(t)
	raw, err := os.ReadFile(filepath.Join(testpeer.RepoRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := intrinsics.ProcessYAML(raw, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	var sam map[string]any
	if err := json.Unmarshal(js, &sam); err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]map[string]any{"template.yaml": sam, "cdk": doc} {
		res := d["Resources"].(map[string]any)
		sk, _ := res["SessionKeySecret"].(map[string]any)
		if sk == nil || sk["Type"] != "AWS::SecretsManager::Secret" {
			t.Errorf("%s: no AWS::SecretsManager::Secret SessionKeySecret", name)
		} else if b, _ := json.Marshal(sk); !strings.Contains(string(b), `"GenerateSecretString"`) {
			t.Errorf("%s: SessionKeySecret is not generated by the stack", name)
		}
		if _, ok := d["Conditions"].(map[string]any)["HasIdpClientSecret"]; !ok {
			t.Errorf("%s: no condition HasIdpClientSecret", name)
		}
		// Which resources carry each statement: a function (SAM) or a role policy naming
		// the function's role (CDK).
		for id, r := range res {
			b, _ := json.Marshal(r)
			s := string(b)
			for _, sid := range []string{"SessionKeyRead", "IdpClientSecretRead"} {
				if !strings.Contains(s, `"`+sid+`"`) {
					continue
				}
				if !strings.Contains(id, "MarketplaceFunction") {
					t.Errorf("%s: %s grants %s; only MarketplaceFunction may", name, id, sid)
				}
				if sid == "IdpClientSecretRead" && !strings.Contains(s, "HasIdpClientSecret") {
					t.Errorf("%s: %s grants IdpClientSecretRead without the HasIdpClientSecret condition", name, id)
				}
			}
		}
	}
}

// trustedIdpsProblems lists how doc (template.yaml's rawSAM form or the CDK template)
// departs from the TrustedIdps rule: a String parameter TrustedIdps, default "", not
// NoEcho (it names issuers and URLs, no secret), feeding TRUSTED_IDPS of
// MarketplaceFunction (the function that seeds the providers at a cold start; docs/AUTH.md
// "The enterprise path") and of no other function, nor of the Globals.
func trustedIdpsProblems(doc map[string]any) []string {
	var out []string
	p, _ := doc["Parameters"].(map[string]any)["TrustedIdps"].(map[string]any)
	switch {
	case p == nil:
		out = append(out, "no parameter TrustedIdps")
	case p["Type"] != "String" || p["Default"] != "" || p["NoEcho"] != nil:
		out = append(out, fmt.Sprintf("parameter TrustedIdps is %v, want a String defaulting to \"\" without NoEcho", p))
	}
	if g, ok := doc["Globals"].(map[string]any); ok {
		if b, _ := json.Marshal(g); strings.Contains(string(b), "TRUSTED_IDPS") {
			out = append(out, "TRUSTED_IDPS is in the Globals: only MarketplaceFunction may have it")
		}
	}
	found := false
	for id, r := range doc["Resources"].(map[string]any) {
		res := r.(map[string]any)
		if t := res["Type"]; t != "AWS::Serverless::Function" && t != "AWS::Lambda::Function" {
			continue
		}
		vars, _ := res["Properties"].(map[string]any)["Environment"].(map[string]any)["Variables"].(map[string]any)
		v, ok := vars["TRUSTED_IDPS"]
		if !ok {
			continue
		}
		if id != "MarketplaceFunction" {
			out = append(out, id+" has TRUSTED_IDPS; only MarketplaceFunction may")
			continue
		}
		found = true
		m, _ := v.(map[string]any)
		if ref, _ := m["Ref"].(string); ref != "TrustedIdps" {
			out = append(out, fmt.Sprintf("MarketplaceFunction's TRUSTED_IDPS is %v, want {Ref: TrustedIdps}", v))
		}
	}
	if !found {
		out = append(out, "MarketplaceFunction has no TRUSTED_IDPS")
	}
	return out
}

// TestParityTrustedIdps: both templates take the enterprise identity providers as the
// parameter TrustedIdps and hand it to MarketplaceFunction only, as TRUSTED_IDPS; a
// template that drifts (the variable on another function, or a constant) is noticed.
func TestParityTrustedIdps(t *testing.T) {
	cdk := cdkTemplate(t)
	for name, doc := range map[string]map[string]any{"template.yaml": rawSAM(t), "cdk": cdk} {
		if p := trustedIdpsProblems(doc); len(p) > 0 {
			t.Errorf("%s: %s", name, strings.Join(p, "; "))
		}
		// Drift: the variable moved to McpFunction and made a constant.
		var drifted map[string]any
		b, _ := json.Marshal(doc)
		if err := json.Unmarshal(b, &drifted); err != nil {
			t.Fatal(err)
		}
		res := drifted["Resources"].(map[string]any)
		mp := res["MarketplaceFunction"].(map[string]any)["Properties"].(map[string]any)["Environment"].(map[string]any)["Variables"].(map[string]any)
		mp["TRUSTED_IDPS"] = "[]"
		mcp := res["McpFunction"].(map[string]any)["Properties"].(map[string]any)
		if _, ok := mcp["Environment"]; !ok {
			mcp["Environment"] = map[string]any{"Variables": map[string]any{}}
		}
		mcp["Environment"].(map[string]any)["Variables"].(map[string]any)["TRUSTED_IDPS"] = map[string]any{"Ref": "TrustedIdps"}
		if p := trustedIdpsProblems(drifted); len(p) != 2 {
			t.Errorf("%s drifted: problems %q, want 2 (the constant, McpFunction)", name, p)
		}
	}
}
