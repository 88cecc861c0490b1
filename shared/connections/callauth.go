package connections

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/upstreamauth"
)

// Upstream authorization at call time (docs/UPSTREAM-AUTH.md): the target and credentials
// a request to a connection is forwarded with, or the answer given instead when the caller
// has no usable grant or the upstream asks for more scopes (step-up).

// StepUp is what the gateway calls when a request of principal p to connection c failed
// with callErr, and it returns the answer to give instead of the failure, as PrepareCall
// does (-32042 with the link at 2025-11-25+, or an isError result with it); ok is false for
// an ordinary failure. Two failures have such an answer:
//
//   - the upstream answered 403 insufficient_scope (MCP authorization, scope challenge
//     handling): it starts an authorization asking for the scopes the challenge names (with
//     those already granted). A member cannot step up a shared oauth grant (an admin's act)
//     and gets an isError result saying so;
//   - the upstream answered 401 to an OAuth connection's token even after the one refresh
//     the transport tries (mcpclient, Credentials.Unauthorized), e.g. the authorization
//     server forgot its grants: the grant is expired at once (upstreamauth Service.Expire,
//     unless the refused refresh already did) and the answer is the consent link — in the
//     same call, not the next one.
//
// The caller retries the call after consenting.
func (s *Service) StepUp(ctx context.Context, c *db.Connection, p *auth.Principal, protocolVersion string, callErr error) (answer *mcp.CallToolResult, answerErr error, ok bool) {
	if s.Auth == nil {
		return nil, nil, false
	}
	mode := upstreamauth.Mode(c.AuthMode)
	if mode != upstreamauth.ModeOAuth && mode != upstreamauth.ModeOAuthPerUser {
		return nil, nil, false
	}
	ch := s.Auth.TakeScopeChallenge(grantKey(c, p.Subject))
	if ch == nil {
		return s.afterUnauthorized(ctx, c, p, protocolVersion, callErr)
	}
	if mode == upstreamauth.ModeOAuth && !p.IsAdmin() {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: c.Name + " needs more permissions upstream (" + strings.Join(ch.Scopes, " ") + "): a workspace admin must authorize it again."}}}, nil, true
	}
	az := s.beginAuthorizationFor(ctx, p, c, "", ch)
	if az.AuthorizationURL == "" {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: c.Name + " needs more permissions upstream, but the authorization could not be started: " + az.Reason}}}, nil, true
	}
	answer, answerErr = upstreamauth.Answer(protocolVersion, upstreamauth.NeedsAuthorization{
		ConnectionName: c.Name, AuthorizationURL: az.AuthorizationURL})
	return answer, answerErr, true
}

// afterUnauthorized is StepUp's 401 case (see there); ok is false when callErr is not the
// upstream's 401 nor a missing grant.
func (s *Service) afterUnauthorized(ctx context.Context, c *db.Connection, p *auth.Principal, protocolVersion string, callErr error) (*mcp.CallToolResult, error, bool) {
	f := mcpclient.FailureOf(callErr)
	refused := f != nil && f.HTTPStatus == http.StatusUnauthorized
	if !refused && !errors.Is(callErr, upstreamauth.ErrAuthorizationRequired) {
		return nil, nil, false
	}
	k := grantKey(c, p.Subject)
	if refused {
		if err := s.Auth.Expire(ctx, k, "the upstream refused the access token (HTTP 401) after a refresh"); err != nil {
			s.logger().ErrorContext(ctx, "grant not expired", "connection_id", c.ID, "err", err)
		}
	}
	answer, answerErr := s.authorizationAnswer(ctx, c, p, protocolVersion, true)
	return answer, answerErr, true
}

// PrepareCall is what the gateway calls before forwarding a request of principal p to
// connection c (made with protocolVersion, the request's MCP protocol version). It returns
// the upstream target with its credentials — or, when the connection uses OAuth and p has no
// usable token (oauth_per_user before p authorized, or any OAuth grant whose refresh
// failed), the answer to give instead, in which case nothing must be sent upstream:
//
//   - answerErr, for 2025-11-25 and newer: the JSON-RPC error -32042 (URL elicitation
//     required) carrying an authorization URL started for p (upstreamauth.Answer);
//   - answer, for older versions: a tools/call result with isError and the link.
//
// For a shared oauth connection only an admin gets a link (re-authorizing the workspace's
// grant is an admin's act); a member gets an isError result saying an admin must
// re-authorize. err is for failures of the gateway itself (database).
func (s *Service) PrepareCall(ctx context.Context, c *db.Connection, p *auth.Principal, protocolVersion string) (t mcpclient.Target, answer *mcp.CallToolResult, answerErr error, err error) {
	defer derrors.Wrap(&err, "connections: prepare call to %s", c.ID)
	t = s.TargetFor(ctx, c, p.Subject)
	if t.Credentials == nil {
		return t, nil, nil, nil
	}
	if _, terr := t.Credentials.Token(ctx); !errors.Is(terr, upstreamauth.ErrAuthorizationRequired) {
		// A usable token (or a transient failure the call itself will report).
		return t, nil, nil, nil
	}
	st, err := s.AuthorizationOf(ctx, c, p.Subject)
	if err != nil {
		return t, nil, nil, err
	}
	expired := st != nil && st.Authorization == upstreamauth.Expired
	answer, answerErr = s.authorizationAnswer(ctx, c, p, protocolVersion, expired)
	return t, answer, answerErr, nil
}

// authorizationAnswer is the answer to p's request to c when p has no usable grant
// (PrepareCall, StepUp): for a shared oauth connection and a member, or client_credentials,
// an isError result saying who must act; else a consent link started for p, in the form of
// protocolVersion (upstreamauth.Answer: -32042 at 2025-11-25, the link in an isError
// result before). expired says the grant existed and lapsed (the text says so).
func (s *Service) authorizationAnswer(ctx context.Context, c *db.Connection, p *auth.Principal, protocolVersion string, expired bool) (*mcp.CallToolResult, error) {
	mode := upstreamauth.Mode(c.AuthMode)
	if mode == upstreamauth.ModeOAuth && !p.IsAdmin() {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: c.Name + " is not authorized upstream (or its authorization expired): a workspace admin must authorize it again."}}}, nil
	}
	if mode == upstreamauth.ModeClientCredentials {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: c.Name + " could not obtain a token with its client credentials: an admin must check the catalog entry's OAuth client."}}}, nil
	}
	az := s.beginAuthorization(ctx, p, c, "")
	if az.AuthorizationURL == "" {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: c.Name + " needs authorization, but it could not be started: " + az.Reason}}}, nil
	}
	return upstreamauth.Answer(protocolVersion, upstreamauth.NeedsAuthorization{
		ConnectionName: c.Name, AuthorizationURL: az.AuthorizationURL, Expired: expired})
}
