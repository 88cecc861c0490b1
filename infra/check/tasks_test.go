package check

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTaskInfrastructure (MCP Tasks, docs/TASKS.md): in template.yaml and in the CDK app
// alike, the MCP function runs long enough for the asynchronous task path (≥ 300 s) and may
// invoke itself — lambda:InvokeFunction on its own generated name only.
func TestTaskInfrastructure(t *testing.T) {
	sam := parseSAM(t, nil)
	fn := sam.GetAllServerlessFunctionResources()["McpFunction"]
	if fn == nil || fn.Timeout == nil || *fn.Timeout < 300 {
		t.Fatalf("template.yaml McpFunction timeout %v, want ≥ 300 s", fn.Timeout)
	}
	b, _ := json.Marshal(fn.Policies)
	if !strings.Contains(string(b), `"InvokeSelfForTasks"`) || !strings.Contains(string(b), `lambda:InvokeFunction`) ||
		!strings.Contains(string(b), `-McpFunction-*`) || !strings.Contains(string(b), `:function:`) {
		t.Errorf("template.yaml McpFunction lacks the self-invoke statement: %s", b)
	}

	if fn.EventInvokeConfig == nil || fn.EventInvokeConfig.MaximumRetryAttempts == nil || *fn.EventInvokeConfig.MaximumRetryAttempts != 0 {
		t.Errorf("template.yaml McpFunction: asynchronous invocations must not be retried (EventInvokeConfig.MaximumRetryAttempts 0)")
	}

	doc := cdkTemplate(t)
	res := doc["Resources"].(map[string]any)
	props := res["McpFunction"].(map[string]any)["Properties"].(map[string]any)
	if num(props["Timeout"]) < 300 {
		t.Errorf("CDK McpFunction timeout %v, want ≥ 300 s", props["Timeout"])
	}
	retries := false
	for _, r := range res {
		r := r.(map[string]any)
		if r["Type"] == "AWS::Lambda::EventInvokeConfig" {
			pr := r["Properties"].(map[string]any)
			b, _ := json.Marshal(pr["FunctionName"])
			retries = retries || (strings.Contains(string(b), "McpFunction") && num(pr["MaximumRetryAttempts"]) == 0 && pr["MaximumRetryAttempts"] != nil)
		}
	}
	if !retries {
		t.Error("CDK: McpFunction's asynchronous invocations may be retried (no EventInvokeConfig with MaximumRetryAttempts 0)")
	}
	found := false
	for _, r := range res {
		r := r.(map[string]any)
		if r["Type"] != "AWS::IAM::Policy" {
			continue
		}
		pb, _ := json.Marshal(r["Properties"])
		if strings.Contains(string(pb), `"InvokeSelfForTasks"`) {
			found = strings.Contains(string(pb), `lambda:InvokeFunction`) &&
				strings.Contains(string(pb), `function:${AWS::StackName}-McpFunction-*`) &&
				strings.Contains(string(pb), `McpFunctionServiceRole`)
		}
	}
	if !found {
		t.Error("CDK: no InvokeSelfForTasks statement on the MCP function's role")
	}
}
