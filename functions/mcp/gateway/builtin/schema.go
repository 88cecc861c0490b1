package builtin

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/connections"

	gschema "github.com/google/jsonschema-go/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Input is what a built-in's input schema says beyond what its argument struct does
// (inputSchema).
type Input struct {
	// Props refine the generated properties by JSON name: each member set here (format,
	// pattern, length and value bounds, an object's own properties, …) replaces the
	// generated one. A name the struct lacks is an error at New.
	Props map[string]*gschema.Schema
	// OneOf and AnyOf are the root's: which members are required together.
	OneOf, AnyOf []*gschema.Schema
}

// inputSchema is the input schema of built-in b, generated from its argument struct with
// jsonschema.For's rules (the JSON Schema library go-sdk uses): an object of the struct's
// fields under their JSON names, no other properties, a field required unless its json
// tag says omitempty, a field's description its `jsonschema:"…"` tag, and json.RawMessage
// an object. A pointer field (optional, its absence told apart from a zero value) is not
// nullable: leaving the member out is how a caller omits it. b.Input's refinements follow.
func inputSchema(b *Builtin) ([]byte, error) {
	if b.Handler.args == nil {
		return nil, errors.New("no argument struct (use Typed)")
	}
	s, err := gschema.ForType(b.Handler.args, &gschema.ForOptions{TypeSchemas: map[reflect.Type]*gschema.Schema{
		reflect.TypeFor[json.RawMessage](): {Type: "object"},
	}})
	if err != nil {
		return nil, err
	}
	for _, p := range s.Properties {
		if i := slices.Index(p.Types, "null"); i >= 0 && len(p.Types) == 2 {
			p.Type, p.Types = p.Types[1-i], nil
		}
	}
	for name, r := range b.Input.Props {
		p := s.Properties[name]
		if p == nil {
			return nil, fmt.Errorf("input refinement of %q: no such field", name)
		}
		if s.Properties[name], err = overlay(p, r); err != nil {
			return nil, fmt.Errorf("input refinement of %q: %w", name, err)
		}
	}
	s.OneOf, s.AnyOf = b.Input.OneOf, b.Input.AnyOf
	return json.Marshal(s)
}

// overlay is schema p with every member r sets in place of p's.
func overlay(p, r *gschema.Schema) (*gschema.Schema, error) {
	var pm, rm map[string]json.RawMessage
	pb, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	rb, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(pb, &pm); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(rb, &rm); err != nil {
		return nil, err
	}
	maps.Copy(pm, rm)
	ob, err := json.Marshal(pm)
	if err != nil {
		return nil, err
	}
	var out gschema.Schema
	if err := json.Unmarshal(ob, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// outputSchema is the output schema a built-in declares: the envelope of docs/DESIGN.md §5
// (wire.Envelope) with data, on success, as data (dataSchema) describes it.
func outputSchema(data string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"},"data":` + data + `,"error":{"type":"object","properties":{"code":{"type":"string"},"message":{"type":"string"},"retryable":{"type":"boolean"},"hint":{"type":"string"},"errorId":{"type":"string"}},"required":["code","message","retryable"]},"meta":{"type":"object","properties":{"tool":{"type":"string"},"version":{"type":"string"}},"required":["tool","version"]}},"required":["ok","meta"]}`)
}

// portableTypes returns the JSON Schema doc with every `"type":[T,"null"]` written as
// `"anyOf":[{"type":T},{"type":"null"}]` (the same set of instances), and whether it changed
// anything. A `type` array is legal JSON Schema but not portable: clients that map tool
// schemas onto a single-type dialect (the OpenAPI subset of function-calling APIs) reject or
// drop it, and the MCP Inspector's --strict lint warns on it (docs/TESTING.md).
// A schema that already has an anyOf is left as it is.
func portableTypes(doc any) (any, bool) {
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				x[k] = walk(sub)
			}
			if ts, ok := x["type"].([]any); ok && len(ts) == 2 && x["anyOf"] == nil {
				if i := slices.Index(ts, any("null")); i >= 0 {
					delete(x, "type")
					x["anyOf"] = []any{map[string]any{"type": ts[1-i]}, map[string]any{"type": "null"}}
					changed = true
				}
			}
		case []any:
			for i, sub := range x {
				x[i] = walk(sub)
			}
		}
		return v
	}
	return walk(doc), changed
}

// portableJSON is portableTypes over the JSON text raw: raw itself when nothing changes.
func portableJSON(raw json.RawMessage) (json.RawMessage, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	doc, changed := portableTypes(doc)
	if !changed {
		return raw, nil
	}
	return json.Marshal(doc)
}

// compileSchema compiles the JSON Schema doc under name (formats asserted).
func compileSchema(name string, doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat() // the schemas say format "uuid": check it, not just advertise it
	url := "mem://builtin/" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// outputTypeSchemas are the schemas of the types in built-ins' answers that jsonschema.For
// cannot derive from their fields, each as it is on the wire:
//   - json.RawMessage (a tool's inputSchema, a tool's annotations) is an object or null;
//   - connections.RefreshResult encodes itself (its MarshalJSON) as connections.TestAnswer.
//
// A type with its own JSON encoding missing here is an error at New (checkEncodings).
func outputTypeSchemas() (map[reflect.Type]*gschema.Schema, error) {
	test, err := gschema.ForType(reflect.TypeFor[connections.TestAnswer](), nil)
	if err != nil {
		return nil, err
	}
	annotate(reflect.TypeFor[connections.TestAnswer](), test)
	return map[reflect.Type]*gschema.Schema{
		reflect.TypeFor[json.RawMessage]():           {Types: []string{"object", "null"}},
		reflect.TypeFor[connections.RefreshResult](): test,
	}, nil
}

// dataSchema is the JSON Schema of a built-in's answer (the envelope's data), generated
// from its Out type t with jsonschema.For's rules, as go-sdk's mcp.AddTool derives a
// tool's outputSchema: a struct is an object of its fields under their JSON names and no
// other members, a field is required unless its json tag says omitempty (a field always
// written is always there), a pointer or slice may be null (a map may not: an answer type
// never leaves a map member nil, and outputs_test.go holds the answers to it), time.Time is
// a string, a field's description is its `jsonschema:"…"` tag; outputTypeSchemas covers
// what encodes itself. nil (no schema) for Unstructured. Errors: t is neither a struct
// nor Unstructured (an outputSchema's root must be an object: MCP "Output Schema"), or
// holds a type the generator cannot describe.
func dataSchema(t reflect.Type) ([]byte, error) {
	if t == nil {
		return nil, errors.New("no answer type (use Typed)")
	}
	if t == reflect.TypeFor[Unstructured]() {
		return nil, nil
	}
	known, err := outputTypeSchemas()
	if err != nil {
		return nil, err
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("answer type %s is not a struct: the schema's root must be an object", t)
	}
	if err := checkEncodings(t, known, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	s, err := gschema.ForType(t, &gschema.ForOptions{TypeSchemas: known})
	if err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("answer type %s: the schema's root must be an object", t)
	}
	annotate(t, s)
	return json.Marshal(s)
}

// annotate adds to s, the schema jsonschema.For made of t, what the view types' field tags
// say that jsonschema.For does not read: `enum:"a,b"` (the values a string may take; null
// too when the field may be null) and `doc:"…"` (the description, unless a jsonschema tag
// gave one). These are the tags the REST API's OpenAPI document is generated from, so a
// view reads the same in both.
func annotate(t reflect.Type, s *gschema.Schema) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		annotate(t.Elem(), s.Items)
	case reflect.Map:
		annotate(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			p := s.Properties[name]
			if f.Anonymous || !f.IsExported() || p == nil {
				continue
			}
			if e, ok := f.Tag.Lookup("enum"); ok {
				p.Enum = nil
				for v := range strings.SplitSeq(e, ",") {
					p.Enum = append(p.Enum, v)
				}
				if slices.Contains(p.Types, "null") {
					p.Enum = append(p.Enum, nil)
				}
			}
			if d := f.Tag.Get("doc"); d != "" && p.Description == "" {
				p.Description = d
			}
			annotate(f.Type, p)
		}
	}
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// checkEncodings fails when a type reachable from t's JSON fields encodes itself
// (json.Marshaler, encoding.TextMarshaler) and neither known nor jsonschema.For (time.Time)
// describes it: its schema, derived from its fields, would not be what it writes.
func checkEncodings(t reflect.Type, known map[reflect.Type]*gschema.Schema, seen map[reflect.Type]bool) error {
	for {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if known[t] != nil || t == reflect.TypeFor[time.Time]() || seen[t] {
			return nil
		}
		seen[t] = true
		if p := reflect.PointerTo(t); p.Implements(jsonMarshaler) || p.Implements(textMarshaler) {
			return fmt.Errorf("%s encodes itself (MarshalJSON or MarshalText): describe it in outputTypeSchemas", t)
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
			continue
		case reflect.Struct:
			for _, f := range reflect.VisibleFields(t) {
				if !f.IsExported() || f.Tag.Get("json") == "-" {
					continue
				}
				if err := checkEncodings(f.Type, known, seen); err != nil {
					return fmt.Errorf("%s.%s: %w", t, f.Name, err)
				}
			}
		}
		return nil
	}
}
