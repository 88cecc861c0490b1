package gateway

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Notification relay (single-server endpoint). An upstream may send notifications/progress
// and notifications/message while a tools/call runs. The gateway is stateless and its
// responses are buffered, so it relays them the one way a buffered Streamable HTTP
// response can: a text/event-stream body holding the notification events in the order the
// upstream sent them, followed by the response event. The rule:
//
//   - only on the single-server endpoint, for a tools/call of a proxied tool, when the
//     client accepts text/event-stream (go-sdk requires that of every POST anyway);
//   - progress only when the request carries _meta.progressToken; it is relayed under that
//     token (upstream, the pool uses a per-call token of its own: mcpclient.Relay);
//   - log messages at level info and above — the level go-sdk's stateless servers give a
//     client at initialize-era versions, where a logging/setLevel request cannot outlive
//     its own POST — or, at 2026-07-28, at the request's _meta log level and only when it
//     names one;
//   - the answer stays application/json, byte for byte as before, when nothing was
//     relayed: the aggregate endpoint, lists, and calls without notifications (the tools/call
//     fast path and the tools/list replay included) are unchanged. The conversion happens
//     on the buffered answer (limitedWriter.relay), so both the fast path and go-sdk's
//     path produce the same bytes.
//
// Notifications are attributed by the upstream stream they arrive on (mcpclient.Relay),
// never by timing, so a concurrent call by another principal or on another connection,
// even on the same pooled upstream session, never sees them.

// relayed collects one request's relayed notifications, encoded as JSON-RPC messages.
type relayed struct {
	mu     sync.Mutex
	events [][]byte
	size   int // bytes held in events
}

// maxRelayedBytes bounds what one request keeps of relayed notifications: an upstream
// may send notifications without end while a call runs (up to the call timeout), and
// more than the response limit could never be sent anyway (limitedWriter.relay).
const maxRelayedBytes = maxResponseBytes

func (r *relayed) add(method string, params any) {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.size+len(b) > maxRelayedBytes {
		return // dropped, as limitedWriter.relay would drop them all
	}
	r.size += len(b)
	r.events = append(r.events, b)
}

func (r *relayed) take() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events, r.size = nil, 0
	return ev
}

// logLevels are MCP's logging levels, least severe first (RFC 5424 order).
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// relayFor returns the mcpclient.Relay for a proxied call under st whose params carry
// rawMeta (the request's _meta, nil when absent), or nil when nothing is to be relayed
// (see the rule above).
func relayFor(st *requestState, rawMeta json.RawMessage) *mcpclient.Relay {
	if st.single == nil || !st.acceptsSSE || st.relay == nil {
		return nil
	}
	var meta map[string]any
	if len(rawMeta) > 0 {
		_ = json.Unmarshal(rawMeta, &meta)
	}
	r := &mcpclient.Relay{}
	if tok := meta[progressTokenKey]; tok != nil {
		r.Progress = func(p *mcp.ProgressNotificationParams) {
			c := *p
			c.ProgressToken = tok
			st.relay.add("notifications/progress", &c)
		}
	}
	least := mcp.LoggingLevel("info")
	if st.newProtocol {
		s, _ := meta[mcp.MetaKeyLogLevel].(string)
		least = mcp.LoggingLevel(s)
	}
	if floor := slices.Index(logLevels, least); floor >= 0 {
		r.Log = func(m *mcp.LoggingMessageParams) {
			if slices.Index(logLevels, m.Level) >= floor {
				st.relay.add("notifications/message", m)
			}
		}
	}
	if r.Progress == nil && r.Log == nil {
		return nil
	}
	return r
}

// progressTokenKey is the _meta key of a request's progress token.
const progressTokenKey = "progressToken"

// acceptable reports which answer types an Accept header list allows (RFC 9110 §12.5.1:
// a missing header allows any; */*, application/* and text/* ranges count; q=0 excludes).
// The gateway answers JSON when allowed, else a one-event text/event-stream (MCP
// Streamable HTTP allows either for a POST); only a list allowing neither is refused (406).
func acceptable(values []string) (jsonOK, sseOK bool) {
	if len(values) == 0 {
		return true, true
	}
	seen := false
	for _, v := range values {
		for _, raw := range strings.Split(v, ",") {
			if strings.TrimSpace(raw) == "" {
				continue
			}
			seen = true
			mt, params, err := mime.ParseMediaType(raw)
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			switch mt {
			case "*/*":
				jsonOK, sseOK = true, true
			case "application/*", "application/json":
				jsonOK = true
			case "text/*", "text/event-stream":
				sseOK = true
			}
		}
	}
	if !seen {
		return true, true
	}
	return jsonOK, sseOK
}

// relay turns a buffered 200 application/json answer into a text/event-stream body: one
// "message" event per relayed notification, then the answer's own event. Nothing changes
// when events is empty, the answer is not such a JSON body, or the result would pass the
// size limit (the notifications are then dropped, the answer kept).
//
// force makes the conversion happen without events too: the client allows only
// text/event-stream.
func (w *limitedWriter) relay(events [][]byte, force bool) {
	if (len(events) == 0 && !force) || w.tooBig || w.flushed || w.status != http.StatusOK || w.buf.Len() == 0 ||
		w.Header().Get("Content-Type") != "application/json" {
		return
	}
	var out bytes.Buffer
	for _, ev := range events {
		writeEvent(&out, ev)
	}
	writeEvent(&out, bytes.TrimSpace(w.buf.Bytes()))
	if out.Len() > w.limit {
		return
	}
	w.buf = out
	w.Header().Set("Content-Type", "text/event-stream")
}

// writeEvent writes data as one SSE "message" event (a data line per line of data).
func writeEvent(out *bytes.Buffer, data []byte) {
	out.WriteString("event: message\n")
	for line := range bytes.Lines(data) {
		out.WriteString("data: ")
		out.Write(bytes.TrimRight(line, "\r\n"))
		out.WriteByte('\n')
	}
	out.WriteByte('\n')
}
