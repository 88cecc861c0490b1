package mcpclient

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport names, as stored on connections and catalog entries (docs/DESIGN.md §3).
const (
	TransportStreamable = "streamable-http"
	TransportSSE        = "sse"
)

// Defaults of Options (docs/DESIGN.md §6).
const (
	DefaultConnectTimeout   = 10 * time.Second
	DefaultCallTimeout      = 25 * time.Second
	DefaultMaxResponseBytes = 5 << 20 // 5 MiB
	DefaultMaxPages         = 100
	DefaultUserAgent        = "agentpack-gateway/1.0"
	// DefaultFailureMemory is how long a connect that timed out or found the upstream
	// unreachable is remembered (Options.FailureMemory).
	DefaultFailureMemory = 5 * time.Second
)

// statelessProtocolVersion is the first MCP version without an initialize handshake
// (server/discover, per-request _meta).
const statelessProtocolVersion = "2026-07-28"

// Target is one upstream connection as the caller knows it.
type Target struct {
	// ConnectionID keys the session cache and the connect lock. "" means a one-shot session:
	// connected for this call only, never cached (e.g. testing a connection not yet saved).
	ConnectionID string
	// URL is the upstream MCP endpoint; checked with the Pool's urlguard at every connect.
	URL string
	// Transport is the declared transport: "streamable-http" (or "") or "sse".
	Transport string
	// Remembered is the transport that last worked (Info.Transport), or "": tried first.
	Remembered string
	// ProtocolVersion is the protocol version last negotiated (Info.ProtocolVersion), or "".
	// One not newer than PreferredProtocolVersion is offered at connect as is (which skips
	// go-sdk's server/discover probe for older servers); a newer one or "" gets
	// PreferredProtocolVersion offered first.
	ProtocolVersion string
	// Headers are the connection's declared headers (secrets): the only headers added to
	// upstream requests. Re-validated with headers.Validate at connect.
	Headers map[string]string
	// Credentials, when set, supplies the upstream access token (upstream OAuth,
	// transport.go). Sessions are keyed by configKey: a per-user credential needs its own key.
	Credentials Credentials
}

// Info is what worked for a target: store Transport and ProtocolVersion on the connection
// and pass them back as Target.Remembered / Target.ProtocolVersion.
type Info struct {
	Transport       string // "streamable-http" or "sse"
	ProtocolVersion string // negotiated, e.g. "2025-11-25"
	ServerName      string // the upstream's serverInfo.name ("" if it sent none)
	ServerVersion   string // the upstream's serverInfo.version
	// Capabilities are the capabilities the upstream declared, as JSON (nil if none).
	Capabilities json.RawMessage
	// Dropped lists the tools ListTools left out because their schemas are unusable
	// (filled by ListTools only).
	Dropped []DroppedTool
	// Normalized lists the tools ListTools kept with a normalised inputSchema, and why
	// (filled by ListTools only).
	Normalized []DroppedTool
}

// DroppedTool is an upstream tool that ListTools left out, and why.
type DroppedTool struct {
	Name   string
	Reason string
}

// LiveStatus describes one cached session (Pool.Status), for the connections "statuses"
// endpoint (GET /statuses, live from this process's session cache).
type LiveStatus struct {
	ConnectionID string
	Info         Info
	ConnectedAt  time.Time
	LastUsedAt   time.Time
}

// Options configures a Pool; nil, or any zero field, means the default.
type Options struct {
	// Logger receives dropped-tool warnings and debug lines; nil discards.
	Logger *slog.Logger
	// Guard checks URLs and dialled addresses; nil is urlguard.New(nil) (strict, http+https).
	Guard *urlguard.Guard
	// ConnectTimeout bounds a connect (HTTP + MCP handshake, transport fallback included);
	// default 10 s.
	ConnectTimeout time.Duration
	// CallTimeout bounds one call (or a whole ListTools, all pages); default 25 s. A caller's
	// earlier deadline wins.
	CallTimeout time.Duration
	// MaxResponseBytes caps each response body (each event, for SSE streams); default 5 MiB.
	MaxResponseBytes int64
	// MaxPages caps tools/list pagination; default 100.
	MaxPages int
	// MaxSessionBytes bounds the cached live sessions at SessionBytes each (0: unbounded):
	// when a new session would pass it, the least recently used idle session is closed
	// (its connection reconnects on its next call). The gateway derives it from the
	// function's memory (package budget; docs/CATALOG.md "Many workspaces per instance").
	MaxSessionBytes int64
	// UserAgent is sent upstream; default "agentpack-gateway/1.0".
	UserAgent string
	// FixedVersion turns off the protocol version measurement (tune.go): every session
	// stays on the version negotiated at connect.
	FixedVersion bool
	// ClientInfo is the MCP clientInfo; default {Name: "agentpack-gateway", Version: "1.0.0"}.
	ClientInfo *mcp.Implementation
	// FailureMemory is how long a connect that failed with UPSTREAM_TIMEOUT or
	// UPSTREAM_UNAVAILABLE (a hanging, dead or overloaded upstream) is remembered for its
	// connection and configuration: calls in that window fail at once with the same code
	// (retryable) instead of waiting out another connect. Default DefaultFailureMemory;
	// negative: nothing is remembered. Disconnect (a connection test, an update) and a
	// successful Ping (the health check) forget it at once.
	FailureMemory time.Duration
}

// Pool connects to upstream MCP servers and caches their sessions. Safe for concurrent use.
// Create one per process with New; Close it on shutdown.
type Pool struct {
	opts   Options
	log    *slog.Logger
	client *mcp.Client

	mu     sync.Mutex
	conns  map[string]*entry
	closed bool

	// refused holds the configKeys whose upstream refused PreferredProtocolVersion.
	refused sync.Map
	// evictions counts sessions closed to stay under MaxSessionBytes.
	evictions atomic.Int64
	// now is the clock of the failure memory (tests set it).
	now func() time.Time
}

// New returns a Pool with opts (nil: all defaults).
func New(opts *Options) *Pool {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Guard == nil {
		o.Guard = urlguard.New(nil)
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.ClientInfo == nil {
		o.ClientInfo = &mcp.Implementation{Name: "agentpack-gateway", Version: "1.0.0"}
	}
	if o.FailureMemory == 0 {
		o.FailureMemory = DefaultFailureMemory
	}
	return &Pool{
		opts:   o,
		log:    o.Logger,
		client: mcp.NewClient(o.ClientInfo, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}),
		conns:  map[string]*entry{},
		now:    time.Now,
	}
}

// ListTools lists the upstream's tools, following nextCursor (at most MaxPages pages; a
// repeated cursor is an error), on the cached session. Each Tool keeps the upstream's whole
// definition (Tool.Definition, byte for byte). Tools whose inputSchema (or outputSchema) is
// unusable — not a JSON object, root type not "object", not compilable — and unnamed or
// duplicate tools are dropped with a logged reason and reported in Info.Dropped; the rest
// are returned in upstream order (docs/DESIGN.md §6). Errors: see the package doc.
func (p *Pool) ListTools(ctx context.Context, t Target) ([]Tool, Info, error) {
	var tools []Tool
	var info Info
	err := p.do(ctx, t, func(ctx context.Context, s *session) error {
		all, err := p.listAll(ctx, s, "tools/list", 0, nil)
		if err != nil {
			return err
		}
		info = s.info
		tools, info.Dropped, info.Normalized = usableTools(all)
		for _, d := range info.Dropped {
			p.log.WarnContext(ctx, "mcpclient: dropping upstream tool",
				"connection_id", t.ConnectionID, "tool", d.Name, "reason", d.Reason)
		}
		for _, d := range info.Normalized {
			p.log.InfoContext(ctx, "mcpclient: normalised an upstream tool's inputSchema",
				"connection_id", t.ConnectionID, "tool", d.Name, "reason", d.Reason)
		}
		return nil
	})
	if err != nil {
		return nil, Info{}, err
	}
	return tools, info, nil
}

// CallTool forwards one tools/call with the upstream's own tool name and decodes the
// upstream result into go-sdk's type (a tool error is a result with IsError, not an
// error): a convenience for callers that read the result. The gateway forwards bytes
// with Forward instead. A JSON-RPC error from the upstream (unknown tool, -32602, ...)
// comes back as UPSTREAM_ERROR wrapping the *jsonrpc.Error: see RPCError.
func (p *Pool) CallTool(ctx context.Context, t Target, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return p.CallToolRelay(ctx, t, params, nil)
}

// Ping connects afresh (never the cached session, and without caching the new one), sends
// ping, and closes: the health check's liveness exchange (docs/DESIGN.md §9a). The connect timeout
// applies to the handshake and the call timeout to the ping. With a 2026-07-28 upstream the
// completed server/discover is the exchange and no ping is sent (see the code for why). A
// successful connect forgets the connection's remembered failed connect (FailureMemory):
// the health check seeing the upstream back lets calls reach it at once.
func (p *Pool) Ping(ctx context.Context, t Target) (Info, error) {
	if err := p.checkOpen(); err != nil {
		return Info{}, err
	}
	s, err := p.connect(ctx, t)
	if err != nil {
		return Info{}, err
	}
	defer s.close()
	p.forgetFailure(t) // the upstream answers again: calls need not wait out FailureMemory
	if s.info.ProtocolVersion >= statelessProtocolVersion {
		// The stateless protocol has no ping to speak of: go-sdk v1.8.0's Ping omits the
		// _meta protocolVersion such servers require (they answer 400), and server/discover,
		// which Connect just completed, is that version's liveness exchange.
		return s.info, nil
	}
	callCtx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	pr := &probe{}
	if err := s.cs.Ping(withProbe(callCtx, pr), nil); err != nil {
		return Info{}, p.classify(ctx, callCtx, err, pr, s, "ping")
	}
	return s.info, nil
}

// Disconnect closes and forgets connectionID's cached session, if any (e.g. after the
// connection is updated, disabled or deleted), and its remembered failed connect
// (FailureMemory), so that the next call (a connection test's) connects afresh. It waits for the close (≤ 5 s: go-sdk's
// best-effort DELETE).
func (p *Pool) Disconnect(connectionID string) {
	p.mu.Lock()
	e := p.conns[connectionID]
	var s *session
	if e != nil {
		s, e.sess = e.sess, nil
		e.failed = nil // the next call connects afresh (a connection test, an update)
	}
	p.mu.Unlock()
	if s != nil {
		s.close()
	}
}

// Close closes every cached session; later calls fail with UPSTREAM_UNAVAILABLE. It always
// returns nil (the error is for io.Closer).
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	var all []*session
	for _, e := range p.conns {
		if e.sess != nil {
			all = append(all, e.sess)
			e.sess = nil
		}
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(s.close)
	}
	wg.Wait()
	p.opts.Guard.Transport().CloseIdleConnections()
	return nil
}

// Status lists the cached live sessions, sorted by connection id.
func (p *Pool) Status() []LiveStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []LiveStatus
	for id, e := range p.conns {
		if s := e.sess; s != nil && !s.dead.Load() {
			out = append(out, LiveStatus{
				ConnectionID: id, Info: s.info, ConnectedAt: s.connectedAt,
				LastUsedAt: time.Unix(0, s.lastUsed.Load()),
			})
		}
	}
	slices.SortFunc(out, func(a, b LiveStatus) int { return cmp.Compare(a.ConnectionID, b.ConnectionID) })
	return out
}

func (p *Pool) checkOpen() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return apperr.New(apperr.UpstreamUnavailable, "upstream client is shut down")
	}
	return nil
}

// PreferredProtocolVersion is the protocol version the pool offers an upstream first, even
// one that negotiated a newer version before (Target.ProtocolVersion "2026-07-28"): on this
// version a session is initialised once and reused, and go-sdk v1.8.0 spends ~0.17 ms and
// ~245 allocations less per call than on 2026-07-28 (per-request _meta, server/discover;
// BenchmarkDirectEcho). An upstream that refuses it (HTTP 400 or a JSON-RPC error to
// initialize) is connected again at once with go-sdk's newest version, and the pool
// remembers the refusal for that configuration (url, transport, headers) so later connects
// go straight to the newest. A remembered version older than this one is offered as is.
// Info.ProtocolVersion reports what was negotiated; store it on the connection.
const PreferredProtocolVersion = "2025-11-25"
