// What changes by protocol revision: a retry's requestState (2026-07-28 multi round-trip
// requests), which authorization answer a request gets, and the upstream errors a newer
// client must not receive.

package forward

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gatewayState handles a retry's requestState (MCP 2026-07-28 "Multi Round-Trip
// Requests"). None, one that is not a string, or one the gateway did not issue (an
// upstream's): params are returned unchanged and go upstream as they are. One the gateway
// issued (upstreamauth.StatePrefix): it is verified against bind — a failure is -32602,
// as that chapter says state failing verification MUST be rejected — and removed from
// params together with inputResponses, which answered the gateway and not the upstream;
// declined reports whether the user declined the gateway's elicitation.
func (f *Forwarder) gatewayState(ctx context.Context, bind upstreamauth.Binding, params json.RawMessage, p map[string]json.RawMessage) (_ json.RawMessage, declined bool, _ error) {
	var state string
	if p["requestState"] == nil || json.Unmarshal(p["requestState"], &state) != nil || !upstreamauth.IsGatewayState(state) {
		return params, false, nil
	}
	if f.o.Connections == nil || f.o.Connections.Auth == nil {
		return nil, false, wire.InvalidParams(upstreamauth.ErrRequestState.Error())
	}
	if err := f.o.Connections.Auth.OpenRequestState(ctx, state, bind); err != nil {
		f.log.DebugContext(ctx, "requestState refused", "method", bind.Method, "connection_id", bind.ConnectionID, "err", err)
		return nil, false, wire.InvalidParams(err.Error())
	}
	out, err := jsonobj.DeleteMember(params, "requestState")
	if err == nil && p["inputResponses"] != nil {
		out, err = jsonobj.DeleteMember(out, "inputResponses")
	}
	if err != nil {
		return nil, false, wire.InvalidParams(err.Error())
	}
	return out, upstreamauth.Declined(p["inputResponses"]), nil
}

// AnswerVersion is the protocol version whose authorization answer (upstreamauth.Answer)
// a request made at version with _meta meta gets: version itself, except that a
// 2026-07-28 client that did not declare URL-mode elicitation in its per-request
// clientCapabilities (_meta io.modelcontextprotocol/clientCapabilities elicitation.url)
// gets the text answer ("") — MRTR: servers MUST NOT send input requests the client has
// not declared; an elicitation capability without "url" means form mode only.
func AnswerVersion(version string, meta json.RawMessage) string {
	if version < upstreamauth.InputRequiredVersion {
		return version
	}
	var m struct {
		Caps struct {
			Elicitation struct {
				URL json.RawMessage `json:"url"`
			} `json:"elicitation"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	if json.Unmarshal(meta, &m) != nil || m.Caps.Elicitation.URL == nil || string(m.Caps.Elicitation.URL) == "null" {
		return ""
	}
	return version
}

// ClientError is an upstream's JSON-RPC error as the client's revision (version) must
// receive it: at 2026-07-28 and newer, -32002 (resource not found of 2025-11-25 and
// earlier, which that revision forbids emitting) becomes -32602 with the same message and
// data (MCP 2026-07-28 basic/index "Error Codes", server/resources "Error Handling");
// everything else passes through unchanged.
func ClientError(version string, je *jsonrpc.Error) *jsonrpc.Error {
	if version >= upstreamauth.InputRequiredVersion && je.Code == codeResourceNotFoundLegacy {
		c := *je
		c.Code = jsonrpc.CodeInvalidParams
		return &c
	}
	return je
}

// UpstreamElicitation answers an upstream's -32042 (URL elicitation required, which an
// upstream of 2025-11-25 sends) to a client of 2026-07-28 or newer, which must not receive
// that code (MCP 2026-07-28 basic/index "Error Codes"): for tools/call, prompts/get and
// resources/read from a client that declared URL elicitation (AnswerVersion), an
// InputRequiredResult whose inputRequests carry the upstream's elicitations as URL-mode
// elicitation/create requests ("upstream_1", …; no requestState: the retry is the same
// request again, and the upstream decides again); otherwise, for tools/call an isError
// result with the messages and URLs, and for other methods -32600 with them. ok is false
// for any other error or an older client (the error passes through).
func UpstreamElicitation(version string, meta json.RawMessage, method string, je *jsonrpc.Error) (res json.RawMessage, rerr error, ok bool) {
	if version < upstreamauth.InputRequiredVersion || je.Code != mcp.CodeURLElicitationRequired {
		return nil, nil, false
	}
	var data struct {
		Elicitations []struct {
			Message string `json:"message"`
			URL     string `json:"url"`
		} `json:"elicitations"`
	}
	_ = json.Unmarshal(je.Data, &data)
	reqs := mcp.InputRequestMap{}
	var text []string
	for i, el := range data.Elicitations {
		if el.URL == "" {
			continue
		}
		reqs["upstream_"+strconv.Itoa(i+1)] = &mcp.ElicitParams{Mode: "url", Message: el.Message, URL: el.URL}
		text = append(text, strings.TrimSpace(el.Message+" "+el.URL))
	}
	if len(text) == 0 {
		text = append(text, je.Message)
	}
	msg := "the server needs you to open a link first: " + strings.Join(text, "; ")
	mrtr := method == "tools/call" || method == "prompts/get" || method == "resources/read"
	if mrtr && len(reqs) > 0 && AnswerVersion(version, meta) != "" {
		b, err := upstreamauth.InputRequired(&mcp.CallToolResult{InputRequests: reqs}, "")
		if err == nil {
			return b, nil, true
		}
	}
	if method == "tools/call" {
		b, err := json.Marshal(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}})
		if err == nil {
			return b, nil, true
		}
	}
	return nil, wire.Refusal(jsonrpc.CodeInvalidRequest, msg), true
}

// codeResourceNotFoundLegacy is resource not found before 2026-07-28.
const codeResourceNotFoundLegacy = -32002
