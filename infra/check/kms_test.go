package check

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/awslabs/goformation/v7/intrinsics"
)

// upstreamAuthUsers are the functions that read or refresh upstream OAuth tokens and so
// may use the UpstreamAuthKey (docs/UPSTREAM-AUTH.md); the pins function may not.
var upstreamAuthUsers = []string{"HealthCheckFunction", "MarketplaceFunction", "McpFunction"}

const kmsPurpose = `"kms:EncryptionContext:purpose":"agentpack-upstream-auth"`

// TestSAMUpstreamAuthKey: template.yaml declares the token key (rotated, retained) and
// grants exactly kms:GenerateDataKey and kms:Decrypt on it, under the purpose encryption
// context, to the functions that handle tokens and to no other.
func TestSAMUpstreamAuthKey(t *testing.T) {
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
	for id, r := range doc.Resources {
		if r.Type != "AWS::Serverless::Function" {
			continue
		}
		checkKMSGrant(t, "template.yaml "+id, compact(r.Properties), slices.Contains(upstreamAuthUsers, id))
	}
}

// TestCDKUpstreamAuthKey: the same for the CDK app's synthesized template.
func TestCDKUpstreamAuthKey(t *testing.T) {
	doc := cdkTemplate(t)
	res := doc["Resources"].(map[string]any)
	key, _ := res["UpstreamAuthKey"].(map[string]any)
	if b, _ := json.Marshal(key); key == nil || key["Type"] != "AWS::KMS::Key" || key["DeletionPolicy"] != "Retain" ||
		!strings.Contains(string(b), `"EnableKeyRotation":true`) {
		t.Errorf("CDK UpstreamAuthKey: %s", b)
	}
	// Each function's role policy (CDK: <fn>ServiceRoleDefaultPolicy…) must match.
	seen := map[string]bool{}
	for id, r := range res {
		r := r.(map[string]any)
		if r["Type"] != "AWS::IAM::Policy" {
			continue
		}
		for _, fn := range []string{"McpFunction", "MarketplaceFunction", "PinsFunction", "HealthCheckFunction"} {
			if strings.HasPrefix(id, fn+"ServiceRoleDefaultPolicy") {
				b, _ := json.Marshal(r["Properties"])
				checkKMSGrant(t, "CDK "+fn, string(b), slices.Contains(upstreamAuthUsers, fn))
				seen[fn] = true
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("found the role policies of %v, want all four functions", seen)
	}
}

func checkKMSGrant(t *testing.T, what, policy string, want bool) {
	t.Helper()
	has := strings.Contains(policy, "kms:")
	if has != want {
		t.Errorf("%s: uses KMS = %v, want %v", what, has, want)
		return
	}
	if !want {
		return
	}
	if strings.Contains(policy, `"kms:*"`) || strings.Contains(policy, "kms:Encrypt\"") || strings.Contains(policy, "kms:ReEncrypt") {
		t.Errorf("%s: more KMS actions than GenerateDataKey and Decrypt: %s", what, policy)
	}
	for _, must := range []string{`"kms:GenerateDataKey"`, `"kms:Decrypt"`, "UpstreamAuthKey", kmsPurpose} {
		if !strings.Contains(policy, must) {
			t.Errorf("%s: KMS grant lacks %s", what, must)
		}
	}
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
