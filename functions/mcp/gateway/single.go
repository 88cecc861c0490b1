package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The single-server endpoint (POST /mcp/{workspaceId}/servers/{connection}, DESIGN §4)
// serves one installed connection as if it were that server: its tools under their
// upstream names (from the catalog snapshot, like the aggregate endpoint), and its
// resources, resource templates, prompts and completions passed through to the upstream
// on each request. Auth, workspace access, the protocol guard, metrics and audit are the
// aggregate endpoint's. The upstream's log and progress notifications during a tools/call
// are relayed to the caller (relay.go).

// passThroughMethods are the methods the single-server endpoint forwards to the upstream.
var passThroughMethods = map[string]bool{
	"resources/list":           true,
	"resources/templates/list": true,
	"resources/read":           true,
	"resources/subscribe":      true,
	"resources/unsubscribe":    true,
	"prompts/list":             true,
	"prompts/get":              true,
	"completion/complete":      true,
}

// singleServerCapabilities are those the single-server endpoint advertises: the
// upstream's own are unknown until a request reaches it, and a method the upstream lacks
// answers with the upstream's own JSON-RPC error. Resource subscriptions are forwarded
// but not advertised: a stateless endpoint cannot deliver notifications/resources/updated.
var singleServerCapabilities = &mcp.ServerCapabilities{
	Tools:       &mcp.ToolCapabilities{ListChanged: false},
	Resources:   &mcp.ResourceCapabilities{ListChanged: false},
	Prompts:     &mcp.PromptCapabilities{ListChanged: false},
	Completions: &mcp.CompletionCapabilities{},
	Logging:     &mcp.LoggingCapabilities{},
}

// buildSingleServer registers connection c's tools under their upstream names and the
// pass-through of its resources, prompts and completions.
func (g *Gateway) buildSingleServer(c *catalog.Connection) *mcp.Server {
	s := g.newMCPServer(singleServerCapabilities, g.passThrough(c))
	proxiedTools(&requestState{single: c}, func(name string, c *catalog.Connection, t *catalog.Tool) {
		s.AddTool(proxiedTool(t, name), g.proxiedHandler(c, t))
	})
	return s
}

// passThrough is the receiving middleware of a single-server endpoint: it answers
// passThroughMethods from the upstream and leaves every other method to go-sdk.
func (g *Gateway) passThrough(c *catalog.Connection) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if !passThroughMethods[method] {
				return next(ctx, method, req)
			}
			return g.forwardMethod(ctx, c, method, req)
		}
	}
}

// forwardMethod sends one pass-through request upstream. A JSON-RPC error from the
// upstream reaches the client unchanged; a gateway-side failure (unreachable, timeout)
// is a JSON-RPC internal error whose data carries the envelope code, retryable flag and
// an errorId that is logged.
func (g *Gateway) forwardMethod(ctx context.Context, c *catalog.Connection, method string, req mcp.Request) (mcp.Result, error) {
	st := stateFrom(ctx)
	if st == nil {
		return nil, errors.New("gateway: request state missing")
	}
	start := time.Now()
	callCtx, cancel := g.callContext(ctx, st)
	target, err := g.targets.get(callCtx, g.o.Pool, c)
	var res mcp.Result
	if err == nil {
		err = g.o.Upstreams.Do(callCtx, target, func(ctx context.Context, cs *mcp.ClientSession) error {
			var err error
			res, err = forwardOne(ctx, cs, req)
			return err
		})
	}
	cancel()
	if err == nil {
		if st.newProtocol {
			res = markComplete(res)
		}
		g.log.DebugContext(ctx, "passed through", "method", method, "connection_id", c.ID,
			"duration_ms", float64(time.Since(start).Microseconds())/1000)
		return res, nil
	}
	if je := mcpclient.RPCError(err); je != nil {
		return nil, je
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return nil, je
	}
	errorID := httpapi.NewID()
	fail := toolError(err, errorID)
	if fail.Code == apperr.Internal {
		fail.Code, fail.Message, fail.Retryable = apperr.UpstreamError, "upstream request failed", false
	}
	fail.ErrorID = errorID
	g.log.WarnContext(ctx, "pass-through failed", "method", method, "connection_id", c.ID, "error_id", errorID, "err", err)
	data, _ := json.Marshal(map[string]any{"code": fail.Code, "retryable": fail.Retryable, "errorId": errorID})
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fail.Message, Data: data}
}

// forwardOne sends req's params upstream on cs with the matching client method. The
// params go without their _meta: it describes the downstream exchange (a 2026-07-28
// client's protocol version, client info and capabilities), not the gateway's own session
// with the upstream.
func forwardOne(ctx context.Context, cs *mcp.ClientSession, req mcp.Request) (mcp.Result, error) {
	switch r := req.(type) {
	case *mcp.ListResourcesRequest:
		return cs.ListResources(ctx, withoutMeta(r.Params))
	case *mcp.ListResourceTemplatesRequest:
		return cs.ListResourceTemplates(ctx, withoutMeta(r.Params))
	case *mcp.ReadResourceRequest:
		return cs.ReadResource(ctx, withoutMeta(r.Params))
	case *mcp.SubscribeRequest:
		return &mcp.ResultBase{}, cs.Subscribe(ctx, withoutMeta(r.Params))
	case *mcp.UnsubscribeRequest:
		return &mcp.ResultBase{}, cs.Unsubscribe(ctx, withoutMeta(r.Params))
	case *mcp.ListPromptsRequest:
		return cs.ListPrompts(ctx, withoutMeta(r.Params))
	case *mcp.GetPromptRequest:
		return cs.GetPrompt(ctx, withoutMeta(r.Params))
	case *mcp.CompleteRequest:
		return cs.Complete(ctx, withoutMeta(r.Params))
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not supported"}
}

// withoutMeta returns a shallow copy of params with its _meta cleared (nil stays nil).
func withoutMeta[P any, PP interface {
	*P
	mcp.Params
}](params PP) PP {
	if params == nil {
		return nil
	}
	c := PP(new(P))
	*c = *params
	c.SetMeta(nil)
	return c
}

// markComplete sets resultType "complete" on a passed-through prompts/get or
// resources/read result for a 2026-07-28 client, as go-sdk does for results of its own
// handlers (the field is unexported, so through JSON). Other results are returned as is.
func markComplete(res mcp.Result) mcp.Result {
	switch r := res.(type) {
	case *mcp.GetPromptResult:
		if !r.NeedsInput() {
			return withResultType(r, new(mcp.GetPromptResult))
		}
	case *mcp.ReadResourceResult:
		if !r.NeedsInput() {
			return withResultType(r, new(mcp.ReadResourceResult))
		}
	}
	return res
}

func withResultType[R mcp.Result](in, out R) mcp.Result {
	b, err := json.Marshal(in)
	if err != nil {
		return in
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return in
	}
	m["resultType"] = json.RawMessage(`"complete"`)
	if b, err = json.Marshal(m); err != nil || json.Unmarshal(b, out) != nil {
		return in
	}
	return out
}
