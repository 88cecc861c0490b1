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
	"reflect"

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

// Builtin declares one built-in tool: identity, input schema refinements,
// annotations, toolset, who may see and call it, and the handler (whose argument and
// answer types are the schemas' source: Typed). Declarations are
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
	// returns the envelope's data. Its In type is the source of the inputSchema, its Out
	// type of the outputSchema's data (dataSchema).
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

// A Handler runs a built-in: made by Typed from a function of the tool's argument struct
// to its answer's.
type Handler struct {
	run  func(ctx context.Context, c *Call, raw json.RawMessage) (any, error)
	args reflect.Type // the argument struct (TestArgumentStructsMatchSchemas)
	out  reflect.Type // the answer (the envelope's data): a struct, or Unstructured
}

// Typed is the handler of h, which receives its arguments as an In, as go-sdk's
// mcp.ToolHandlerFor does: the arguments are first validated against the tool's input
// schema (validateArgs), then decoded into In with encoding/json, so a field has the
// type its schema property promises (an integer is an int, never a json.Number or a
// float64 to convert). In must be a struct whose json names are exactly the schema's
// properties; absent optional arguments are zero values (pointers where absence
// matters). Out is the envelope's data, and the tool's outputSchema describes it: it is
// generated from Out (dataSchema), so what the handler returns and what tools/list
// promises are one type. Out must be a struct (MCP: an outputSchema's root is an object),
// or Unstructured for a tool that declares no outputSchema.
func Typed[In, Out any](h func(ctx context.Context, c *Call, in In) (Out, error)) Handler {
	return Handler{
		args: reflect.TypeFor[In](),
		out:  reflect.TypeFor[Out](),
		run: func(ctx context.Context, c *Call, raw json.RawMessage) (any, error) {
			var in In
			if err := json.Unmarshal(raw, &in); err != nil {
				// The schema accepted what the struct cannot hold: the declaration is wrong.
				return nil, fmt.Errorf("builtin arguments: decode into %T: %w", in, err)
			}
			out, err := h(ctx, c, in)
			if err != nil {
				return nil, err // a failure's envelope has no data
			}
			return out, nil
		},
	}
}

// NoArgs is the argument struct of a built-in that takes none.
type NoArgs struct{}

// Unstructured is the Out of a built-in that declares no outputSchema: only one whose
// answer is another tool's own result (agentpack_tool_call), which no schema of ours can
// describe (a strict client would hold an upstream's result to it and refuse it). It is a
// type of its own so that no other Out (any, a map) leaves the schema out by accident.
type Unstructured struct{}

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
	data, err := dataSchema(b.Handler.out)
	if err != nil {
		return nil, fmt.Errorf("builtin %s: output schema: %w", b.Name, err)
	}
	var out json.RawMessage
	var os *jsonschema.Schema
	if data != nil {
		if out, err = portableJSON(outputSchema(string(data))); err != nil {
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
