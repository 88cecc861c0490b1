// Package request holds what one MCP request resolved at the gateway's edge before it is
// dispatched — caller, workspace, project, chat, toolsets, catalog snapshot, protocol
// revision, deadline — and the notifications relayed to it. The edge (package gateway)
// fills a State per POST; the built-in tools (package builtin) and the forwarding path
// (package forward) read it. Nothing here does I/O.
package request

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
)

// State is everything one MCP request resolved before dispatch. The edge sets every field
// before any handler runs; handlers treat it as read-only (Relay is safe for concurrent
// use).
type State struct {
	Principal *auth.Principal
	Workspace string
	ProjectID string   // explicit X-Project-Id / ?project=, "" when none
	Toolsets  []string // selected toolsets, sorted and deduplicated; nil = all
	// ChatID is the request's X-Chat-Id / ?chat=, set only once the edge found it to be a
	// chat of Workspace (else the request fails); "" when none. Audit rows carry it.
	ChatID string
	// Allowed holds the connection ids a chat's pins allow (docs/DESIGN.md §7); nil = all.
	Allowed map[string]bool
	// Single is the connection of the single-server endpoint; nil on the aggregate one.
	Single   *catalog.Connection
	Snapshot *catalog.Snapshot
	// RequestID is the Lambda (or generated) request id: logs, metrics and audit rows
	// carry it.
	RequestID string
	// Deadline is the request's own deadline (the Lambda deadline); zero when none.
	Deadline time.Time
	// Version is the request's Mcp-Protocol-Version header ("" when absent);
	// NewProtocol is set for 2026-07-28 (sessionless) requests.
	Version     string
	NewProtocol bool
	// AcceptsSSE: the client accepts text/event-stream. Relay collects the notifications
	// relayed from upstreams during the request (single-server endpoint only; nil
	// elsewhere).
	AcceptsSSE bool
	Relay      *Relayed
	// Listable, when set (the workspace has access policies, docs/POLICIES.md), reports
	// whether the policies' "list" decision shows the caller tool t of connection c (or the
	// built-in named builtin, with c and t nil); nil shows everything the roles allow.
	Listable func(c *catalog.Connection, t *catalog.Tool, builtin string) bool
}

type stateKey struct{}

// With returns ctx carrying st.
func With(ctx context.Context, st *State) context.Context {
	return context.WithValue(ctx, stateKey{}, st)
}

// From returns the State ctx carries, or nil.
func From(ctx context.Context) *State {
	s, _ := ctx.Value(stateKey{}).(*State)
	return s
}

// Visible reports whether connection c's tools are served to st on the aggregate
// endpoint: global and workspace connections always, project-scoped ones only for that
// project, and with a chat only the pins' resolved set (docs/DESIGN.md §7).
func (st *State) Visible(c *catalog.Connection) bool {
	if c.Scope == "project" && c.ProjectID != st.ProjectID {
		return false
	}
	return st.Allowed == nil || st.Allowed[c.ID]
}

// WithDeadline re-applies st's deadline less 1 s, which go-sdk does not pass to tool
// handlers, so that a handler's Postgres queries end with the request instead of outliving
// it. At least 100 ms is left. Without a deadline ctx is returned as it is.
func (st *State) WithDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if st == nil || st.Deadline.IsZero() {
		return ctx, func() {}
	}
	dl := st.Deadline.Add(-time.Second)
	if time.Until(dl) < 100*time.Millisecond {
		dl = time.Now().Add(100 * time.Millisecond)
	}
	return context.WithDeadline(ctx, dl)
}

// MaxRelayedBytes bounds what one request keeps of relayed notifications (5 MiB, the
// response limit): an upstream may send notifications without end while a call runs, and
// more than the response limit could never be sent anyway.
const MaxRelayedBytes = 5 << 20

// Relayed collects one request's relayed notifications, each encoded as a JSON-RPC
// notification message, in arrival order. The zero value is ready to use.
type Relayed struct {
	mu     sync.Mutex
	events [][]byte
	size   int // bytes held in events
}

// Add encodes the notification {method, params} and keeps it, unless that would pass
// MaxRelayedBytes (then it is dropped) or params cannot be encoded.
func (r *Relayed) Add(method string, params any) {
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
	if r.size+len(b) > MaxRelayedBytes {
		return
	}
	r.size += len(b)
	r.events = append(r.events, b)
}

// Take returns the kept notifications and empties r.
func (r *Relayed) Take() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events, r.size = nil, 0
	return ev
}
