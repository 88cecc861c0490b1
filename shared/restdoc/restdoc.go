// Package restdoc builds the OpenAPI 3.1 document of the REST functions from their route
// tables: each operation names its request and response Go types, and the schemas are
// generated from those types by kin-openapi's openapi3gen (github.com/getkin/kin-openapi),
// with the struct tags below carrying what the Go type cannot say. The error responses
// come from one table keyed by apperr.Code, so every operation answers errors in the
// shape and with the status shared/httpapi writes.
//
// Struct tags read on a field (besides `json`):
//
//	doc:"…"          the property's description
//	enum:"a,b,c"     the allowed values (strings; on a slice, of its items)
//	format:"uuid"    the JSON Schema format (uuid, date-time, uri, email, …)
//	pattern:"…"      a regular expression the string matches
//	minimum:"1" maximum:"200"      bounds of a number
//	minLength:"1" maxLength:"200"  bounds of a string's length
//	optional:"true"  a request member that may be left out although it has no omitempty
//	type:"object"    the JSON type of a member whose Go type says none (json.RawMessage,
//	                 any); refused on a member that has a type
//	nullable:"true"  the member may be null although the Go type is not a pointer (a nil
//	                 slice or map without omitempty); a pointer without omitempty is
//	                 nullable already, one with omitempty is left out instead of null
//
// A member is required unless its json tag says omitempty or omitzero (encoding/json
// writes every other member). A type that writes its own JSON (json.Marshaler) must be
// given a stand-in type of the same wire shape (Builder.StandIns); a type that writes
// itself as text (encoding.TextMarshaler) is a string.
package restdoc

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
)

// Op is one REST operation: its route, its words, and the Go types of what it reads and
// answers.
type Op struct {
	// Pattern is the http.ServeMux pattern, "METHOD /path/{param}".
	Pattern     string
	ID          string // operationId, unique in the document
	Summary     string
	Description string
	Tag         string
	// PathParams describe this operation's path parameters where the Builder's words do
	// not fit.
	PathParams map[string]PathParam
	// Query is a struct value whose json-tagged fields are the query parameters (all
	// optional), described by the same tags as a body's members; nil: none.
	Query any
	// Body is a value of the request body's type (nil: no body); BodyOptional marks a
	// body that may be left out.
	Body         any
	BodyOptional bool
	// Responses are the success answers.
	Responses []Response
	// Errors are the error codes this operation answers besides the ones every operation
	// may (UNAUTHENTICATED and UNAVAILABLE for an authenticated one; VALIDATION_ERROR and
	// PAYLOAD_TOO_LARGE for one with a body). ErrorText overrides the description of a
	// code's response for this operation.
	Errors    []apperr.Code
	ErrorText map[apperr.Code]string
	// Public operations need no bearer token (no security, no 401).
	Public bool
}

// Response is one success answer: Status, Description and Body, a value of the body's
// type (nil: no body). ContentType defaults to application/json; Schema, when set, is
// used as the body's schema instead of one generated from Body (a document served as
// is, an HTML page).
type Response struct {
	Status      int
	Description string
	Body        any
	ContentType string
	Schema      *openapi3.Schema
}

// Method and Path split the pattern.
func (o Op) Method() string { m, _, _ := strings.Cut(o.Pattern, " "); return m }
func (o Op) Path() string   { _, p, _ := strings.Cut(o.Pattern, " "); return p }

// ErrorText is the description of each error code's response: the shared error table
// (apperr.Code, with its status from Code.HTTPStatus).
var ErrorText = map[apperr.Code]string{
	apperr.Validation:          "Malformed or invalid input (VALIDATION_ERROR); nothing written.",
	apperr.Unauthenticated:     "Missing or invalid bearer token (UNAUTHENTICATED).",
	apperr.Forbidden:           "The caller's role may not do this (FORBIDDEN).",
	apperr.NotFound:            "Unknown, or in a workspace the caller is not a member of (NOT_FOUND).",
	apperr.Conflict:            "Conflict (CONFLICT).",
	apperr.InvalidReference:    "References a row that does not exist or is out of scope (INVALID_REFERENCE).",
	apperr.Unavailable:         "UNAVAILABLE: the database is unreachable; retry shortly.",
	apperr.UpstreamUnavailable: "The upstream could not be reached (UPSTREAM_UNAVAILABLE).",
	apperr.UpstreamTimeout:     "The upstream did not answer in time (UPSTREAM_TIMEOUT).",
	apperr.UpstreamError:       "The upstream answered with an error (UPSTREAM_ERROR).",
	apperr.RateLimited:         "Over a rate limit (RATE_LIMITED); Retry-After says when to try again.",
	apperr.PayloadTooLarge:     "Request body over 1 MiB (PAYLOAD_TOO_LARGE).",
	apperr.Internal:            "Unexpected server error (INTERNAL_ERROR); errorId names it in the logs.",
}

// PathParam describes the path parameter of a name wherever it appears.
type PathParam struct {
	Description string
	Format      string // "uuid", "email" or ""
}

// Builder builds one document. Info, Tags and the error body type are the caller's; the
// rest has defaults.
type Builder struct {
	Info openapi3.Info
	Tags openapi3.Tags
	// ErrorBody is a value of the error envelope's type ({"error": {...}}), the schema of
	// every error response.
	ErrorBody any
	// PathParams describe the path parameters by name; a name not listed is a string.
	PathParams map[string]PathParam
	// Names are component names of Go types whose own name is not the one to publish (or
	// clashes with another type's); a named struct type becomes a component under its Go
	// name otherwise.
	Names map[reflect.Type]string
	// StandIns are, for a type that writes its own JSON, a value of a type with the same
	// wire shape whose schema is generated in its place.
	StandIns map[reflect.Type]any
	// Enums are the values of named types whose every use is one of them (apperr.Code).
	Enums map[reflect.Type][]string
}

// Build returns the document of ops. Errors: two operations share an id or a pattern, two
// Go types would publish one component name, a type writes its own JSON without a stand-in,
// a tag does not parse, or the document is not valid OpenAPI 3.1 (openapi3.T.Validate).
func (b *Builder) Build(ops []Op) (*openapi3.T, error) {
	g := &gen{b: b, schemas: openapi3.Schemas{}, owner: map[string]reflect.Type{}}
	g.gen = g.newGenerator()
	doc := &openapi3.T{
		OpenAPI:    "3.1.0",
		Info:       &b.Info,
		Servers:    openapi3.Servers{{URL: "/"}},
		Security:   openapi3.SecurityRequirements{{"bearer": []string{}}},
		Tags:       b.Tags,
		Paths:      openapi3.NewPathsWithCapacity(len(ops)),
		Components: &openapi3.Components{Schemas: g.schemas},
	}
	doc.Components.SecuritySchemes = openapi3.SecuritySchemes{"bearer": &openapi3.SecuritySchemeRef{
		Value: openapi3.NewJWTSecurityScheme()}}
	errRef, err := g.ref(b.ErrorBody)
	if err != nil {
		return nil, fmt.Errorf("restdoc: error body: %w", err)
	}
	ids := map[string]bool{}
	for _, op := range ops {
		if ids[op.ID] {
			return nil, fmt.Errorf("restdoc: operation id %q used twice", op.ID)
		}
		ids[op.ID] = true
		o, err := g.operation(op, errRef)
		if err != nil {
			return nil, fmt.Errorf("restdoc: %s: %w", op.Pattern, err)
		}
		item := doc.Paths.Value(op.Path())
		if item == nil {
			item = &openapi3.PathItem{}
			doc.Paths.Set(op.Path(), item)
		}
		if item.GetOperation(op.Method()) != nil {
			return nil, fmt.Errorf("restdoc: %s documented twice", op.Pattern)
		}
		item.SetOperation(op.Method(), o)
	}
	if g.err != nil {
		return nil, g.err
	}
	walkNullable(doc)
	// Validate what is published: the JSON, loaded back (its $refs resolved).
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("restdoc: %w", err)
	}
	loader := openapi3.NewLoader()
	loaded, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("restdoc: the document does not load: %w", err)
	}
	if err := loaded.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("restdoc: invalid document: %w", err)
	}
	return doc, nil
}

// JSON is the document as indented JSON, ending in a newline (the bytes to serve and to
// commit).
func JSON(doc *openapi3.T) ([]byte, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	// Re-indent through a generic value so that the output is stable (sorted keys).
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

type gen struct {
	b       *Builder
	gen     *openapi3gen.Generator
	schemas openapi3.Schemas
	owner   map[string]reflect.Type
	err     error // the first error met inside openapi3gen callbacks
}

func (g *gen) newGenerator() *openapi3gen.Generator {
	return openapi3gen.NewGenerator(
		openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true, ExportTopLevelSchema: true}),
		openapi3gen.CreateTypeNameGenerator(g.typeName),
		openapi3gen.SchemaCustomizer(g.customize),
	)
}

var paramRE = regexp.MustCompile(`\{([^}]+)\}`)

func (g *gen) operation(op Op, errRef *openapi3.SchemaRef) (*openapi3.Operation, error) {
	o := &openapi3.Operation{OperationID: op.ID, Summary: op.Summary, Description: op.Description,
		Responses: openapi3.NewResponsesWithCapacity(len(op.Responses) + len(op.Errors) + 4)}
	if op.Tag != "" {
		o.Tags = []string{op.Tag}
	}
	for _, m := range paramRE.FindAllStringSubmatch(op.Path(), -1) {
		pp, ok := op.PathParams[m[1]]
		if !ok {
			pp = g.b.PathParams[m[1]]
		}
		s := openapi3.NewStringSchema()
		s.Format = pp.Format
		o.Parameters = append(o.Parameters, &openapi3.ParameterRef{Value: &openapi3.Parameter{
			Name: m[1], In: openapi3.ParameterInPath, Required: true, Description: pp.Description,
			Schema: &openapi3.SchemaRef{Value: s}}})
	}
	if op.Query != nil {
		ref, err := g.inline(op.Query)
		if err != nil {
			return nil, fmt.Errorf("query: %w", err)
		}
		for _, name := range sortedKeys(ref.Value.Properties) {
			prop := ref.Value.Properties[name]
			desc := prop.Value.Description
			prop.Value.Description = ""
			o.Parameters = append(o.Parameters, &openapi3.ParameterRef{Value: &openapi3.Parameter{
				Name: name, In: openapi3.ParameterInQuery, Description: desc, Schema: prop}})
		}
	}
	codes := slices.Clone(op.Errors)
	if op.Public {
		o.Security = &openapi3.SecurityRequirements{}
	} else {
		codes = append(codes, apperr.Unauthenticated, apperr.Unavailable)
	}
	if op.Body != nil {
		ref, err := g.ref(op.Body)
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		o.RequestBody = &openapi3.RequestBodyRef{Value: &openapi3.RequestBody{Required: !op.BodyOptional,
			Content: openapi3.NewContentWithJSONSchemaRef(ref)}}
		codes = append(codes, apperr.Validation, apperr.PayloadTooLarge)
	}
	for _, r := range op.Responses {
		resp := &openapi3.Response{Description: ptr(r.Description)}
		switch {
		case r.Schema != nil:
			ct := cmpOr(r.ContentType, "application/json")
			resp.Content = openapi3.Content{ct: openapi3.NewMediaType().WithSchema(r.Schema)}
		case r.Body != nil:
			ref, err := g.ref(r.Body)
			if err != nil {
				return nil, fmt.Errorf("%d: %w", r.Status, err)
			}
			resp.Content = openapi3.Content{cmpOr(r.ContentType, "application/json"): openapi3.NewMediaType().WithSchemaRef(ref)}
		}
		if prev := o.Responses.Value(strconv.Itoa(r.Status)); prev != nil {
			// A second media type of the same answer (usage as CSV).
			for ct, m := range resp.Content {
				prev.Value.Content[ct] = m
			}
			continue
		}
		o.Responses.Set(strconv.Itoa(r.Status), &openapi3.ResponseRef{Value: resp})
	}
	for _, c := range codes {
		key := strconv.Itoa(c.HTTPStatus())
		if o.Responses.Value(key) != nil {
			continue
		}
		text, ok := op.ErrorText[c]
		if !ok {
			text, ok = ErrorText[c]
		}
		if !ok {
			return nil, fmt.Errorf("error code %s has no text", c)
		}
		o.Responses.Set(key, &openapi3.ResponseRef{Value: &openapi3.Response{Description: ptr(text),
			Content: openapi3.NewContentWithJSONSchemaRef(errRef)}})
	}
	return o, nil
}

// ref generates the schema of v's type: a $ref to its component for a named struct, the
// schema itself otherwise.
func (g *gen) ref(v any) (*openapi3.SchemaRef, error) {
	ref, err := g.gen.NewSchemaRefForValue(v, g.schemas)
	if err == nil {
		err = g.err
	}
	return ref, err
}

// inline generates the schema of v's struct type without making it a component (by a
// generator of its own, which has not seen the type before).
func (g *gen) inline(v any) (*openapi3.SchemaRef, error) {
	ref, err := g.newGenerator().NewSchemaRefForValue(v, g.schemas)
	if err == nil {
		err = g.err
	}
	if err != nil {
		return nil, err
	}
	if name, ok := strings.CutPrefix(ref.Ref, "#/components/schemas/"); ok {
		s := g.schemas[name]
		delete(g.schemas, name)
		delete(g.owner, name)
		return &openapi3.SchemaRef{Value: s.Value}, nil
	}
	return ref, nil
}

func (g *gen) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// typeName is the component name of t: Builder.Names, else its Go name; two types may not
// share one.
func (g *gen) typeName(t reflect.Type) string {
	name, ok := g.b.Names[t]
	if !ok {
		name = t.Name()
	}
	if name == "" {
		return ""
	}
	name = strings.ToUpper(name[:1]) + name[1:]
	if prev, ok := g.owner[name]; ok && prev != t {
		g.fail(fmt.Errorf("restdoc: component name %q is both %v and %v (set Builder.Names)", name, prev, t))
	}
	g.owner[name] = t
	return name
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func ptr[T any](v T) *T { return &v }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
