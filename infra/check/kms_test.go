package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/awslabs/goformation/v7/intrinsics"
)

// kmsUse is, per key and function, the KMS actions the function may take on that key:
// upstream OAuth tokens (docs/UPSTREAM-AUTH.md; not the pins function) and the access-token
// signing key of the gateway's own authorization server (docs/AUTH.md "Signing key": the
// marketplace signs, the gateway and pins only read the public key to verify, the health
// check verifies nothing).
var kmsUse = map[string]map[string][]string{
	"UpstreamAuthKey": {
		"HealthCheckFunction": {"kms:Decrypt", "kms:GenerateDataKey"},
		"MarketplaceFunction": {"kms:Decrypt", "kms:GenerateDataKey"},
		"McpFunction":         {"kms:Decrypt", "kms:GenerateDataKey"},
	},
	"AuthSigningKey": {
		"MarketplaceFunction": {"kms:GetPublicKey", "kms:Sign"},
		"McpFunction":         {"kms:GetPublicKey"},
		"PinsFunction":        {"kms:GetPublicKey"},
	},
}

const kmsPurpose = `"kms:EncryptionContext:purpose":"agentpack-upstream-auth"`

// TestSAMKMSKeys: template.yaml declares the token key (rotated, retained) and the signing
// key (RSA_2048, SIGN_VERIFY), grants on each exactly the actions of kmsUse to exactly
// those functions (the token key under the purpose encryption context), and hands the
// signing key's id as AUTH_SIGNING_KMS_KEY_ID to exactly the functions that use it.
func TestSAMKMSKeys(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testpeer.RepoRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := intrinsics.ProcessYAML(raw, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]struct {
			Type           string
			DeletionPolicy string
			Properties     json.RawMessage
		}
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	key := doc.Resources["UpstreamAuthKey"]
	if key.Type != "AWS::KMS::Key" || key.DeletionPolicy != "Retain" || !strings.Contains(compact(key.Properties), `"EnableKeyRotation":true`) {
		t.Errorf("UpstreamAuthKey: %s %s %s", key.Type, key.DeletionPolicy, key.Properties)
	}
	checkSigningKey(t, "template.yaml", doc.Resources["AuthSigningKey"].Type, compact(doc.Resources["AuthSigningKey"].Properties))
	n := 0
	for id, r := range doc.Resources {
		if r.Type != "AWS::Serverless::Function" {
			continue
		}
		n++
		var props struct {
			Policies    json.RawMessage
			Environment struct{ Variables map[string]any }
		}
		if err := json.Unmarshal(r.Properties, &props); err != nil {
			t.Fatal(err)
		}
		checkKMSGrants(t, "template.yaml "+id, id, string(props.Policies))
		checkSigningEnv(t, "template.yaml "+id, id, props.Environment.Variables["AUTH_SIGNING_KMS_KEY_ID"])
	}
	if n != 5 { // the four serving functions and the migration function (no key at all)
		t.Errorf("template.yaml: %d functions, want 5", n)
	}
}

// TestCDKKMSKeys: the same for the CDK app's synthesized template.
func TestCDKKMSKeys(t *testing.T) {
	doc := cdkTemplate(t)
	res := doc["Resources"].(map[string]any)
	key, _ := res["UpstreamAuthKey"].(map[string]any)
	if b, _ := json.Marshal(key); key == nil || key["Type"] != "AWS::KMS::Key" || key["DeletionPolicy"] != "Retain" ||
		!strings.Contains(string(b), `"EnableKeyRotation":true`) {
		t.Errorf("CDK UpstreamAuthKey: %s", b)
	}
	sk, _ := res["AuthSigningKey"].(map[string]any)
	b, _ := json.Marshal(sk["Properties"])
	checkSigningKey(t, "CDK", str(sk["Type"]), string(b))
	// Each function's role policy (CDK: <fn>ServiceRoleDefaultPolicy…) must match.
	seen := map[string]bool{}
	for id, r := range res {
		r := r.(map[string]any)
		for _, fn := range []string{"McpFunction", "MarketplaceFunction", "PinsFunction", "HealthCheckFunction"} {
			switch {
			case r["Type"] == "AWS::IAM::Policy" && strings.HasPrefix(id, fn+"ServiceRoleDefaultPolicy"):
				b, _ := json.Marshal(r["Properties"])
				checkKMSGrants(t, "CDK "+fn, fn, string(b))
				seen[fn] = true
			case r["Type"] == "AWS::Lambda::Function" && id == fn:
				env, _ := r["Properties"].(map[string]any)["Environment"].(map[string]any)
				vars, _ := env["Variables"].(map[string]any)
				checkSigningEnv(t, "CDK "+fn, fn, vars["AUTH_SIGNING_KMS_KEY_ID"])
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("found the role policies of %v, want all four functions", seen)
	}
}

func checkSigningKey(t *testing.T, what, typ, props string) {
	t.Helper()
	if typ != "AWS::KMS::Key" || !containsAll(props, `"KeySpec":"RSA_2048"`, `"KeyUsage":"SIGN_VERIFY"`) {
		t.Errorf("%s AuthSigningKey: %s %s, want an RSA_2048 SIGN_VERIFY AWS::KMS::Key", what, typ, props)
	}
}

// checkSigningEnv: AUTH_SIGNING_KMS_KEY_ID is {"Ref": "AuthSigningKey"} (the key id) in the
// functions that use the key, absent elsewhere.
func checkSigningEnv(t *testing.T, what, fn string, v any) {
	t.Helper()
	_, uses := kmsUse["AuthSigningKey"][fn]
	b, _ := json.Marshal(v)
	if got := string(b); uses && got != `{"Ref":"AuthSigningKey"}` || !uses && v != nil {
		t.Errorf("%s: AUTH_SIGNING_KMS_KEY_ID = %s, want the key's id: %v", what, got, uses)
	}
}

// checkKMSGrants compares the KMS actions of a function's policies on each key of kmsUse
// with what it may take; a wildcard KMS action anywhere fails.
func checkKMSGrants(t *testing.T, what, fn, policy string) {
	t.Helper()
	if strings.Contains(policy, `"kms:*"`) {
		t.Errorf("%s: wildcard KMS action: %s", what, policy)
	}
	var v any
	_ = json.Unmarshal([]byte(policy), &v)
	var stmts []map[string]any
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if _, ok := x["Action"]; ok {
				if _, ok := x["Effect"]; ok {
					stmts = append(stmts, x)
					return
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
	for key, use := range kmsUse {
		set := map[string]bool{}
		for _, st := range stmts {
			b, _ := json.Marshal(st)
			if !names(string(b), key) {
				continue
			}
			for _, a := range asStrings(st["Action"]) {
				set[a] = true
			}
			if key == "UpstreamAuthKey" && !strings.Contains(string(b), kmsPurpose) {
				t.Errorf("%s: %s grant lacks the condition %s", what, key, kmsPurpose)
			}
		}
		if got := keys(set); !slices.Equal(got, use[fn]) {
			t.Errorf("%s: actions on %s = %v, want %v", what, key, got, use[fn])
		}
	}
	// No KMS action on any other resource.
	for _, st := range stmts {
		b, _ := json.Marshal(st)
		if strings.Contains(fmt.Sprint(st["Action"]), "kms:") &&
			!names(string(b), "UpstreamAuthKey") && !names(string(b), "AuthSigningKey") {
			t.Errorf("%s: a KMS grant on another resource: %s", what, b)
		}
	}
}

// names reports whether a JSON statement refers to the resource id: {"Ref": id},
// {"Fn::GetAtt": [id, …]} (CDK) or {"Fn::GetAtt": "id.Arn"} (template.yaml).
func names(js, id string) bool {
	return strings.Contains(js, `"`+id+`"`) || strings.Contains(js, `"`+id+`.`)
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
