package mcpclient

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"sync"

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

// maxRelayEvent bounds the data of one SSE event the relay decodes; larger events (a big
// tool result, say) are passed through to go-sdk untouched and never buffered here.
const maxRelayEvent = 256 << 10

// CallToolRelay is CallTool with the call's upstream notifications handed to r (see
// Relay). A nil r, or one with no callbacks, is CallTool.
func (p *Pool) CallToolRelay(ctx context.Context, t Target, params *mcp.CallToolParams, r *Relay) (*mcp.CallToolResult, error) {
	if r == nil || (r.Progress == nil && r.Log == nil) {
		return p.CallTool(ctx, t, params)
	}
	sink := &relaySink{r: r}
	if r.Progress != nil {
		sink.token = "agentpack-" + rand.Text()
	}
	defer sink.close()
	ctx = context.WithValue(ctx, sinkKey{}, sink)
	var res *mcp.CallToolResult
	err := p.do(ctx, t, func(ctx context.Context, s *session) error {
		up := *params // go-sdk writes _meta into the params it sends: one copy per attempt
		meta := map[string]any{}
		if sink.token != "" {
			meta["progressToken"] = sink.token
		}
		if r.Log != nil && s.logging() {
			if s.info.ProtocolVersion >= statelessProtocolVersion {
				meta[mcp.MetaKeyLogLevel] = RelayLogLevel
			} else {
				s.enableLogging(ctx, p)
			}
		}
		if len(meta) > 0 {
			up.Meta = meta
		}
		var err error
		res, err = s.cs.CallTool(ctx, &up)
		return err
	})
	return res, err
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

type sinkKey struct{}

func sinkFrom(ctx context.Context) *relaySink {
	s, _ := ctx.Value(sinkKey{}).(*relaySink)
	return s
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

// deliver decodes one SSE event's data and hands a matching notification to the Relay.
func (s *relaySink) deliver(data []byte) {
	if !bytes.Contains(data, []byte(`"notifications/`)) {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.ID != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	switch msg.Method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if s.r.Progress == nil || s.token == "" || json.Unmarshal(msg.Params, &p) != nil {
			return
		}
		if tok, ok := p.ProgressToken.(string); !ok || tok != s.token {
			return
		}
		p.ProgressToken = nil
		s.r.Progress(&p)
	case "notifications/message":
		var m mcp.LoggingMessageParams
		if s.r.Log != nil && json.Unmarshal(msg.Params, &m) == nil && m.Level != "" {
			s.r.Log(&m)
		}
	}
}

// sseTap passes an upstream's SSE response body through unchanged while parsing its
// events, delivering each one's data to the sink before go-sdk reads the bytes that follow.
type sseTap struct {
	rc   io.ReadCloser
	sink *relaySink

	line    []byte // the current line, without its end
	data    []byte // the current event's data lines, joined with '\n'
	hasData bool
	skip    bool // the current event's data passed maxRelayEvent
	lineCR  bool // the previous byte was '\r' (a "\r\n" ends one line)
}

func (t *sseTap) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	for _, c := range p[:n] {
		switch {
		case c == '\n' && t.lineCR:
			t.lineCR = false
		case c == '\r' || c == '\n':
			t.lineCR = c == '\r'
			t.endLine()
		default:
			t.lineCR = false
			if len(t.line) <= maxRelayEvent {
				t.line = append(t.line, c)
			}
		}
	}
	return n, err
}

// endLine handles one complete line (SSE: a blank line dispatches the event).
func (t *sseTap) endLine() {
	line := t.line
	t.line = t.line[:0]
	if len(line) == 0 {
		if t.hasData && !t.skip {
			t.sink.deliver(t.data)
		}
		t.data, t.hasData, t.skip = t.data[:0], false, false
		return
	}
	v, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || t.skip {
		return
	}
	v = bytes.TrimPrefix(v, []byte(" "))
	if t.hasData {
		t.data = append(t.data, '\n')
	}
	t.hasData = true
	if len(line) > maxRelayEvent || len(t.data)+len(v) > maxRelayEvent {
		t.skip = true
		return
	}
	t.data = append(t.data, v...)
}

func (t *sseTap) Close() error { return t.rc.Close() }
