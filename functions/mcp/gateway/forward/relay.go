//lint:file-ignore SA1019 MCP logging is deprecated as of 2026-07-28 (SEP-2577); the gateway still relays and advertises it for the revisions before, which define it.

package forward

import (
	"encoding/json"
	"slices"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Notification relay. An upstream may send notifications/progress and
// notifications/message while a tools/call runs. The gateway is stateless and its
// responses are buffered, so it relays them the one way a buffered Streamable HTTP
// response can: a text/event-stream body holding the notification events in the order the
// upstream sent them, followed by the response event. The rule:
//
//   - for a tools/call of a proxied tool, when the client accepts text/event-stream
//     (go-sdk requires that of every POST anyway);
//   - progress only when the request carries _meta.progressToken; it is relayed under that
//     token (upstream, the pool uses a per-call token of its own: mcpclient.Relay), on both
//     endpoints: the caller asked for it on this very request (MCP "Progress": the
//     receiver MAY send progress for a request that carries a token), and the conformance
//     scenario tools-call-with-progress requires it;
//   - on the single-server endpoint only, log messages at level info and above — the level
//     go-sdk's stateless servers give a client at initialize-era versions, where a
//     logging/setLevel request cannot outlive its own POST — or, at 2026-07-28, at the
//     request's _meta log level and only when it names one. The aggregate endpoint's
//     logging capability is the gateway's own (one server in front of many upstreams), so
//     an upstream's log messages are not relayed there;
//   - the answer stays application/json, byte for byte as before, when nothing was
//     relayed: lists, calls without notifications and aggregate calls without a progress
//     token (the tools/call fast path and the tools/list replay included) are unchanged. The conversion happens
//     on the buffered answer (the edge's response writer), so both the fast path and go-sdk's
//     path produce the same bytes.
//
// Notifications are attributed by the upstream stream they arrive on (mcpclient.Relay),
// never by timing, so a concurrent call by another principal or on another connection,
// even on the same pooled upstream session, never sees them.

// logLevels are MCP's logging levels, least severe first (RFC 5424 order).
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// relayFor returns the mcpclient.Relay for a proxied call under st whose params carry
// rawMeta (the request's _meta, nil when absent), or nil when nothing is to be relayed
// (see the rule above).
func relayFor(st *request.State, rawMeta json.RawMessage) *mcpclient.Relay {
	if !st.AcceptsSSE || st.Relay == nil {
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
			st.Relay.Add("notifications/progress", &c)
		}
	}
	least := mcp.LoggingLevel("info")
	if st.Single == nil {
		least = "" // the aggregate endpoint relays no upstream log messages (see above)
	} else if st.NewProtocol {
		s, _ := meta[mcp.MetaKeyLogLevel].(string)
		least = mcp.LoggingLevel(s)
	}
	if floor := slices.Index(logLevels, least); floor >= 0 {
		r.Log = func(m *mcp.LoggingMessageParams) {
			if slices.Index(logLevels, m.Level) >= floor {
				st.Relay.Add("notifications/message", m)
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
