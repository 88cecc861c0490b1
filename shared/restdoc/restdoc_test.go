package restdoc_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/restdoc"
	"github.com/getkin/kin-openapi/openapi3"
)

type errBody struct {
	Error struct {
		Code    apperr.Code `json:"code"`
		Message string      `json:"message"`
	} `json:"error"`
}

type item struct {
	ID      string          `json:"id" format:"uuid" doc:"The id."`
	Kind    string          `json:"kind" enum:"a,b"`
	Note    *string         `json:"note"`
	Gone    *time.Time      `json:"gone,omitempty"`
	Tags    []string        `json:"tags,omitempty" enum:"x,y"`
	Size    int             `json:"size" minimum:"1" maximum:"9"`
	Parent  *child          `json:"parent"`
	Child   child           `json:"child" doc:"Its child."`
	Private string          `json:"-"`
	Raw     json.RawMessage `json:"raw" type:"object" nullable:"true"`
	Any     json.RawMessage `json:"any,omitempty"`
}

type child struct {
	Name string `json:"name" maxLength:"5"`
}

type input struct {
	Name string `json:"name" optional:"true"`
}

type query struct {
	Limit int `json:"limit" minimum:"1" doc:"Page size."`
}

func builder() *restdoc.Builder {
	return &restdoc.Builder{
		Info:      openapi3.Info{Title: "t", Version: "1"},
		ErrorBody: errBody{},
		Enums:     map[reflect.Type][]string{reflect.TypeFor[apperr.Code](): {"NOT_FOUND", "CONFLICT"}},
	}
}

func build(t *testing.T, b *restdoc.Builder, ops ...restdoc.Op) map[string]any {
	t.Helper()
	doc, err := b.Build(ops)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := restdoc.JSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func at(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestBuildSchemas: members without omitempty are required, a pointer without omitempty
// may be null (a $ref one through anyOf), tags give enum, format, bounds and descriptions,
// json:"-" is left out, and error codes take the Builder's enum.
func TestBuildSchemas(t *testing.T) {
	t.Parallel()
	m := build(t, builder(), restdoc.Op{Pattern: "PUT /things/{id}", ID: "put", Body: input{}, Query: query{},
		Responses: []restdoc.Response{{Status: 200, Description: "ok", Body: item{}}}, Errors: []apperr.Code{apperr.NotFound}})
	s := at(m, "components", "schemas", "Item")
	if got := js(at(s, "required")); got != `["child","id","kind","note","parent","raw","size"]` {
		t.Errorf("required = %s", got)
	}
	for path, want := range map[string]string{
		"id":     `{"description":"The id.","format":"uuid","type":"string"}`,
		"kind":   `{"enum":["a","b"],"type":"string"}`,
		"note":   `{"type":["string","null"]}`,
		"gone":   `{"format":"date-time","type":"string"}`,
		"tags":   `{"items":{"enum":["x","y"],"type":"string"},"type":"array"}`,
		"size":   `{"maximum":9,"minimum":1,"type":"integer"}`,
		"parent": `{"anyOf":[{"$ref":"#/components/schemas/Child"},{"type":"null"}]}`,
		"child":  `{"allOf":[{"$ref":"#/components/schemas/Child"}],"description":"Its child."}`,
		"raw":    `{"type":["object","null"]}`,
		"any":    `{}`,
	} {
		if got := js(at(s, "properties", path)); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	if at(s, "properties", "Private") != nil || at(s, "properties", "-") != nil {
		t.Error("json:\"-\" member documented")
	}
	if got := js(at(m, "components", "schemas", "Input", "required")); got != "null" {
		t.Errorf("optional member required: %s", got)
	}
	if got := js(at(m, "components", "schemas", "ErrBody", "properties", "error", "properties", "code", "enum")); got != `["NOT_FOUND","CONFLICT"]` {
		t.Errorf("error code enum = %s", got)
	}
	op := at(m, "paths", "/things/{id}", "put")
	params := js(at(op, "parameters"))
	for _, want := range []string{`"in":"path","name":"id","required":true`, `"description":"Page size.","in":"query","name":"limit"`} {
		if !strings.Contains(params, want) {
			t.Errorf("parameters %s lack %s", params, want)
		}
	}
	// 401 and 503 for every authenticated operation, 400 and 413 for one with a body.
	for _, code := range []string{"200", "400", "401", "404", "413", "503"} {
		if at(op, "responses", code) == nil {
			t.Errorf("response %s missing", code)
		}
	}
}

type selfWriter struct{ A int }

func (selfWriter) MarshalJSON() ([]byte, error) { return []byte(`{"b":1}`), nil }

type selfWire struct {
	B int `json:"b"`
}

type holder struct {
	W selfWriter `json:"w"`
}

// TestStandIn: a type that writes its own JSON is documented by its stand-in's schema.
func TestStandIn(t *testing.T) {
	t.Parallel()
	b := builder()
	b.StandIns = map[reflect.Type]any{reflect.TypeFor[selfWriter](): selfWire{}}
	m := build(t, b, restdoc.Op{Pattern: "GET /h", ID: "h", Responses: []restdoc.Response{{Status: 200, Description: "ok", Body: holder{}}}})
	if got := js(at(m, "components", "schemas", "SelfWriter", "properties")); got != `{"b":{"type":"integer"}}` {
		t.Errorf("stand-in schema = %s", got)
	}
}

type clash struct {
	A int `json:"a"`
}

type other struct {
	A string `json:"a"`
}

type badTag struct {
	N int `json:"n" minimum:"one"`
}

// TestBuildErrors: every refusal of Build.
func TestBuildErrors(t *testing.T) {
	t.Parallel()
	ok := []restdoc.Response{{Status: 204, Description: "done"}}
	named := builder()
	named.Names = map[reflect.Type]string{reflect.TypeFor[other](): "Clash"}
	for _, tt := range []struct {
		name string
		b    *restdoc.Builder
		ops  []restdoc.Op
		want string
	}{
		{"duplicate id", builder(), []restdoc.Op{{Pattern: "GET /a", ID: "x", Responses: ok}, {Pattern: "GET /b", ID: "x", Responses: ok}}, "used twice"},
		{"duplicate pattern", builder(), []restdoc.Op{{Pattern: "GET /a", ID: "x", Responses: ok}, {Pattern: "GET /a", ID: "y", Responses: ok}}, "documented twice"},
		{"component name clash", named, []restdoc.Op{{Pattern: "GET /a", ID: "x", Responses: []restdoc.Response{{Status: 200, Description: "a", Body: clash{}}}},
			{Pattern: "GET /b", ID: "y", Responses: []restdoc.Response{{Status: 200, Description: "b", Body: other{}}}}}, "component name"},
		{"marshaler without stand-in", builder(), []restdoc.Op{{Pattern: "GET /a", ID: "x", Responses: []restdoc.Response{{Status: 200, Description: "a", Body: holder{}}}}}, "stand-in"},
		{"bad tag", builder(), []restdoc.Op{{Pattern: "GET /a", ID: "x", Responses: []restdoc.Response{{Status: 200, Description: "a", Body: badTag{}}}}}, "minimum"},
		{"type tag on a typed member", builder(), []restdoc.Op{{Pattern: "GET /a", ID: "x", Responses: []restdoc.Response{{Status: 200, Description: "a", Body: typedTag{}}}}}, "already"},
		{"unknown type tag", builder(), []restdoc.Op{{Pattern: "GET /a", ID: "x", Responses: []restdoc.Response{{Status: 200, Description: "a", Body: unknownType{}}}}}, "not a JSON Schema type"},
		{"error code without text", builder(), []restdoc.Op{{Pattern: "GET /a", ID: "x", Responses: ok, Errors: []apperr.Code{"NOPE"}}}, "no text"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.b.Build(tt.ops); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

type typedTag struct {
	N int `json:"n" type:"string"`
}

type unknownType struct {
	R json.RawMessage `json:"r" type:"thing"`
}
