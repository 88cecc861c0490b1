package upstreamauth

import (
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// URLElicitationVersion is the first protocol version with the URL-elicitation-required
// error (-32042, MCP 2025-11-25 "URL Elicitation Required Error").
const URLElicitationVersion = "2025-11-25"

// InputRequiredVersion is the first protocol version that carries elicitations inside an
// InputRequiredResult (MCP 2026-07-28 "Multi Round-Trip Requests") and forbids -32042
// (basic/index "Error Codes": implementations of this version MUST NOT emit it).
const InputRequiredVersion = "2026-07-28"

// InputKey is the inputRequests key of the gateway's authorization elicitation: the retry's
// inputResponses answer it under the same key.
const InputKey = "agentpack_authorize"

// NeedsAuthorization describes a caller who has no usable token for a connection: what the gateway
// answers instead of forwarding the call (nothing is sent upstream).
type NeedsAuthorization struct {
	// ConnectionName is shown in the message, e.g. "Linear".
	ConnectionName string
	// AuthorizationURL is where the caller authorizes (Begin's answer for this caller).
	AuthorizationURL string
	// Expired is true when a grant existed but cannot be refreshed (re-authorization), false
	// when the caller never authorized.
	Expired bool
}

func (r NeedsAuthorization) message() string {
	if r.Expired {
		return fmt.Sprintf("The authorization for %s expired. Open %s to authorize again, then retry.", r.ConnectionName, r.AuthorizationURL)
	}
	return fmt.Sprintf("%s needs your authorization. Open %s to connect your account, then retry.", r.ConnectionName, r.AuthorizationURL)
}

// Answer is the answer to a tools/call (or another request) of a caller without a usable
// token, by the protocol version the request was made with (the Mcp-Protocol-Version header
// or the negotiated one) — the one place that decides it per revision:
//
//   - 2026-07-28 and newer: a result whose InputRequests hold one URL-mode
//     elicitation/create under InputKey (mode, message, url; that revision's
//     ElicitRequestURLParams has no elicitationId). It is an InputRequiredResult, not a
//     tools/call result: the caller seals a requestState for it and encodes it with
//     InputRequired. A caller whose client did not declare URL-mode elicitation must get
//     the text answer instead (MRTR: servers MUST NOT send input requests the client has
//     not declared); pass "" as the version for that.
//   - 2025-11-25: a JSON-RPC error, code -32042 (mcp.CodeURLElicitationRequired), data
//     {"elicitations":[{"mode":"url","url":…,"message":…,"elicitationId":…}]} — return it
//     as the handler's error (it is a *jsonrpc.Error, sent as is by go-sdk).
//   - older versions: a tools/call result with isError true whose text carries the link.
//
// Exactly one of the two is non-nil.
func Answer(protocolVersion string, r NeedsAuthorization) (*mcp.CallToolResult, error) {
	switch {
	case protocolVersion >= InputRequiredVersion:
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			InputKey: &mcp.ElicitParams{Mode: "url", URL: r.AuthorizationURL, Message: r.message()},
		}}, nil
	case protocolVersion >= URLElicitationVersion:
		return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{
			Mode: "url", URL: r.AuthorizationURL, Message: r.message(), ElicitationID: rand.Text(),
		}})
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: r.message()}}}, nil
}

// InputRequired encodes the answer Answer gave at 2026-07-28 (res.InputRequests set) as an
// InputRequiredResult: {"resultType":"input_required","inputRequests":…,"requestState":…}
// (MCP 2026-07-28 schema InputRequiredResult; requestState omitted when "").
func InputRequired(res *mcp.CallToolResult, requestState string) (json.RawMessage, error) {
	return json.Marshal(struct {
		ResultType    string              `json:"resultType"`
		InputRequests mcp.InputRequestMap `json:"inputRequests"`
		RequestState  string              `json:"requestState,omitempty"`
	}{"input_required", res.InputRequests, requestState})
}

// Declined reports whether a retry's inputResponses say the user declined or cancelled the
// gateway's authorization elicitation (ElicitResult action "decline" or "cancel" under
// InputKey); absent or malformed responses are not a decline.
func Declined(inputResponses json.RawMessage) bool {
	var m map[string]struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(inputResponses, &m) != nil {
		return false
	}
	a := m[InputKey].Action
	return a == "decline" || a == "cancel"
}

// AnswerText is the text of an authorization answer: its first text content, or the
// message of its elicitation; "" when it has neither.
func AnswerText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	for _, ir := range res.InputRequests {
		if ep, ok := ir.(*mcp.ElicitParams); ok {
			return ep.Message
		}
	}
	return ""
}
