package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentpack/gateway/shared/text"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// NormalizeToolSchema makes an upstream tool's inputSchema one the gateway can expose (issue
// 14 item 9; docs/DESIGN.md §6: "an upstream tool whose inputSchema is unusable is dropped — never the
// whole connection"). MCP requires a tool's inputSchema to be a JSON Schema object whose root
// "type" is "object"; go-sdk's Server.AddTool panics on anything else. Real servers send less:
// no inputSchema at all, {}, {"$schema": "…"} only, or "type": ["object", "null"]. Those
// still describe a tool that takes an object, so they are normalised and the tool is kept:
//
//   - missing, null or true           → {"type":"object"}
//   - an object without "type"        → the same object with "type":"object" added first, every
//     other keyword kept byte for byte ({} and {"$schema":…} are the common cases)
//   - "type" a list naming "object"   → "type" narrowed to "object", other keywords kept
//   - "type": "object"                → unchanged (the input bytes are returned as they are)
//
// What cannot describe an object is dropped (ok false, with the reason): invalid JSON, a
// non-object schema (false, an array, a string, a number), a root "type" that does not allow
// "object" ("array", ["string","null"], 5), a root "enum" or "const" without an object value,
// or a schema that does not compile as JSON Schema once normalised (draft 2020-12 unless
// $schema says otherwise; an external $ref is never fetched and fails the compile).
//
// raw is the inputSchema member as the upstream sent it (nil or empty when absent). It returns
// the schema to expose (nil when !ok), whether it differs from raw, and a short reason for a
// change or a drop ("" when unchanged), suitable for a log line and the connection's tools
// view. It never panics and does not modify raw.
func NormalizeToolSchema(raw json.RawMessage) (normalized json.RawMessage, changed bool, reason string, ok bool) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage(`{"type":"object"}`), true, "inputSchema is missing; set to {\"type\":\"object\"}", true
	}
	// Numbers as json.Number: a schema re-encoded below keeps 1e400 or 2^63 as written.
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return nil, false, "inputSchema is not valid JSON", false
	}
	switch v := doc.(type) {
	case bool:
		if v {
			return json.RawMessage(`{"type":"object"}`), true, "inputSchema is true (any value); set to {\"type\":\"object\"}", true
		}
		return nil, false, "inputSchema is false (no value is valid)", false
	case map[string]any:
		// handled below
	default:
		return nil, false, fmt.Sprintf("inputSchema is a JSON %s, not an object", jsonKind(v)), false
	}
	obj := doc.(map[string]any)
	if r := objectExcluded(obj); r != "" {
		return nil, false, "inputSchema " + r, false
	}
	out := json.RawMessage(trimmed)
	switch typ := obj["type"].(type) {
	case string:
		if typ != "object" {
			return nil, false, fmt.Sprintf("inputSchema root type is %q, not \"object\"", text.Clip(typ, 32)), false
		}
	case nil:
		if _, present := obj["type"]; present {
			return nil, false, "inputSchema root type is null, not \"object\"", false
		}
		out = addObjectType(trimmed)
		changed = true
		reason = "inputSchema has no root type; set \"type\":\"object\""
		if len(obj) == 0 {
			reason = "inputSchema is {}; set to {\"type\":\"object\"}"
		} else if _, only := obj["$schema"]; only && len(obj) == 1 {
			reason = "inputSchema has only $schema; set \"type\":\"object\""
		}
	case []any:
		if !slices.Contains(typ, any("object")) {
			return nil, false, fmt.Sprintf("inputSchema root type %s does not allow \"object\"", typeText(typ)), false
		}
		obj["type"] = "object"
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, false, "inputSchema is not valid JSON", false
		}
		out, changed = b, true
		reason = fmt.Sprintf("inputSchema root type %s narrowed to \"object\"", typeText(typ))
	default:
		return nil, false, fmt.Sprintf("inputSchema root type is %s, not \"object\"", typeText(typ)), false
	}
	if r := compileProblem(out); r != "" {
		return nil, false, "inputSchema " + r, false
	}
	if !changed {
		return raw, false, "", true
	}
	return out, true, reason, true
}

// objectExcluded returns why a root enum or const rules out every object, or "".
func objectExcluded(obj map[string]any) string {
	if c, has := obj["const"]; has {
		if _, isObj := c.(map[string]any); !isObj {
			return "root const is not an object"
		}
	}
	if e, has := obj["enum"]; has {
		list, _ := e.([]any)
		for _, v := range list {
			if _, isObj := v.(map[string]any); isObj {
				return ""
			}
		}
		return "root enum has no object value"
	}
	return ""
}

// addObjectType inserts "type":"object" as the first member of the JSON object obj (trimmed,
// valid), keeping every other byte.
func addObjectType(obj []byte) json.RawMessage {
	inner := bytes.TrimSpace(obj[1 : len(obj)-1])
	if len(inner) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	out := make([]byte, 0, len(obj)+16)
	out = append(out, `{"type":"object",`...)
	out = append(out, obj[1:]...)
	return out
}

// compileProblem compiles schema (a JSON object) as JSON Schema and returns "" or why not.
func compileProblem(schema []byte) string {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return "is not valid JSON"
	}
	return compileDoc(doc)
}

// typeText shows a root "type" value for a reason: JSON, clipped.
func typeText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "(invalid)"
	}
	return text.Clip(string(b), 64)
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	default:
		return "value"
	}
}
