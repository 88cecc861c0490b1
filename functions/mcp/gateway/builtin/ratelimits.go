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
			Annotations: readOnly,
			Handler:     Typed(s.limitsList),
		},
		{
			Name: "agentpack_ratelimit_set", Version: "1.0.0", Toolset: toolsetLimits, AdminOnly: true,
			Title:       "Set a rate limit",
			Description: "Create or replace a rate limit on proxied tool calls (admin): for the whole workspace, one connection (connectionId) or one exposed tool (tool); shared by the workspace (principal omitted), per member (principal \"*\") or for one member (their token subject); perMinute and/or perDay calls. A call over a limit answers RATE_LIMITED with retryAfterSeconds and reaches no upstream.",
			Input:       Input{Props: map[string]*gschema.Schema{"connectionId": {Format: "uuid"}, "tool": {Pattern: "^[A-Za-z0-9_-]{1,64}$"}, "principal": {MaxLength: ptr(256)}, "perMinute": {Minimum: ptr[float64](1), Maximum: ptr[float64](1000000)}, "perDay": {Minimum: ptr[float64](1), Maximum: ptr[float64](100000000)}}, AnyOf: []*gschema.Schema{{Required: []string{"perMinute"}}, {Required: []string{"perDay"}}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
			Handler:     Typed(s.limitSet),
		},
		{
			Name: "agentpack_ratelimit_delete", Version: "1.0.0", Toolset: toolsetLimits, AdminOnly: true,
			Title:       "Delete a rate limit",
			Description: "Delete one of the workspace's rate limits (admin) by its id (from agentpack_ratelimits_list).",
			Input:       Input{Props: map[string]*gschema.Schema{"limitId": {Format: "uuid"}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
			Handler:     Typed(s.limitDelete),
		},
	}
}

// limitsAnswer is agentpack_ratelimits_list's answer.
type limitsAnswer struct {
	Limits []ratelimit.View `json:"limits"`
}

func (s *Set) limitsList(ctx context.Context, c *Call, _ NoArgs) (limitsAnswer, error) {
	out, err := s.svc.RateLimits.List(ctx, c.Principal, c.Workspace)
	if err != nil {
		return limitsAnswer{}, err
	}
	return limitsAnswer{Limits: out}, nil
}

type limitSetArgs struct {
	ConnectionID string `json:"connectionId,omitempty"`
	Tool         string `json:"tool,omitempty"`
	Principal    string `json:"principal,omitempty"`
	PerMinute    *int   `json:"perMinute,omitempty"`
	PerDay       *int   `json:"perDay,omitempty"`
}

// limitSetAnswer is agentpack_ratelimit_set's answer: the limit as written, and whether
// it is new.
type limitSetAnswer struct {
	Created bool           `json:"created"`
	Limit   ratelimit.View `json:"limit"`
}

func (s *Set) limitSet(ctx context.Context, c *Call, a limitSetArgs) (limitSetAnswer, error) {
	in := ratelimit.Input{WorkspaceID: c.Workspace, ConnectionID: a.ConnectionID, Tool: a.Tool,
		Principal: a.Principal, PerMinute: a.PerMinute, PerDay: a.PerDay}
	v, created, err := s.svc.RateLimits.Set(ctx, c.Principal, in)
	if err != nil {
		return limitSetAnswer{}, err
	}
	return limitSetAnswer{Created: created, Limit: *v}, nil
}

type limitDeleteArgs struct {
	LimitID string `json:"limitId"`
}

// limitDeleteAnswer is agentpack_ratelimit_delete's answer: the id of the limit deleted.
type limitDeleteAnswer struct {
	Deleted string `json:"deleted"`
}

func (s *Set) limitDelete(ctx context.Context, c *Call, in limitDeleteArgs) (limitDeleteAnswer, error) {
	id := in.LimitID
	if err := s.svc.RateLimits.Delete(ctx, c.Principal, c.Workspace, id); err != nil {
		return limitDeleteAnswer{}, err
	}
	return limitDeleteAnswer{Deleted: id}, nil
}
