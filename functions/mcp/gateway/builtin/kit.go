// Package builtin is the gateway's built-in tools (prefix agentpack_, docs/DESIGN.md §4),
// and its own resources, prompt and server instructions (resources.go): the tools'
// declarations, who may see and call each, argument
// validation, and the one dispatch every built-in call goes through — instrument → access
// → validate → default project → handler → classify → seal → audit. Handlers call
// services (shared/connections, shared/pins, …), never the database directly.
package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"errors"
	"strings"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	gschema "github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Builtin declares one built-in tool: identity, schemas,
// annotations, toolset, who may see and call it, and the handler. Declarations are
// compiled once per process (Compile) into the mcp.Tool that is registered and the
// validator for its arguments.
type Builtin struct {
	Name        string
	Version     string
	Title       string
	Description string
	// Input refines the JSON Schema of the arguments, which is generated from the handler's
	// argument struct (Typed's In; inputSchema).
	Input Input
	// Output is the JSON Schema of the envelope's data on success (outputSchema's
	// properties.data); its root type must be "object" (an empty {} made the MCP Inspector's
	// --strict warn for every built-in). "" declares no outputSchema at all: only for a
	// built-in whose answer is another tool's own result (agentpack_tool_call), which no
	// schema of ours can describe.
	Output string
	// Annotations are the MCP tool annotations; ReadOnlyHint=true built-ins are not audited.
	Annotations mcp.ToolAnnotations
	// Toolset groups the tool for X-MCP-Toolsets filtering.
	Toolset string
	// AdminOnly tools are listed to admins only; a member who calls one by name gets a
	// FORBIDDEN envelope (checked before its arguments are parsed).
	AdminOnly bool
	// SuperuserOnly tools (platform tools such as agentpack_registry_import, which act on
	// what every workspace shares) are listed to superusers only; anyone else who calls one
	// by name gets a FORBIDDEN envelope. It implies AdminOnly.
	SuperuserOnly bool
	// TakesProject tools get the workspace's default project in "projectId" when the
	// caller gives none.
	TakesProject bool
	// Handler runs the tool with its arguments, validated and decoded (see Typed), and
	// returns the envelope's data.
	Handler Handler
}

// Call is what a built-in handler receives besides its arguments.
type Call struct {
	Principal *auth.Principal
	Workspace string
	ProjectID string // after default-project filling; "" when none
	// RawArgs are the arguments as the client sent them (the audit row's digest is theirs).
	RawArgs json.RawMessage
	// Req is the request the call arrived in (chat, toolsets, catalog snapshot).
	Req *request.State
}

// A Handler runs a built-in: made by Typed from a function of the tool's argument struct.
type Handler struct {
	run  func(ctx context.Context, c *Call, raw json.RawMessage) (any, error)
	args reflect.Type // the argument struct (TestArgumentStructsMatchSchemas)
}

// Typed is the handler of h, which receives its arguments as an In, as go-sdk's
// mcp.ToolHandlerFor does: the arguments are first validated against the tool's input
// schema (validateArgs), then decoded into In with encoding/json, so a field has the
// type its schema property promises (an integer is an int, never a json.Number or a
// float64 to convert). In must be a struct whose json names are exactly the schema's
// properties; absent optional arguments are zero values (pointers where absence
// matters). Out is the envelope's data.
func Typed[In, Out any](h func(ctx context.Context, c *Call, in In) (Out, error)) Handler {
	return Handler{
		args: reflect.TypeFor[In](),
		run: func(ctx context.Context, c *Call, raw json.RawMessage) (any, error) {
			var in In
			if err := json.Unmarshal(raw, &in); err != nil {
				// The schema accepted what the struct cannot hold: the declaration is wrong.
				return nil, fmt.Errorf("builtin arguments: decode into %T: %w", in, err)
			}
			return h(ctx, c, in)
		},
	}
}

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

// NoArgs is the argument struct of a built-in that takes none.
type NoArgs struct{}

// Compiled is a Builtin with its registered definition and argument validator.
type Compiled struct {
	*Builtin
	tool   *mcp.Tool
	input  json.RawMessage // the input schema as listed
	schema *jsonschema.Schema
	output *jsonschema.Schema // the whole outputSchema (envelope with data)
}

// Tool is the definition registered with go-sdk and listed by tools/list.
func (b *Compiled) Tool() *mcp.Tool { return b.tool }

// InputSchema is b's input schema as tools/list lists it (inputSchema).
func (b *Compiled) InputSchema() json.RawMessage { return b.input }

// ValidateOutput checks a call's structuredContent (the envelope) against b's declared
// outputSchema, as a strict client does (MCP 2025-06-18 "Output Schema": structured
// results must conform). Tests use it on every answer they read.
func (b *Compiled) ValidateOutput(structured []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured))
	if err != nil {
		return fmt.Errorf("%s: structured content is not JSON: %w", b.Name, err)
	}
	if b.output == nil {
		return nil // no outputSchema declared: nothing a client would check
	}
	if err := b.output.Validate(v); err != nil {
		return fmt.Errorf("%s: structured content does not match the output schema: %w", b.Name, err)
	}
	return nil
}

// outputSchema is the output schema a built-in declares: the envelope of docs/DESIGN.md §5
// (wire.Envelope) with data, on success, as the built-in's Output schema describes it.
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

// compile checks b's input schema (a JSON object schema) and compiles its validator;
// formats are asserted (format "uuid" is checked, not only advertised).
func compile(b *Builtin) (*Compiled, error) {
	input, err := inputSchema(b)
	if err != nil {
		return nil, fmt.Errorf("builtin %s: input schema: %w", b.Name, err)
	}
	var doc any
	if err := json.Unmarshal(input, &doc); err != nil {
		return nil, fmt.Errorf("builtin %s: input schema: %w", b.Name, err)
	}
	if m, ok := doc.(map[string]any); !ok || m["type"] != "object" {
		return nil, fmt.Errorf("builtin %s: input schema root type must be object", b.Name)
	}
	s, err := compileSchema(b.Name, doc)
	if err != nil {
		return nil, fmt.Errorf("builtin %s: %w", b.Name, err)
	}
	var out json.RawMessage
	var os *jsonschema.Schema
	if b.Output != "" {
		var data any
		if err := json.Unmarshal([]byte(b.Output), &data); err != nil {
			return nil, fmt.Errorf("builtin %s: output schema: %w", b.Name, err)
		}
		if m, ok := data.(map[string]any); !ok || m["type"] != "object" {
			return nil, fmt.Errorf("builtin %s: output schema root type must be object", b.Name)
		}
		if out, err = portableJSON(outputSchema(b.Output)); err != nil {
			return nil, fmt.Errorf("builtin %s: output schema: %w", b.Name, err)
		}
		var outDoc any
		if err := json.Unmarshal(out, &outDoc); err != nil {
			return nil, fmt.Errorf("builtin %s: output schema: %w", b.Name, err)
		}
		if os, err = compileSchema(b.Name+"/output", outDoc); err != nil {
			return nil, fmt.Errorf("builtin %s: output schema: %w", b.Name, err)
		}
	}
	in, err := portableJSON(input)
	if err != nil {
		return nil, fmt.Errorf("builtin %s: input schema: %w", b.Name, err)
	}
	ann := b.Annotations
	ann.Title = b.Title
	c := &Compiled{
		Builtin: b,
		input:   in,
		schema:  s,
		output:  os,
		tool: &mcp.Tool{
			Name: b.Name, Title: b.Title, Description: b.Description,
			InputSchema: in,
			Annotations: &ann,
			Meta:        mcp.Meta{"agentpack/version": b.Version, "agentpack/toolset": b.Toolset},
		},
	}
	if out != nil {
		c.tool.OutputSchema = out
	}
	return c, nil
}

func ptr[T any](v T) *T { return &v }

// noOthers is the schema false: as additionalProperties, no member but the properties.
func noOthers() *gschema.Schema { return &gschema.Schema{Not: &gschema.Schema{}} }

// validateArgs parses raw (absent = {}) and validates it against b's input schema,
// returning the arguments to decode ({} for absent ones); failures are VALIDATION_ERROR
// with the schema violations in details.
func validateArgs(b *Compiled, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, apperr.New(apperr.Validation, "Invalid tool arguments: not valid JSON")
	}
	if err := b.schema.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		details := any(nil)
		if errors.As(err, &ve) {
			details = ve.DetailedOutput()
		}
		return nil, apperr.Wrap(err, apperr.Validation, "Invalid tool arguments: %s", shortSchemaError(err)).
			WithDetails(details).WithHint("check the tool's inputSchema")
	}
	return raw, nil
}

var printer = message.NewPrinter(language.English)

// shortSchemaError is a one-line summary of a schema violation: the first leaf error
// with its instance location ("/limit: maximum: got 500, want 100").
func shortSchemaError(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "arguments do not match the input schema"
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	loc := "/" + strings.Join(ve.InstanceLocation, "/")
	return loc + ": " + ve.ErrorKind.LocalizedString(printer)
}

// sealed is wire.Seal under b's name and version.
func (b *Compiled) sealed(data any, fail *wire.EnvelopeError) *mcp.CallToolResult {
	return wire.Seal(wire.EnvelopeMeta{Tool: b.Name, Version: b.Version}, data, fail)
}
