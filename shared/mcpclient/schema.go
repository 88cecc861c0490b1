package mcpclient

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/text"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// usableTools keeps the tools the gateway can expose and reports the others (docs/DESIGN.md §6: "an
// upstream tool whose inputSchema is unusable is dropped — never the whole connection").
// An input schema that is missing, {}, $schema-only or otherwise loose about the root type
// is normalised to describe an object (NormalizeToolSchema): the tool is kept with the
// normalised schema (also written into its Definition) and reported in normalized. So is
// one with an x-mcp-header annotation on a number, object or array parameter: the
// annotation is removed, every other byte kept (StripForbiddenHeaderAnnotations). A tool
// is dropped when it has no name, repeats an earlier name, has an input schema that cannot
// describe an object, or an output schema (when present) that is not an object schema that
// compiles (draft 2020-12 unless $schema says otherwise; no remote $ref is fetched).
func usableTools(all []json.RawMessage) (kept []Tool, dropped, normalized []DroppedTool) {
	seen := make(map[string]bool, len(all))
	for _, def := range all {
		t, err := parseTool(def)
		if err != nil {
			dropped = append(dropped, DroppedTool{Name: "", Reason: "definition is not a valid tool object"})
			continue
		}
		reason := ""
		switch {
		case t.Name == "":
			reason = "tool has no name"
		case seen[t.Name]:
			reason = "duplicate tool name"
		default:
			norm, changed, why, ok := NormalizeToolSchema(nonNull(t.InputSchema))
			switch {
			case !ok:
				reason = why
			case changed:
				if d, err := jsonobj.SetMember(t.Definition, "inputSchema", norm); err == nil {
					t.InputSchema, t.Definition = norm, d
					normalized = append(normalized, DroppedTool{Name: text.Clip(t.Name, 128), Reason: why})
				} else {
					reason = "definition is not a valid tool object"
				}
			}
			if reason == "" {
				if stripped, removed := StripForbiddenHeaderAnnotations(t.InputSchema); len(removed) > 0 {
					if d, err := jsonobj.SetMember(t.Definition, "inputSchema", stripped); err == nil {
						t.InputSchema, t.Definition = stripped, d
						normalized = append(normalized, DroppedTool{Name: text.Clip(t.Name, 128),
							Reason: "x-mcp-header removed from " + strings.Join(removed, ", ") + ": MCP 2026-07-28 allows it on string, integer and boolean parameters only"})
					}
				}
			}
			if reason == "" && t.OutputSchema != nil {
				if r := schemaProblem(t.OutputSchema, false); r != "" {
					reason = "outputSchema " + r
				}
			}
		}
		if reason != "" {
			dropped = append(dropped, DroppedTool{Name: text.Clip(t.Name, 128), Reason: reason})
			continue
		}
		seen[t.Name] = true
		kept = append(kept, t)
	}
	return kept, dropped, normalized
}

// schemaProblem returns "" for a usable schema, else why not.
func schemaProblem(schema json.RawMessage, required bool) string {
	if len(schema) == 0 {
		if required {
			return "is missing"
		}
		return ""
	}
	var doc any
	if err := json.Unmarshal(schema, &doc); err != nil {
		return "is not valid JSON"
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return "is not a JSON object"
	}
	if typ, _ := obj["type"].(string); typ != "object" {
		return fmt.Sprintf("root type is %s, not \"object\"", describeType(obj["type"]))
	}
	return compileDoc(doc)
}

// compileDoc compiles doc (decoded JSON) as a JSON Schema, never fetching an external
// $ref, and returns "" or why not ("is not a valid JSON Schema").
func compileDoc(doc any) string {
	c := jsonschema.NewCompiler()
	c.UseLoader(noRemoteLoader{})
	const loc = "mcp:///tool-schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return "is not a valid JSON Schema"
	}
	if _, err := c.Compile(loc); err != nil {
		return "is not a valid JSON Schema"
	}
	return ""
}

func describeType(v any) string {
	switch v := v.(type) {
	case nil:
		return "missing"
	case string:
		return fmt.Sprintf("%q", text.Clip(v, 32))
	default:
		b, _ := json.Marshal(v)
		return text.Clip(string(b), 64)
	}
}

// noRemoteLoader refuses every external $ref: checking or normalising a tool schema must
// never fetch.
type noRemoteLoader struct{}

func (noRemoteLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q not loaded", text.Clip(url, 128))
}
