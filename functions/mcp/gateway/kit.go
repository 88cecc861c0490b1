package gateway

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Builtin declares one built-in tool (the seed's tool kit): identity, schemas,
// annotations, toolset, who may see and call it, and the handler. Declarations are
// compiled once per process (Compile) into the mcp.Tool that is registered and the
// validator for its arguments.
type Builtin struct {
	Name        string
	Version     string
	Title       string
	Description string
	// Input is the JSON Schema of the arguments; its root type must be "object".
	Input string
	// Annotations are the MCP tool annotations; ReadOnlyHint=true built-ins are not audited.
	Annotations mcp.ToolAnnotations
	// Toolset groups the tool for X-MCP-Toolsets filtering.
	Toolset string
	// AdminOnly tools are listed to admins only; a member who calls one by name gets a
	// FORBIDDEN envelope (checked before its arguments are parsed).
	AdminOnly bool
	// TakesProject tools get the workspace's default project in "projectId" when the
	// caller gives none.
	TakesProject bool
	// Handler runs the tool with validated arguments and returns the envelope's data.
	Handler func(ctx context.Context, c *Call) (any, error)
}

// Call is what a built-in handler receives.
type Call struct {
	Principal *auth.Principal
	Workspace string
	ProjectID string // after default-project filling; "" when none
	Args      map[string]any
	RawArgs   json.RawMessage
	Req       *requestState
}

// compiledBuiltin is a Builtin with its registered definition and argument validator.
type compiledBuiltin struct {
	*Builtin
	tool   *mcp.Tool
	schema *jsonschema.Schema
}

// envelopeOutputSchema is the output schema every built-in declares: the envelope of
// docs/DESIGN.md §5.
var envelopeOutputSchema = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"},"data":{},"error":{"type":"object","properties":{"code":{"type":"string"},"message":{"type":"string"},"retryable":{"type":"boolean"},"hint":{"type":"string"},"errorId":{"type":"string"}},"required":["code","message","retryable"]},"meta":{"type":"object","properties":{"tool":{"type":"string"},"version":{"type":"string"}},"required":["tool","version"]}},"required":["ok","meta"]}`)

func compile(b *Builtin) (*compiledBuiltin, error) {
	var doc any
	if err := json.Unmarshal([]byte(b.Input), &doc); err != nil {
		return nil, fmt.Errorf("builtin %s: input schema: %w", b.Name, err)
	}
	if m, ok := doc.(map[string]any); !ok || m["type"] != "object" {
		return nil, fmt.Errorf("builtin %s: input schema root type must be object", b.Name)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // the schemas say format "uuid": check it, not just advertise it
	url := "mem://builtin/" + b.Name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("builtin %s: %w", b.Name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("builtin %s: %w", b.Name, err)
	}
	ann := b.Annotations
	ann.Title = b.Title
	return &compiledBuiltin{
		Builtin: b,
		schema:  s,
		tool: &mcp.Tool{
			Name: b.Name, Title: b.Title, Description: b.Description,
			InputSchema: json.RawMessage(b.Input), OutputSchema: envelopeOutputSchema,
			Annotations: &ann,
			Meta:        mcp.Meta{"agentpack/version": b.Version, "agentpack/toolset": b.Toolset},
		},
	}, nil
}

func ptr[T any](v T) *T { return &v }
