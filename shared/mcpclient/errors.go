package mcpclient

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
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
	if errors.As(err, &e) && !transportRejected(e) {
		return e
	}
	return nil
}

// classifyConnect turns a failed connect attempt into an *apperr.Error whose Details is a
// *Failure (stage, HTTP status, hint: FailureOf).
func (p *Pool) classifyConnect(ctx context.Context, err error, pr *probe, rt *roundTripper, transport string, timedOut bool) *apperr.Error {
	status, _, netErr, _ := pr.snapshot()
	name := transportLabel(transport)
	switch {
	case timedOut:
		e := apperr.Wrap(err, apperr.UpstreamTimeout, "upstream did not complete the MCP handshake (%s) within %s",
			name, p.opts.ConnectTimeout.Round(time.Millisecond))
		stage := StageProtocol
		if status == 0 {
			netStage, _, _, host, _ := pr.where()
			stage = StageHTTP
			if netErr != nil && netStage != "" && netStage != StageHTTP {
				stage = netStage
			}
			if stage == StageHTTP && host != "" {
				e.Message += ": the server at " + quote(host) + " did not answer"
			}
		} else if status/100 != 2 {
			stage = StageHTTP
		}
		return withFailure(e, stage, httpStatusOf(status))
	case ctx.Err() != nil:
		return ctxError(ctx, "connecting to the upstream")
	}
	if e := p.classifyHTTP(err, pr, rt, "the MCP handshake ("+name+")"); e != nil {
		return e
	}
	if rpc := RPCError(err); rpc != nil {
		return withFailure(apperr.Wrap(err, apperr.UpstreamError, "upstream refused the MCP handshake (%s): JSON-RPC error %d: %s",
			name, rpc.Code, text.Clip(rpc.Message, 200)), StageProtocol, httpStatusOf(status))
	}
	return withFailure(apperr.Wrap(err, apperr.UpstreamError, "upstream did not complete the MCP handshake (%s): protocol error", name).
		WithHint("the URL answers HTTP but not as an MCP server: check the URL and the transport"), StageProtocol, httpStatusOf(status))
}

// httpStatusOf is status when it is an HTTP status worth reporting, else 0.
func httpStatusOf(status int) int {
	if status < 100 {
		return 0
	}
	return status
}

// classify turns a failed call into an *apperr.Error. callCtx is the context with the call
// timeout; ctx the caller's.
func (p *Pool) classify(ctx, callCtx context.Context, err error, pr *probe, s *session, what string) error {
	if e := apperr.As(err); e != nil {
		return err
	}
	status, _, _, gone := pr.snapshot()
	switch {
	case ctx.Err() != nil:
		return ctxError(ctx, "calling the upstream")
	case callCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return apperr.Wrap(err, apperr.UpstreamTimeout, "upstream did not answer the %s within %s", what,
			p.opts.CallTimeout.Round(time.Millisecond))
	}
	// The session was lost and the retry on a new session was answered 404 again (or the
	// SSE stream was gone again): the upstream's error object, such as the TypeScript SDK's
	// -32001 "Session not found", is about the gateway's session, not the caller's request,
	// so it is not passed through (the cause kept for the log only carries its text). A 400
	// after the retry is the upstream's answer to the request and is relayed like any other.
	if gone && status != http.StatusBadRequest {
		return apperr.Wrap(errors.New(err.Error()), apperr.UpstreamUnavailable,
			"upstream closed the session, and again the new session it was retried on").
			WithHint("the upstream server keeps forgetting its sessions: try again later or check the server")
	}
	// A JSON-RPC error in the body wins over a 4xx status: stateless (2026-07-28) servers
	// answer request errors with 400 and the error object. Auth and rate limits still win.
	if rpc := RPCError(err); rpc != nil && !s.rt.tooLarge.Load() &&
		status != http.StatusUnauthorized && status != http.StatusForbidden &&
		status != http.StatusTooManyRequests && status < 500 {
		// A well-formed JSON-RPC error: the upstream answered, and refused at the MCP level
		// (stage protocol: the connection test tells "it answered, but refused to list its
		// tools" from a dead server).
		return withFailure(apperr.Wrap(err, apperr.UpstreamError, "upstream returned JSON-RPC error %d: %s", rpc.Code, text.Clip(rpc.Message, 200)),
			StageProtocol, httpStatusOf(status))
	}
	if e := p.classifyHTTP(err, pr, s.rt, "the "+what); e != nil {
		return e
	}
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) {
		return apperr.Wrap(err, apperr.UpstreamUnavailable, "upstream closed the session")
	}
	return apperr.Wrap(err, apperr.UpstreamError, "upstream %s failed: protocol error", what)
}

// classifyHTTP maps what the HTTP layer saw (too large, blocked, network error, status) to
// an error with a *Failure in its Details, or returns nil when it explains nothing. The
// message names the stage's cause in our words (never the network error's text) and the
// host, never the URL's query.
func (p *Pool) classifyHTTP(err error, pr *probe, rt *roundTripper, what string) *apperr.Error {
	status, _, netErr, _ := pr.snapshot()
	netStage, location, scheme, host, path := pr.where()
	if rt != nil && rt.tooLarge.Load() {
		return withFailure(apperr.Wrap(err, apperr.UpstreamError, "upstream response is larger than the %d-byte limit", p.opts.MaxResponseBytes),
			StageProtocol, httpStatusOf(status))
	}
	var blocked *urlguard.BlockedError
	if errors.As(netErr, &blocked) || errors.As(err, &blocked) {
		return withFailure(apperr.Wrap(err, apperr.UpstreamError, "upstream address is not allowed (%s)", blocked.Reason).
			WithHint("the URL resolves to a private or reserved address"), StageConnect, 0)
	}
	if netErr != nil && (status == 0 || status/100 == 2) {
		if netStage == "" {
			netStage = StageConnect
		}
		msg, hint := describeNetErr(netErr, netStage, host)
		return withFailure(apperr.Wrap(err, apperr.UpstreamUnavailable, "upstream is unreachable: %s", msg).WithHint(hint), netStage, 0)
	}
	if status == 0 || status/100 == 2 {
		return nil
	}
	var e *apperr.Error
	switch {
	case (status == http.StatusUnauthorized || status == http.StatusForbidden) && rt != nil && rt.creds != nil:
		// An OAuth connection has no headers to check: its token was refused.
		e = apperr.Wrap(err, apperr.UpstreamError, "upstream answered %d: it refused the connection's OAuth token", status).
			WithHint("authorize the connection again (the console's Authorizations page)")
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e = apperr.Wrap(err, apperr.UpstreamError, "upstream answered %d: check the connection's headers", status).
			WithHint("the upstream refused the connection's credentials")
	case status == http.StatusTooManyRequests:
		e = apperr.Wrap(err, apperr.UpstreamUnavailable, "upstream answered 429: rate limited").
			WithHint("wait and try again")
	case status >= 500:
		e = apperr.Wrap(err, apperr.UpstreamUnavailable, "upstream answered %d to %s", status, what).
			WithHint("the upstream server has a problem: try again later")
	case status >= 300 && status < 400:
		to := ""
		if location != "" {
			to = " to " + location
		}
		e = apperr.Wrap(err, apperr.UpstreamError, "upstream answered %d, a redirect%s; the redirect was not followed", status, to).
			WithHint("set the connection's URL to the final URL of the MCP endpoint")
	case status == http.StatusNotFound:
		e = apperr.Wrap(err, apperr.UpstreamError, "upstream answered 404 to %s: no MCP endpoint at this URL", what)
		if h := mcpPathHint(scheme, host, path); h != "" {
			e = e.WithHint(h)
		} else {
			e = e.WithHint("check the connection's URL")
		}
	default:
		e = apperr.Wrap(err, apperr.UpstreamError, "upstream answered %d to %s", status, what)
	}
	return withFailure(e, StageHTTP, status)
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
