package mcpclient

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"sync"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Relay receives the notifications an upstream sends about one call (CallToolRelay).
//
// Attribution is by stream, never by guess: a Streamable HTTP server sends the
// notifications that relate to a request on that request's own POST response (an SSE
// stream), before the response. The pool reads that stream through the HTTP layer of the
// session and hands each notifications/progress and notifications/message found on it to
// the Relay of the call that made the POST — so a pooled session shared by several callers
// never gives one caller's notifications to another. Notifications the upstream sends
// elsewhere (its standalone GET stream, which the pool never opens, or a legacy SSE
// transport's single stream) are not relayed: the legacy "sse" transport relays nothing.
//
// The callbacks run on the goroutine reading the upstream's response, in stream order,
// before CallToolRelay returns, and never after it returned: keep them short (append to
// a slice). A call retried once on a new session (see Do) may relay the first attempt's
// notifications too.
type Relay struct {
	// Progress, when non-nil, asks the upstream for progress: the call carries a fresh
	// progress token of the pool's own (never the caller's, so two callers' tokens cannot
	// collide upstream), and each notifications/progress on the call's stream bearing that
	// token is passed here with ProgressToken cleared: the caller sets its client's token.
	Progress func(*mcp.ProgressNotificationParams)
	// Log, when non-nil, receives the notifications/message sent on the call's stream. The
	// first such call on a session asks the upstream (when it declares the logging
	// capability) for messages at RelayLogLevel and above: logging/setLevel for a session
	// at an initialize-era version, the request's _meta log level at 2026-07-28.
	Log func(*mcp.LoggingMessageParams)
}

// RelayLogLevel is the level the pool asks an upstream for when a call relays log
// messages (the level go-sdk's stateless servers give their own clients).
const RelayLogLevel mcp.LoggingLevel = "info"

// CallToolRelay is CallTool with the call's upstream notifications handed to r (see
// Relay). A nil r, or one with no callbacks, is CallTool.
func (p *Pool) CallToolRelay(ctx context.Context, t Target, params *mcp.CallToolParams, r *Relay) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, apperr.Wrap(err, apperr.Validation, "tool call parameters are not JSON")
	}
	res, err := p.Forward(ctx, t, "tools/call", raw, r)
	if err != nil {
		return nil, err
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, apperr.Wrap(err, apperr.UpstreamError, "upstream tools/call result is not valid: %s", text.Clip(err.Error(), 120))
	}
	return &out, nil
}

// logging reports whether the upstream declared the logging capability.
func (s *session) logging() bool {
	ir := s.cs.InitializeResult()
	return s.info.Transport == TransportStreamable && ir != nil && ir.Capabilities != nil && ir.Capabilities.Logging != nil
}

// enableLogging sends logging/setLevel RelayLogLevel once per session (best effort: an
// upstream that refuses it just sends no messages).
func (s *session) enableLogging(ctx context.Context, p *Pool) {
	s.logOnce.Do(func() {
		if err := s.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: RelayLogLevel}); err != nil {
			p.log.DebugContext(ctx, "mcpclient: logging/setLevel refused", "err", err)
		}
	})
}

// relaySink is one CallToolRelay's destination.
type relaySink struct {
	r     *Relay
	token string // the progress token sent upstream ("" when progress is not wanted)

	mu   sync.Mutex
	done bool
}

func (s *relaySink) close() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

// newSink returns the destination of one forwarded request's notifications.
func newSink(r *Relay) *relaySink {
	s := &relaySink{r: r}
	if r.Progress != nil {
		s.token = "agentpack-" + rand.Text()
	}
	return s
}

// progressTokenKey is the _meta key of a request's progress token.
const progressTokenKey = "progressToken"

// deliver hands one notification met on the request's stream to the Relay.
func (s *relaySink) deliver(method string, params json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	switch method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if s.r.Progress == nil || s.token == "" || json.Unmarshal(params, &p) != nil {
			return
		}
		if tok, ok := p.ProgressToken.(string); !ok || tok != s.token {
			return
		}
		p.ProgressToken = nil
		s.r.Progress(&p)
	case "notifications/message":
		var m mcp.LoggingMessageParams
		if s.r.Log != nil && json.Unmarshal(params, &m) == nil && m.Level != "" {
			s.r.Log(&m)
		}
	}
}
