package builtin

import (
	"context"
	"encoding/json"
	gschema "github.com/google/jsonschema-go/jsonschema"

	"github.com/agentpack/gateway/shared/overrides"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolsetOverrides groups the tool-override built-ins (docs/OVERRIDES.md).
const toolsetOverrides = "overrides"

func init() {
	toolsetDescriptions[toolsetOverrides] = "See, set and delete the workspace's tool overrides: rename, retitle, redescribe, hide or re-annotate a connection's tool (admin)."
}

// overrideView is the output schema of one override (overrides.View, openapi.json
// #/components/schemas/ToolOverride), the members a client acts on.
const overrideView = `{"type":"object","properties":{"connectionId":{"type":"string"},"tool":{"type":"string"},"exposedName":{"type":"string"},` +
	`"name":{"type":["string","null"]},"title":{"type":["string","null"]},"description":{"type":["string","null"]},"hidden":{"type":"boolean"},` +
	`"annotations":{"type":["object","null"]},"dormant":{"type":"boolean"},"upstream":{"type":["object","null"]}},` +
	`"required":["connectionId","tool","exposedName","hidden","dormant"]}`

// overrideDefinitions declares agentpack_tool_overrides_list, agentpack_tool_override_set
// and agentpack_tool_override_delete (admin): the REST override routes on the MCP side,
// through the same overrides.Service and in the request's workspace.
func (s *Set) overrideDefinitions() []*Builtin {
	return []*Builtin{
		{
			Name: "agentpack_tool_overrides_list", Version: "1.0.0", Toolset: toolsetOverrides, AdminOnly: true,
			Title:       "List tool overrides",
			Description: "List the workspace's tool overrides (admin), of one connection when connectionId is given: each with the name clients call, the upstream's original, and dormant when the upstream no longer lists the tool.",
			Input:       Input{Props: map[string]*gschema.Schema{"connectionId": {Format: "uuid"}}},
			Output:      `{"type":"object","properties":{"overrides":{"type":"array","items":` + overrideView + `}},"required":["overrides"]}`,
			Annotations: readOnly,
			Handler:     Typed(s.overridesList),
		},
		{
			Name: "agentpack_tool_override_set", Version: "1.0.0", Toolset: toolsetOverrides, AdminOnly: true,
			Title: "Set a tool override",
			Description: "Create or replace the workspace's override of one connection tool (admin): name renames it (1-64 of A-Z a-z 0-9 _ -, not agentpack_ or mcp_ prefixed, unique in the workspace), title and description replace the upstream's, " +
				"annotations (title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint; null removes one) are merged over the upstream's, hidden withholds the tool from listing and calling. Calls still reach the upstream's own tool name with the arguments unchanged. Replaces the whole override.",
			Input:       Input{Props: map[string]*gschema.Schema{"annotations": {AdditionalProperties: noOthers(), MinProperties: ptr(1), Properties: map[string]*gschema.Schema{"destructiveHint": {Types: []string{"boolean", "null"}}, "idempotentHint": {Types: []string{"boolean", "null"}}, "openWorldHint": {Types: []string{"boolean", "null"}}, "readOnlyHint": {Types: []string{"boolean", "null"}}, "title": {Types: []string{"string", "null"}, MaxLength: ptr(200)}}}, "connectionId": {Format: "uuid"}, "description": {MaxLength: ptr(8192)}, "name": {Pattern: "^[A-Za-z0-9_-]{1,64}$"}, "title": {MaxLength: ptr(200)}, "tool": {MaxLength: ptr(1024), MinLength: ptr(1)}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
			Output:      `{"type":"object","properties":{"override":` + overrideView + `,"created":{"type":"boolean"}},"required":["override","created"]}`,
			Handler:     Typed(s.overrideSet),
		},
		{
			Name: "agentpack_tool_override_delete", Version: "1.0.0", Toolset: toolsetOverrides, AdminOnly: true,
			Title:       "Delete a tool override",
			Description: "Delete the workspace's override of one connection tool (admin): the tool is listed and called as the upstream defines it again.",
			Input:       Input{Props: map[string]*gschema.Schema{"connectionId": {Format: "uuid"}, "tool": {MinLength: ptr(1), MaxLength: ptr(1024)}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
			Output:      `{"type":"object","properties":{"deleted":{"type":"object","properties":{"connectionId":{"type":"string"},"tool":{"type":"string"}},"required":["connectionId","tool"]}},"required":["deleted"]}`,
			Handler:     Typed(s.overrideDelete),
		},
	}
}

type overridesListArgs struct {
	ConnectionID string `json:"connectionId,omitempty"`
}

func (s *Set) overridesList(ctx context.Context, c *Call, in overridesListArgs) (any, error) {
	out, err := s.svc.Overrides.List(ctx, c.Principal, c.Workspace, in.ConnectionID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"overrides": out}, nil
}

// overrideSetArgs: absent strings stay nil (the override leaves that field as the
// upstream has it); annotations are kept as sent (null members remove one).
type overrideSetArgs struct {
	ConnectionID string          `json:"connectionId"`
	Tool         string          `json:"tool" jsonschema:"The upstream's own tool name (ConnectionTool.upstreamName), not the exposed one."`
	Name         *string         `json:"name,omitempty"`
	Title        *string         `json:"title,omitempty"`
	Description  *string         `json:"description,omitempty"`
	Hidden       bool            `json:"hidden,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

func (s *Set) overrideSet(ctx context.Context, c *Call, a overrideSetArgs) (any, error) {
	in := overrides.Input{WorkspaceID: c.Workspace, ConnectionID: a.ConnectionID, Tool: a.Tool,
		Name: a.Name, Title: a.Title, Description: a.Description, Hidden: a.Hidden, Annotations: a.Annotations}
	v, created, err := s.svc.Overrides.Set(ctx, c.Principal, in)
	if err != nil {
		return nil, err
	}
	return map[string]any{"override": v, "created": created}, nil
}

type overrideTargetArgs struct {
	ConnectionID string `json:"connectionId"`
	Tool         string `json:"tool" jsonschema:"The upstream's own tool name (ConnectionTool.upstreamName), not the exposed one."`
}

func (s *Set) overrideDelete(ctx context.Context, c *Call, in overrideTargetArgs) (any, error) {
	if _, err := s.svc.Overrides.Delete(ctx, c.Principal, c.Workspace, in.ConnectionID, in.Tool); err != nil {
		return nil, err
	}
	return map[string]any{"deleted": map[string]string{"connectionId": in.ConnectionID, "tool": in.Tool}}, nil
}
