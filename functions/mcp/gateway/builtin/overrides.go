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
			Handler:     Typed(s.overrideSet),
		},
		{
			Name: "agentpack_tool_override_delete", Version: "1.0.0", Toolset: toolsetOverrides, AdminOnly: true,
			Title:       "Delete a tool override",
			Description: "Delete the workspace's override of one connection tool (admin): the tool is listed and called as the upstream defines it again.",
			Input:       Input{Props: map[string]*gschema.Schema{"connectionId": {Format: "uuid"}, "tool": {MinLength: ptr(1), MaxLength: ptr(1024)}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
			Handler:     Typed(s.overrideDelete),
		},
	}
}

type overridesListArgs struct {
	ConnectionID string `json:"connectionId,omitempty"`
}

// overridesAnswer is agentpack_tool_overrides_list's answer.
type overridesAnswer struct {
	Overrides []overrides.View `json:"overrides"`
}

func (s *Set) overridesList(ctx context.Context, c *Call, in overridesListArgs) (overridesAnswer, error) {
	out, err := s.svc.Overrides.List(ctx, c.Principal, c.Workspace, in.ConnectionID)
	if err != nil {
		return overridesAnswer{}, err
	}
	return overridesAnswer{Overrides: out}, nil
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

// overrideSetAnswer is agentpack_tool_override_set's answer: the override as written, and
// whether it is new.
type overrideSetAnswer struct {
	Created  bool           `json:"created"`
	Override overrides.View `json:"override"`
}

func (s *Set) overrideSet(ctx context.Context, c *Call, a overrideSetArgs) (overrideSetAnswer, error) {
	in := overrides.Input{WorkspaceID: c.Workspace, ConnectionID: a.ConnectionID, Tool: a.Tool,
		Name: a.Name, Title: a.Title, Description: a.Description, Hidden: a.Hidden, Annotations: a.Annotations}
	v, created, err := s.svc.Overrides.Set(ctx, c.Principal, in)
	if err != nil {
		return overrideSetAnswer{}, err
	}
	return overrideSetAnswer{Created: created, Override: *v}, nil
}

type overrideTargetArgs struct {
	ConnectionID string `json:"connectionId"`
	Tool         string `json:"tool" jsonschema:"The upstream's own tool name (ConnectionTool.upstreamName), not the exposed one."`
}

// overrideDeleteAnswer is agentpack_tool_override_delete's answer: the override deleted.
type overrideDeleteAnswer struct {
	Deleted overrideTarget `json:"deleted"`
}

// overrideTarget names one override: a connection and its upstream's tool name.
type overrideTarget struct {
	ConnectionID string `json:"connectionId"`
	Tool         string `json:"tool"`
}

func (s *Set) overrideDelete(ctx context.Context, c *Call, in overrideTargetArgs) (overrideDeleteAnswer, error) {
	if _, err := s.svc.Overrides.Delete(ctx, c.Principal, c.Workspace, in.ConnectionID, in.Tool); err != nil {
		return overrideDeleteAnswer{}, err
	}
	return overrideDeleteAnswer{Deleted: overrideTarget(in)}, nil
}
