package upstreamauth

import (
	"crypto/rand"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// URLElicitationVersion is the first protocol version with the URL-elicitation-required
// error (-32042, MCP 2025-11-25 "URL Elicitation Required Error").
const URLElicitationVersion = "2025-11-25"

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
// or the negotiated one):
//
//   - 2025-11-25 and newer: a JSON-RPC error, code -32042 (mcp.CodeURLElicitationRequired),
//     data {"elicitations":[{"mode":"url","url":…,"message":…,"elicitationId":…}]} — return
//     it as the handler's error (it is a *jsonrpc.Error, sent as is by go-sdk).
//   - older versions: a tools/call result with isError true whose text carries the link.
//
// Exactly one of the two is non-nil.
func Answer(protocolVersion string, r NeedsAuthorization) (*mcp.CallToolResult, error) {
	if protocolVersion >= URLElicitationVersion {
		return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{
			Mode: "url", URL: r.AuthorizationURL, Message: r.message(), ElicitationID: rand.Text(),
		}})
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: r.message()}}}, nil
}
