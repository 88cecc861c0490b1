package mcpclient

// One call on a pooled session: its timeout (Options.CallTimeout or WithCallTimeout), a
// reconnect once when the upstream forgot the session, and dropping a session the failure
// left broken.

import (
	"context"
	"errors"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// do runs fn with reconnect-once (see Do).
func (p *Pool) do(ctx context.Context, t Target, fn func(context.Context, *session) error) error {
	for attempt := 0; ; attempt++ {
		s, err := p.session(ctx, t)
		if err != nil {
			return err
		}
		timeout := p.opts.CallTimeout
		if d, ok := ctx.Value(callTimeoutKey{}).(time.Duration); ok && d > 0 {
			timeout = d
		}
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		pr := &probe{}
		err = fn(withProbe(callCtx, pr), s) // session() counted the call in (s.begin)
		s.end()
		if err == nil {
			cancel()
			s.lastUsed.Store(time.Now().UnixNano())
			if t.ConnectionID == "" {
				s.close()
			}
			return nil
		}
		gone := sessionGone(err, pr)
		if gone || transportBroken(err, pr, callCtx) {
			p.drop(t.ConnectionID, s)
		}
		if t.ConnectionID == "" {
			s.close()
		}
		if gone && attempt == 0 && ctx.Err() == nil && !s.rt.tooLarge.Load() {
			cancel()
			p.log.DebugContext(ctx, "mcpclient: upstream session gone, reconnecting once", "connection_id", t.ConnectionID)
			continue
		}
		err = p.classify(ctx, callCtx, err, pr, s, "call")
		cancel()
		return err
	}
}

type callTimeoutKey struct{}

// WithCallTimeout returns ctx with the per-call timeout d in place of Options.CallTimeout
// for calls made under it (a task run outlives the synchronous call budget). A deadline of
// ctx itself still wins.
func WithCallTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, callTimeoutKey{}, d)
}

// sessionGone reports whether a call failed because the upstream forgot or closed the
// session (the case for one reconnect).
func sessionGone(err error, pr *probe) bool {
	_, _, _, gone := pr.snapshot()
	return gone || errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed)
}

// transportBroken reports whether a failed call leaves the session unusable (anything but a
// JSON-RPC error answered by the upstream, a timeout, or an *apperr.Error of our own).
func transportBroken(err error, pr *probe, callCtx context.Context) bool {
	if callCtx.Err() != nil || apperr.As(err) != nil {
		return false
	}
	status, _, netErr, _ := pr.snapshot()
	if netErr != nil || (status != 0 && (status < 200 || status > 299)) {
		return true
	}
	return RPCError(err) == nil
}
