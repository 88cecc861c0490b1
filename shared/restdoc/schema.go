package restdoc

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// The shaping of generated schemas: openapi3gen's per-type hook (gen.customize), the struct
// tags of the package doc (applyTags), which members are required or nullable and their
// descriptions (gen.members), and OpenAPI 3.1's null type in place of 3.0's nullable
// (walkNullable).

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	timeType      = reflect.TypeFor[time.Time]()
	rawType       = reflect.TypeFor[json.RawMessage]()
)

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

// customize is called by openapi3gen for every type it reaches: t is the type (pointers
// removed), tag the struct tag of the field it was reached through (also for a slice's
// items).
func (g *gen) customize(_ string, t reflect.Type, tag reflect.StructTag, s *openapi3.Schema) error {
	if t != timeType && t != rawType {
		if stand, ok := g.b.StandIns[t]; ok {
			// A generator of its own: this one is in the middle of a value.
			ref, err := g.newGenerator().NewSchemaRefForValue(stand, g.schemas)
			if err != nil {
				return err
			}
			*s = *g.resolve(ref)
			if name, ok := strings.CutPrefix(ref.Ref, "#/components/schemas/"); ok {
				delete(g.schemas, name)
				delete(g.owner, name)
			}
			return applyTags(tag, s)
		} else if implements(t, jsonMarshaler) {
			g.fail(fmt.Errorf("restdoc: %v writes its own JSON: give it a stand-in (Builder.StandIns)", t))
		} else if implements(t, textMarshaler) {
			*s = *openapi3.NewStringSchema()
		}
	}
	if vals, ok := g.b.Enums[t]; ok {
		s.Enum = toAny(vals)
	}
	if t.Kind() == reflect.Struct && t != timeType && s.Properties != nil {
		if err := g.members(t, s); err != nil {
			g.fail(fmt.Errorf("restdoc: %v: %w", t, err))
		}
	}
	if (t.Kind() != reflect.Slice && t.Kind() != reflect.Map) || t == rawType {
		if err := applyTags(tag, s); err != nil {
			g.fail(fmt.Errorf("restdoc: %v: %w", t, err))
		}
	}
	return nil
}

// resolve is the schema a ref names (a component's body, or the inline schema).
func (g *gen) resolve(ref *openapi3.SchemaRef) *openapi3.Schema {
	if name, ok := strings.CutPrefix(ref.Ref, "#/components/schemas/"); ok {
		if c := g.schemas[name]; c != nil && c.Value != nil {
			return c.Value
		}
	}
	return ref.Value
}

// applyTags sets the value constraints of a field's tag on s (the field's own schema, or
// its items' for a slice).
func applyTags(tag reflect.StructTag, s *openapi3.Schema) error {
	if v := tag.Get("type"); v != "" {
		if s.Type != nil && len(*s.Type) > 0 {
			return fmt.Errorf("tag type:%q on a member whose Go type is already %v", v, *s.Type)
		}
		switch v {
		case "object", "array", "string", "number", "integer", "boolean":
			s.Type = &openapi3.Types{v}
		default:
			return fmt.Errorf("tag type:%q is not a JSON Schema type", v)
		}
	}
	if v := tag.Get("enum"); v != "" {
		s.Enum = toAny(strings.Split(v, ","))
	}
	if v := tag.Get("format"); v != "" {
		s.Format = v
	}
	if v := tag.Get("pattern"); v != "" {
		s.Pattern = v
	}
	for _, k := range []string{"minimum", "maximum"} {
		if v := tag.Get(k); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("tag %s:%q: %w", k, v, err)
			}
			if k == "minimum" {
				s.Min = &f
			} else {
				s.Max = &f
			}
		}
	}
	for _, k := range []string{"minLength", "maxLength"} {
		if v := tag.Get(k); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fmt.Errorf("tag %s:%q: %w", k, v, err)
			}
			if k == "minLength" {
				s.MinLength = n
			} else {
				s.MaxLength = &n
			}
		}
	}
	return nil
}

// members sets, on a struct's schema, which members are required, which may be null, and
// their descriptions (a $ref member gets them on a wrapper: {allOf:[ref]} or
// {anyOf:[ref, null]}).
func (g *gen) members(t reflect.Type, s *openapi3.Schema) error {
	s.Required = nil
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Tag.Get("json") == "" {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		prop, ok := s.Properties[name]
		if !ok || prop == nil {
			continue
		}
		omit := slices.ContainsFunc(strings.Split(opts, ","), func(o string) bool { return o == "omitempty" || o == "omitzero" })
		if !omit && f.Tag.Get("optional") != "true" {
			s.Required = append(s.Required, name)
		}
		nullable := (f.Type.Kind() == reflect.Pointer && !omit) || f.Tag.Get("nullable") == "true"
		doc := f.Tag.Get("doc")
		if strings.HasPrefix(prop.Ref, "#/components/schemas/") {
			if !nullable && doc == "" {
				continue
			}
			w := &openapi3.Schema{Description: doc}
			inner := &openapi3.SchemaRef{Ref: prop.Ref}
			if nullable {
				w.AnyOf = openapi3.SchemaRefs{inner, {Value: &openapi3.Schema{Type: &openapi3.Types{"null"}}}}
			} else {
				w.AllOf = openapi3.SchemaRefs{inner}
			}
			s.Properties[name] = &openapi3.SchemaRef{Value: w}
			continue
		}
		if prop.Value == nil {
			continue
		}
		prop.Value.Nullable = nullable
		if doc != "" {
			prop.Value.Description = doc
		}
	}
	slices.Sort(s.Required)
	return nil
}

// walkNullable turns openapi3gen's 3.0 "nullable" into the 3.1 type list ("null" added to
// type, and to enum when there is one) everywhere in doc.
func walkNullable(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(ref *openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if s.Nullable {
			s.Nullable = false
			if s.Type != nil && !s.Type.Includes("null") {
				ts := append(openapi3.Types{}, *s.Type...)
				ts = append(ts, "null")
				s.Type = &ts
			}
			if len(s.Enum) > 0 && !slices.Contains(s.Enum, nil) {
				s.Enum = append(s.Enum, nil)
			}
		}
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
		walk(s.AdditionalProperties.Schema)
		for _, l := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, r := range l {
				walk(r)
			}
		}
	}
	for _, c := range doc.Components.Schemas {
		walk(c)
	}
	for _, item := range doc.Paths.Map() {
		for _, o := range item.Operations() {
			for _, p := range o.Parameters {
				walk(p.Value.Schema)
			}
			if o.RequestBody != nil {
				for _, m := range o.RequestBody.Value.Content {
					walk(m.Schema)
				}
			}
			for _, r := range o.Responses.Map() {
				for _, m := range r.Value.Content {
					walk(m.Schema)
				}
			}
		}
	}
}

func toAny(vals []string) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}
