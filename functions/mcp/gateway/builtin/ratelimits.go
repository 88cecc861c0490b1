package builtin

import (
	"context"
	gschema "github.com/google/jsonschema-go/jsonschema"

	"github.com/agentpack/gateway/shared/ratelimit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolsetLimits groups the rate-limit built-ins (docs/RATE-LIMITS.md).
const toolsetLimits = "limits"

func init() {
	toolsetDescriptions[toolsetLimits] = "See, set and delete the workspace's rate limits and quotas, with their usage (admin)."
}

// limitDefinitions declares agentpack_ratelimits_list, agentpack_ratelimit_set and
// agentpack_ratelimit_delete (admin): the REST /api/rate-limits routes on the MCP side,
// through the same ratelimit.Service and in the request's workspace.
func (s *Set) limitDefinitions() []*Builtin {
	return []*Builtin{
		{
			Name: "agentpack_ratelimits_list", Version: "1.0.0", Toolset: toolsetLimits, AdminOnly: true,
			Title:       "List rate limits",
			Description: "List the workspace's rate limits and quotas on proxied tool calls (admin), each with its usage in the current UTC minute and day.",
			Output:      `{"type":"object","properties":{"limits":{"type":["array","null"],"items":{"type":"object","properties":{"id":{"type":"string"},"perMinute":{"type":["integer","null"]},"perDay":{"type":["integer","null"]}},"required":["id"]}}},"required":["limits"]}`,
			Annotations: readOnly,
			Handler:     Typed(s.limitsList),
		},
		{
			Name: "agentpack_ratelimit_set", Version: "1.0.0", Toolset: toolsetLimits, AdminOnly: true,
			Title:       "Set a rate limit",
			Description: "Create or replace a rate limit on proxied tool calls (admin): for the whole workspace, one connection (connectionId) or one exposed tool (tool); shared by the workspace (principal omitted), per member (principal \"*\") or for one member (their token subject); perMinute and/or perDay calls. A call over a limit answers RATE_LIMITED with retryAfterSeconds and reaches no upstream.",
			Input:       Input{Props: map[string]*gschema.Schema{"connectionId": {Format: "uuid"}, "tool": {Pattern: "^[A-Za-z0-9_-]{1,64}$"}, "principal": {MaxLength: ptr(256)}, "perMinute": {Minimum: ptr[float64](1), Maximum: ptr[float64](1000000)}, "perDay": {Minimum: ptr[float64](1), Maximum: ptr[float64](100000000)}}, AnyOf: []*gschema.Schema{{Required: []string{"perMinute"}}, {Required: []string{"perDay"}}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
			Output:      `{"type":"object","properties":{"limit":{"type":"object","properties":{"id":{"type":"string"},"perMinute":{"type":["integer","null"]},"perDay":{"type":["integer","null"]}},"required":["id"]},"created":{"type":"boolean"}},"required":["limit","created"]}`,
			Handler:     Typed(s.limitSet),
		},
		{
			Name: "agentpack_ratelimit_delete", Version: "1.0.0", Toolset: toolsetLimits, AdminOnly: true,
			Title:       "Delete a rate limit",
			Description: "Delete one of the workspace's rate limits (admin) by its id (from agentpack_ratelimits_list).",
			Input:       Input{Props: map[string]*gschema.Schema{"limitId": {Format: "uuid"}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
			Output:      `{"type":"object","properties":{"deleted":{"type":"string"}},"required":["deleted"]}`,
			Handler:     Typed(s.limitDelete),
		},
	}
}

func (s *Set) limitsList(ctx context.Context, c *Call, _ NoArgs) (any, error) {
	out, err := s.svc.RateLimits.List(ctx, c.Principal, c.Workspace)
	if err != nil {
		return nil, err
	}
	return map[string]any{"limits": out}, nil
}

type limitSetArgs struct {
	ConnectionID string `json:"connectionId,omitempty"`
	Tool         string `json:"tool,omitempty"`
	Principal    string `json:"principal,omitempty"`
	PerMinute    *int   `json:"perMinute,omitempty"`
	PerDay       *int   `json:"perDay,omitempty"`
}

func (s *Set) limitSet(ctx context.Context, c *Call, a limitSetArgs) (any, error) {
	in := ratelimit.Input{WorkspaceID: c.Workspace, ConnectionID: a.ConnectionID, Tool: a.Tool,
		Principal: a.Principal, PerMinute: a.PerMinute, PerDay: a.PerDay}
	v, created, err := s.svc.RateLimits.Set(ctx, c.Principal, in)
	if err != nil {
		return nil, err
	}
	return map[string]any{"limit": v, "created": created}, nil
}

type limitDeleteArgs struct {
	LimitID string `json:"limitId"`
}

func (s *Set) limitDelete(ctx context.Context, c *Call, in limitDeleteArgs) (any, error) {
	id := in.LimitID
	if err := s.svc.RateLimits.Delete(ctx, c.Principal, c.Workspace, id); err != nil {
		return nil, err
	}
	return map[string]any{"deleted": id}, nil
}
