// The other requests forwarded upstream: the single-server endpoint's pass-through
// methods and the tasks' routing.

package forward

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// passThrough are the methods the single-server endpoint forwards to the upstream.
var passThrough = map[string]bool{
	"resources/list":           true,
	"resources/templates/list": true,
	"resources/read":           true,
	"resources/subscribe":      true,
	"resources/unsubscribe":    true,
	"prompts/list":             true,
	"prompts/get":              true,
	"completion/complete":      true,
	// Skills (SEP-2640, io.modelcontextprotocol/skills) and its optional directory read.
	"skills/list":              true,
	"skills/get":               true,
	"resources/directory/read": true,
}

// PassThrough reports whether the single-server endpoint forwards method upstream.
func PassThrough(method string) bool { return passThrough[method] }

// Method sends one pass-through request of the single-server endpoint to connection c and
// returns the upstream's result bytes. A JSON-RPC error from the upstream reaches the
// client unchanged; a gateway-side failure is wire.Failure (-32603 with the envelope code,
// retryable flag and a logged errorId). The params go without the downstream exchange's
// _meta fields except the client's capabilities (WithoutDownstreamMeta). A caller the
// connection needs authorization from gets the answer of the request's revision and
// nothing is forwarded: -32042 at 2025-11-25; at 2026-07-28 an InputRequiredResult for
// prompts/get and resources/read (Forwarder.Call's rules: requestState, decline, a
// client without URL elicitation); otherwise -32600 with the link. An upstream's -32002
// reaches a 2026-07-28 client as -32602 (ClientError).
func (f *Forwarder) Method(ctx context.Context, st *request.State, c *catalog.Connection, method string, params json.RawMessage) (json.RawMessage, error) {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	p, ok := jsonobj.Members(params)
	if !ok {
		return nil, wire.InvalidParams("params is not a JSON object")
	}
	// prompts/get and resources/read may answer an InputRequiredResult at 2026-07-28 (MRTR
	// "Supported Requests"); the other methods get the text refusal there (-32042 is
	// forbidden at that revision).
	mrtr := method == "prompts/get" || method == "resources/read"
	bind := upstreamauth.Binding{Subject: st.Principal.Subject, Workspace: st.Workspace, ConnectionID: c.ID,
		Method: method, Name: requestName(p), Params: params}
	declined, ver := false, ""
	var err error
	if mrtr {
		if params, declined, err = f.gatewayState(ctx, bind, params, p); err != nil {
			return nil, err
		}
		ver = AnswerVersion(st.Version, p["_meta"])
	} else if st.Version < upstreamauth.InputRequiredVersion {
		ver = st.Version
	}
	up, err := WithoutDownstreamMeta(params)
	if err != nil {
		return nil, wire.InvalidParams(err.Error())
	}
	start := time.Now()
	callCtx, cancel := f.CallContext(ctx, st)
	pc, err := f.prepare(callCtx, st, c, ver)
	if err == nil && (pc.Answer != nil || pc.AnswerErr != nil) {
		cancel()
		return f.methodAnswer(ctx, bind, declined, c.Name, pc.Answer, pc.AnswerErr)
	}
	var res json.RawMessage
	if err == nil {
		res, err = f.o.Upstreams.Forward(callCtx, pc.Target, method, up, nil)
	}
	cancel()
	if err == nil {
		f.log.DebugContext(ctx, "passed through", "method", method, "connection_id", c.ID,
			"duration_ms", float64(time.Since(start).Microseconds())/1000)
		return res, nil
	}
	if je := mcpclient.RPCError(err); je != nil {
		if ans, ansErr, ok := UpstreamElicitation(st.Version, p["_meta"], method, je); ok {
			return ans, ansErr
		}
	} else if ans, ansErr, ok := f.stepUp(ctx, st, c, ver, err); ok {
		// The upstream refused the grant's token after a refresh: the way to re-authorize.
		return f.methodAnswer(ctx, bind, declined, c.Name, ans, ansErr)
	}
	return nil, f.failure(ctx, st, "pass-through failed", method, c.ID, err)
}

// methodAnswer is an authorization answer as Method gives it: the JSON-RPC error as is, an
// InputRequiredResult (or, after a decline, -32600 saying so), else -32600 with the link.
func (f *Forwarder) methodAnswer(ctx context.Context, bind upstreamauth.Binding, declined bool, name string, answer *mcp.CallToolResult, answerErr error) (json.RawMessage, error) {
	switch {
	case answerErr != nil:
		return nil, answerErr
	case answer.InputRequests != nil && declined:
		return nil, wire.Refusal(jsonrpc.CodeInvalidRequest, declinedText(name))
	case answer.InputRequests != nil:
		return f.inputRequired(ctx, bind, answer)
	}
	return nil, wire.Refusal(jsonrpc.CodeInvalidRequest, "this server needs authorization: "+answerText(answer))
}

// Raw sends one request (tasks/* routing, a task-augmented tools/call) to connection
// connID's upstream under the synchronous budget, with st's caller's credentials; errors
// as Method.
func (f *Forwarder) Raw(ctx context.Context, st *request.State, connID, method string, params json.RawMessage) (json.RawMessage, error) {
	callCtx, cancel := f.CallContext(ctx, st)
	defer cancel()
	row, err := db.ConnectionGet(callCtx, f.o.Pool, connID)
	var res json.RawMessage
	if err == nil {
		res, err = f.o.Upstreams.Forward(callCtx, f.TargetFor(callCtx, row, st.Principal.Subject), method, params, nil)
	}
	if err == nil {
		return res, nil
	}
	return nil, f.failure(ctx, st, "task routing failed", method, connID, err)
}

// failure is the answer to a request of st that did not get an upstream result: the
// upstream's JSON-RPC error as st's revision receives it (ClientError), else wire.Failure,
// logged under its errorId.
func (f *Forwarder) failure(ctx context.Context, st *request.State, msg, method, connID string, err error) error {
	if je := mcpclient.RPCError(err); je != nil {
		return ClientError(st.Version, je)
	}
	errorID := httpapi.NewID()
	fail := wire.UpstreamFailure(err, errorID, "request")
	f.log.WarnContext(ctx, msg, "method", method, "connection_id", connID, "error_id", errorID, "err", err)
	return wire.Failure(fail, errorID)
}

// answerText is the text of an authorization answer (upstreamauth.AnswerText).
func answerText(r *mcp.CallToolResult) string {
	if t := upstreamauth.AnswerText(r); t != "" {
		return t
	}
	return "authorize it in the console"
}
