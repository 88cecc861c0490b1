package mcpclient

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RPCError returns the JSON-RPC error the upstream answered, if err (from any Pool method)
// carries one — e.g. -32602 invalid params or an unknown tool — so that the gateway can pass
// it through to its own client unchanged. It returns nil otherwise, and for go-sdk's
// transport-local "rejected by transport" (-32005), which wraps a failed POST (dial error,
// 5xx) and is not an answer of the upstream.
func RPCError(err error) *jsonrpc.Error {
	var e *jsonrpc.Error
	if errors.As(err, &e) && !(e.Code == codeRejected && e.Message == "rejected by transport") {
		return e
	}
	return nil
}

// codeRejected is go-sdk's internal jsonrpc2.ErrRejected code (not exported).
const codeRejected = -32005

// classifyConnect turns a failed connect attempt into an *apperr.Error.
func (p *Pool) classifyConnect(ctx context.Context, err error, pr *probe, rt *roundTripper, transport string, timedOut bool) *apperr.Error {
	status, method, netErr, _ := pr.snapshot()
	name := transportLabel(transport)
	switch {
	case timedOut:
		return apperr.Wrap(err, apperr.UpstreamTimeout, "upstream did not complete the MCP handshake (%s) within %s",
			name, p.opts.ConnectTimeout.Round(time.Millisecond))
	case ctx.Err() != nil:
		return ctxError(ctx, "connecting to the upstream")
	}
	if e := p.classifyHTTP(err, status, method, netErr, rt, "the MCP handshake ("+name+")"); e != nil {
		return e
	}
	if rpc := RPCError(err); rpc != nil {
		return apperr.Wrap(err, apperr.UpstreamError, "upstream refused the MCP handshake (%s): JSON-RPC error %d: %s",
			name, rpc.Code, clip(rpc.Message, 200))
	}
	return apperr.Wrap(err, apperr.UpstreamError, "upstream did not complete the MCP handshake (%s): protocol error", name)
}

// classify turns a failed call into an *apperr.Error. callCtx is the context with the call
// timeout; ctx the caller's.
func (p *Pool) classify(ctx, callCtx context.Context, err error, pr *probe, s *session, what string) error {
	if e := apperr.As(err); e != nil {
		return err
	}
	status, method, netErr, gone := pr.snapshot()
	switch {
	case ctx.Err() != nil:
		return ctxError(ctx, "calling the upstream")
	case callCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return apperr.Wrap(err, apperr.UpstreamTimeout, "upstream did not answer the %s within %s", what,
			p.opts.CallTimeout.Round(time.Millisecond))
	}
	// A JSON-RPC error in the body wins over a 4xx status: stateless (2026-07-28) servers
	// answer request errors with 400 and the error object. Auth and rate limits still win.
	if rpc := RPCError(err); rpc != nil && !gone && !s.rt.tooLarge.Load() &&
		status != http.StatusUnauthorized && status != http.StatusForbidden &&
		status != http.StatusTooManyRequests && status < 500 {
		return apperr.Wrap(err, apperr.UpstreamError, "upstream returned JSON-RPC error %d: %s", rpc.Code, clip(rpc.Message, 200))
	}
	if e := p.classifyHTTP(err, status, method, netErr, s.rt, "the "+what); e != nil {
		return e
	}
	if gone || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) {
		return apperr.Wrap(err, apperr.UpstreamUnavailable, "upstream closed the session")
	}
	return apperr.Wrap(err, apperr.UpstreamError, "upstream %s failed: protocol error", what)
}

// classifyHTTP maps what the HTTP layer saw (too large, blocked, network error, status) to
// an error, or returns nil when it explains nothing.
func (p *Pool) classifyHTTP(err error, status int, method string, netErr error, rt *roundTripper, what string) *apperr.Error {
	if rt != nil && rt.tooLarge.Load() {
		return apperr.Wrap(err, apperr.UpstreamError, "upstream response is larger than the %d-byte limit", p.opts.MaxResponseBytes)
	}
	var blocked *urlguard.BlockedError
	if errors.As(netErr, &blocked) || errors.As(err, &blocked) {
		return apperr.Wrap(err, apperr.UpstreamError, "upstream address is not allowed (%s)", blocked.Reason).
			WithHint("the URL resolves to a private or reserved address")
	}
	if netErr != nil && (status == 0 || status/100 == 2) {
		return apperr.Wrap(err, apperr.UpstreamUnavailable, "upstream is unreachable")
	}
	if status == 0 || status/100 == 2 {
		return nil
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return apperr.Wrap(err, apperr.UpstreamError, "upstream answered %d: check the connection's headers", status).
			WithHint("the upstream refused the connection's credentials")
	case status == http.StatusTooManyRequests:
		return apperr.Wrap(err, apperr.UpstreamUnavailable, "upstream answered 429: rate limited")
	case status >= 500:
		return apperr.Wrap(err, apperr.UpstreamUnavailable, "upstream answered %d to %s", status, what)
	case status >= 300 && status < 400:
		return apperr.Wrap(err, apperr.UpstreamError, "upstream answered a redirect (%d); redirects are not followed", status).
			WithHint("use the final URL of the MCP endpoint")
	default:
		return apperr.Wrap(err, apperr.UpstreamError, "upstream answered %d to %s", status, what)
	}
}

// ctxError is the error for a caller whose context ended: UPSTREAM_TIMEOUT for a deadline,
// else UPSTREAM_UNAVAILABLE wrapping context.Canceled (a client that went away).
func ctxError(ctx context.Context, doing string) *apperr.Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return apperr.Wrap(ctx.Err(), apperr.UpstreamTimeout, "deadline passed while %s", doing)
	}
	return apperr.Wrap(ctx.Err(), apperr.UpstreamUnavailable, "request cancelled while %s", doing)
}

func transportLabel(t string) string {
	if t == TransportSSE {
		return "SSE"
	}
	return "streamable HTTP"
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
