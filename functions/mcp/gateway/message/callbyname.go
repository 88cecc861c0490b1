package message

import (
	"bytes"
	"encoding/json"

	"github.com/agentpack/gateway/shared/jsonobj"
)

// CallByName turns body, when it is a tools/call of callTool (the gateway's
// agentpack_tool_call, builtin.CallToolName) naming another tool, into the direct
// tools/call of that tool: params "name" becomes the named tool and
// "arguments" its arguments (absent: {}); every other member (id, _meta, task) is kept.
// ok is false — body is served as it is — for anything else, including arguments the
// built-in's schema refuses (go-sdk then answers its validation error) and a call naming
// callTool itself.
func CallByName(body []byte, callTool string) (direct []byte, target string, ok bool) {
	if !bytes.Contains(body, []byte(callTool)) {
		return nil, "", false // the cheap test first: nearly every request stops here
	}
	m, isObj := jsonobj.Members(bytes.TrimSpace(body))
	if !isObj || string(m["method"]) != `"tools/call"` {
		return nil, "", false
	}
	p, isObj := jsonobj.Members(m["params"])
	if !isObj {
		return nil, "", false
	}
	var name string
	if json.Unmarshal(p["name"], &name) != nil || name != callTool {
		return nil, "", false
	}
	a, isObj := jsonobj.Members(p["arguments"])
	if !isObj || len(a) > 2 || (len(a) == 2 && a["arguments"] == nil) {
		return nil, "", false // additionalProperties: false — go-sdk's validation answers
	}
	if json.Unmarshal(a["name"], &target) != nil || target == "" || target == callTool {
		return nil, "", false
	}
	args := a["arguments"]
	if args == nil {
		args = json.RawMessage(`{}`)
	} else if args[0] != '{' {
		return nil, "", false
	}
	params, err := jsonobj.SetMember(m["params"], "name", a["name"])
	if err == nil {
		params, err = jsonobj.SetMember(params, "arguments", args)
	}
	if err == nil {
		direct, err = jsonobj.SetMember(body, "params", params)
	}
	if err != nil {
		return nil, "", false
	}
	return direct, target, true
}
