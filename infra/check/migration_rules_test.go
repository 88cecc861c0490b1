package check

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// The rules of the migrations in the deploy (docs/DEPLOY.md, "What the deploy does to the
// database"), for a CloudFormation document (template.yaml as written, or the CDK app's
// synthesized template):
//
//   - one custom resource of type Custom::DatabaseMigration, whose ServiceToken is the
//     migration function's ARN, with a ServiceTimeout above the function's own timeout
//     and at most an hour;
//   - every other function depends on it (DependsOn), so new code goes live only after
//     its schema;
//   - the migration function is in the VPC (its own security group and the private
//     subnets) when the stack has a database, and reaches it directly: its DATABASE_HOST is
//     the instance's endpoint address and nothing of its environment names the proxy
//     (goose's session lock; docs/DATABASE.md).
const (
	migrationResource = "DatabaseMigration"
	migrationFunction = "MigrationFunction"
)

// migrationRules returns every rule doc breaks, in words. sam says whether doc is
// template.yaml (Globals apply to its AWS::Serverless::Function resources).
func migrationRules(doc map[string]any, sam bool) []string {
	var bad []string
	res, _ := doc["Resources"].(map[string]any)
	props := func(id string) map[string]any {
		r, _ := res[id].(map[string]any)
		p, _ := r["Properties"].(map[string]any)
		return p
	}
	cr, ok := res[migrationResource].(map[string]any)
	if !ok || cr["Type"] != "Custom::DatabaseMigration" {
		return []string{"no Custom::DatabaseMigration resource " + migrationResource}
	}
	cp := props(migrationResource)
	if getAttTarget(cp["ServiceToken"]) != migrationFunction {
		bad = append(bad, "the custom resource's ServiceToken is not "+migrationFunction+"'s ARN")
	}
	fnTimeout := num(props(migrationFunction)["Timeout"])
	if st := num(cp["ServiceTimeout"]); st <= fnTimeout || st > 3600 {
		bad = append(bad, "the custom resource's ServiceTimeout is not above the function's timeout and at most 3600 s")
	}
	if _, ok := cp["CodeVersion"]; !ok {
		bad = append(bad, "the custom resource does not name the function's version (a deploy with new migrations would not run it)")
	}

	var glob struct {
		VpcConfig   any
		Environment struct{ Variables map[string]any }
	}
	if sam {
		b, _ := json.Marshal(doc["Globals"].(map[string]any)["Function"])
		_ = json.Unmarshal(b, &glob)
	}
	for _, id := range slices.Sorted(maps.Keys(res)) {
		r := res[id].(map[string]any)
		if r["Type"] != "AWS::Lambda::Function" && r["Type"] != "AWS::Serverless::Function" {
			continue
		}
		if id == migrationFunction {
			continue
		}
		if !slices.Contains(asStrings(r["DependsOn"]), migrationResource) {
			bad = append(bad, "serving function "+id+" does not depend on "+migrationResource)
		}
	}

	mp := props(migrationFunction)
	if mp == nil {
		return append(bad, "no function "+migrationFunction)
	}
	vpc := mp["VpcConfig"]
	if vpc == nil && sam {
		vpc = glob.VpcConfig
	}
	// template.yaml writes it under the UseRds condition: the branch with the database.
	if m, ok := vpc.(map[string]any); ok {
		if branches, ok := m["Fn::If"].([]any); ok && len(branches) == 3 && branches[0] == "UseRds" {
			vpc = branches[1]
		}
	}
	v, _ := vpc.(map[string]any)
	sgs, _ := json.Marshal(v["SecurityGroupIds"])
	subnets, _ := json.Marshal(v["SubnetIds"])
	if v == nil || !strings.Contains(string(sgs), "MigrationSecurityGroup") || !strings.Contains(strings.ToLower(string(subnets)), "private") {
		bad = append(bad, migrationFunction+" is not in the VPC's private subnets with MigrationSecurityGroup: "+string(sgs)+" "+string(subnets))
	}
	env := map[string]any{}
	maps.Copy(env, glob.Environment.Variables)
	if e, ok := mp["Environment"].(map[string]any); ok {
		if vars, ok := e["Variables"].(map[string]any); ok {
			maps.Copy(env, vars)
		}
	}
	all, _ := json.Marshal(env)
	if strings.Contains(string(all), "DbProxy") {
		bad = append(bad, migrationFunction+"'s environment names the proxy: "+string(all))
	}
	host, _ := json.Marshal(env["DATABASE_HOST"])
	if !strings.Contains(string(host), `"Database"`) || !strings.Contains(string(host), "Endpoint.Address") {
		bad = append(bad, migrationFunction+"'s DATABASE_HOST is not the instance's endpoint address: "+string(host))
	}
	return bad
}

// TestMigrationRules: template.yaml and the CDK template keep the rules.
func TestMigrationRules(t *testing.T) {
	for name, doc := range map[string]map[string]any{"template.yaml": rawSAM(t)} {
		for _, b := range migrationRules(doc, true) {
			t.Errorf("%s: %s", name, b)
		}
	}
	for _, b := range migrationRules(cdkTemplate(t), false) {
		t.Errorf("cdk: %s", b)
	}
}

// TestMigrationRulesDetect: each rule fails on a template that breaks it, in both
// templates: a serving function without the dependency, the migration function outside
// the VPC, its database host the proxy, its environment naming the proxy, no custom
// resource.
func TestMigrationRulesDetect(t *testing.T) {
	type breaker struct {
		name, want string
		brk        func(res map[string]any)
	}
	fnProps := func(res map[string]any, id string) map[string]any {
		return res[id].(map[string]any)["Properties"].(map[string]any)
	}
	breakers := []breaker{
		{"no dependency", "serving function PinsFunction does not depend", func(res map[string]any) {
			delete(res["PinsFunction"].(map[string]any), "DependsOn")
		}},
		{"outside the VPC", "is not in the VPC", func(res map[string]any) {
			fnProps(res, migrationFunction)["VpcConfig"] = map[string]any{"SubnetIds": []any{}, "SecurityGroupIds": []any{}}
		}},
		{"through the proxy", "DATABASE_HOST is not the instance's", func(res map[string]any) {
			vars := fnProps(res, migrationFunction)["Environment"].(map[string]any)["Variables"].(map[string]any)
			vars["DATABASE_HOST"] = map[string]any{"Fn::GetAtt": []any{"DbProxy", "Endpoint"}}
		}},
		{"a URL through the proxy", "environment names the proxy", func(res map[string]any) {
			vars := fnProps(res, migrationFunction)["Environment"].(map[string]any)["Variables"].(map[string]any)
			vars["DATABASE_URL"] = map[string]any{"Fn::Sub": "postgres://u@${DbProxy.Endpoint}:5432/agentpack"}
		}},
		{"no custom resource", "no Custom::DatabaseMigration", func(res map[string]any) {
			delete(res, migrationResource)
		}},
		{"timeout", "ServiceTimeout", func(res map[string]any) {
			fnProps(res, migrationResource)["ServiceTimeout"] = 3601.0
		}},
	}
	for name, load := range map[string]func() (map[string]any, bool){
		"template.yaml": func() (map[string]any, bool) { return rawSAM(t), true },
		"cdk":           func() (map[string]any, bool) { return cdkTemplate(t), false },
	} {
		for _, b := range breakers {
			doc, sam := load()
			b.brk(doc["Resources"].(map[string]any))
			got := strings.Join(migrationRules(doc, sam), "\n")
			if !strings.Contains(got, b.want) {
				t.Errorf("%s, %s: the rules said %q, want %q", name, b.name, got, b.want)
			}
		}
	}
}
