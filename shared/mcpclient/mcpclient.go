package mcpclient

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
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

// entry is one connection id's slot: flight is the connect in progress (one at a time;
// every caller of its configuration shares its outcome), failed the last connect's
// remembered failure, sess the live session. All guarded by Pool.mu.
type entry struct {
	flight  *flight
	failed  *failure
	sess    *session     // guarded by Pool.mu
	lastKey string       // configKey of the last session that connected; guarded by Pool.mu
	last    Info         // what worked for it, reused on reconnect; guarded by Pool.mu
	tune    *versionTune // protocol version by measurement (tune.go); guarded by Pool.mu
}

// flight is one connect in progress for an entry: done is closed once it ended, err is its
// failure (nil: the session is the entry's).
type flight struct {
	key  string // configKey of the target it connects
	done chan struct{}
	err  error
}

// failure is a remembered failed connect (Options.FailureMemory).
type failure struct {
	key   string // configKey it failed with
	err   *apperr.Error
	at    time.Time
	until time.Time
}

type session struct {
	key         string
	cs          *mcp.ClientSession
	info        Info
	rt          *roundTripper
	url         string       // the upstream endpoint (forward.go posts to it)
	http        *http.Client // the session's HTTP client (guarded dialer, declared headers)
	maxEvent    int          // bound of one SSE event read by forward.go
	raw         *rawConn     // legacy SSE only: the connection forwarded requests travel on
	cancel      context.CancelFunc
	connectedAt time.Time
	lastUsed    atomic.Int64 // unix nanoseconds
	dead        atomic.Bool  // the connection ended (upstream closed it or it failed)
	inflight    atomic.Int32 // calls running on the session (do)
	retired     atomic.Bool  // replaced while calls ran: closed when the last one ends
	closeOnce   sync.Once
	logOnce     sync.Once // logging/setLevel sent for a relaying call (relay.go)
	// tasks are the upstream's own tasks created on this session and not yet seen to end
	// (tasks.go): upstream task id → until when it keeps the session from eviction.
	tasksMu sync.Mutex
	tasks   map[string]time.Time
}

// retire closes s once no call runs on it (now, if none does): a session replaced by the
// version measurement keeps serving the calls already sent on it.
func (s *session) retire() {
	s.retired.Store(true)
	if s.inflight.Load() == 0 {
		s.close()
	}
}

// begin and end bracket one call on s (see retire).
func (s *session) begin() { s.inflight.Add(1) }
func (s *session) end() {
	if s.inflight.Add(-1) == 0 && s.retired.Load() {
		s.close()
	}
}

func (s *session) close() {
	s.closeOnce.Do(func() {
		_ = s.cs.Close()
		s.cancel()
	})
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

// forgetFailure forgets the remembered failed connect of t's connection and configuration.
func (p *Pool) forgetFailure(t Target) {
	if t.ConnectionID == "" {
		return
	}
	key := configKey(t)
	p.mu.Lock()
	if e := p.conns[t.ConnectionID]; e != nil && e.failed != nil && e.failed.key == key {
		e.failed = nil
	}
	p.mu.Unlock()
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

// session returns the cached live session for t, or connects one, with the call counted in
// (s.begin); the caller ends it with s.end. A live session of t's configuration is taken
// under p.mu alone. Without one, one connect runs per connection at a time (a flight):
// every caller of the same configuration waits for it and shares its outcome (the session,
// or its error), so N concurrent callers of a hanging upstream all have their answer after
// one connect timeout, not N; a caller of another configuration waits for it to end and
// then connects its own. A caller's context ends only its own wait: the connect itself runs
// detached from any one caller, bounded by ConnectTimeout. A connect that failed with
// UPSTREAM_TIMEOUT or UPSTREAM_UNAVAILABLE is remembered for FailureMemory: calls of that
// configuration in the window fail at once (recentFailure).
func (p *Pool) session(ctx context.Context, t Target) (*session, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	if t.ConnectionID == "" {
		s, err := p.connect(ctx, t)
		if err == nil {
			s.begin()
		}
		return s, err
	}
	key := configKey(t)
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, apperr.New(apperr.UpstreamUnavailable, "upstream client is shut down")
		}
		e := p.conns[t.ConnectionID]
		if e == nil {
			e = &entry{}
			p.conns[t.ConnectionID] = e
		}
		if s := e.sess; s != nil && s.key == key && !s.dead.Load() {
			s.begin() // under p.mu: a retirement cannot close it before the call starts
			p.mu.Unlock()
			return s, nil
		}
		f := e.flight
		if f == nil {
			if fl := e.failed; fl != nil && fl.key == key && p.now().Before(fl.until) {
				p.mu.Unlock()
				return nil, recentFailure(fl, p.now())
			}
			f = p.startFlightLocked(ctx, e, t, key)
		}
		p.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctxError(ctx, "waiting for a connect to this upstream")
		}
		if f.key == key && f.err != nil {
			return nil, f.err // the outcome every caller of this connect shares
		}
		// Connected (the session is the entry's: take it above), or the connect was for
		// another configuration: look again.
	}
}

// startFlightLocked starts the connect of t (configuration key) for entry e and returns its
// flight; p.mu is held. The connect runs in its own goroutine on a context detached from
// ctx's cancellation (its values kept), so that no caller's departure fails the others.
func (p *Pool) startFlightLocked(ctx context.Context, e *entry, t Target, key string) *flight {
	f := &flight{key: key, done: make(chan struct{})}
	e.flight = f
	old := e.sess
	e.sess = nil
	if e.lastKey != key {
		e.tune = nil // a new configuration is measured afresh
	} else if e.tune != nil && e.tune.offer() != "" {
		t.ProtocolVersion = e.tune.offer()
	}
	if e.lastKey == key {
		// Reconnecting the same configuration: go straight to what worked last time.
		if t.Remembered == "" {
			t.Remembered = e.last.Transport
		}
		if t.ProtocolVersion == "" {
			t.ProtocolVersion = e.last.ProtocolVersion
		}
	}
	if old != nil {
		go old.retire() // config changed or connection ended: closed once its calls end
	}
	cctx := context.WithoutCancel(ctx)
	go func() {
		s, err := p.connect(cctx, t)
		p.mu.Lock()
		e.flight = nil
		var victims []*session
		switch {
		case err != nil:
			f.err = err
			if ae := apperr.As(err); ae != nil && p.opts.FailureMemory > 0 &&
				(ae.Code == apperr.UpstreamTimeout || ae.Code == apperr.UpstreamUnavailable) {
				now := p.now()
				e.failed = &failure{key: key, err: ae, at: now, until: now.Add(p.opts.FailureMemory)}
			}
		case p.closed:
			f.err = apperr.New(apperr.UpstreamUnavailable, "upstream client is shut down")
		default:
			e.sess, e.failed = s, nil
			e.lastKey, e.last = key, s.info
			victims = p.overBudgetLocked(s)
		}
		p.mu.Unlock()
		close(f.done)
		if err == nil && f.err != nil {
			s.close()
		}
		if len(victims) > 0 {
			p.evictions.Add(int64(len(victims)))
			for _, v := range victims {
				go v.retire()
			}
		}
	}()
	return f
}

// recentFailure is the answer to a call made while fl is remembered: fl's code (retryable)
// and message, saying when the connect failed and when the next one may run; its Failure
// (stage) is fl's. now is the pool's clock.
func recentFailure(fl *failure, now time.Time) *apperr.Error {
	e := apperr.Wrap(fl.err, fl.err.Code, "%s (the last connect failed %s ago; the next one runs in %s)",
		fl.err.Message, now.Sub(fl.at).Round(100*time.Millisecond), fl.until.Sub(now).Round(100*time.Millisecond)).
		WithHint("try again in a few seconds")
	if f := FailureOf(fl.err); f != nil {
		e = e.WithDetails(&Failure{Stage: f.Stage, HTTPStatus: f.HTTPStatus, Hint: e.Hint})
	}
	return e
}

// SessionBytes is the estimated heap of one cached live session (go-sdk client session,
// its HTTP client and round tripper, the pool's bookkeeping), measured with 15,000
// streamable sessions on loopback (cmd/bench -only workspaces): about 9 kB; rounded up.
const SessionBytes = 16 << 10

// overBudgetLocked returns, when the cached sessions (kept among them) weigh more than
// MaxSessionBytes, as many of the least recently used evictable sessions as it takes to
// get back under it (or every evictable one, when that is not enough), each forgotten from
// its entry; nil otherwise. Evictable: not kept, no call in flight, and no live upstream
// task tied to it (tasks.go) — so the pool can stay above the bound while calls or tasks
// hold its sessions, and the first connect after they end brings it back under, closing
// as many idle sessions as that takes, not just one. It visits every entry and sorts the
// candidates: it runs after a connect only, whose handshake costs far more. p.mu is held.
func (p *Pool) overBudgetLocked(kept *session) []*session {
	if p.opts.MaxSessionBytes <= 0 {
		return nil
	}
	live := 0
	for _, e := range p.conns {
		if e.sess != nil {
			live++
		}
	}
	over := live - int(p.opts.MaxSessionBytes/SessionBytes)
	if over <= 0 {
		return nil
	}
	now := time.Now()
	var cand []*entry
	for _, e := range p.conns {
		s := e.sess
		if s == nil || s == kept || s.inflight.Load() > 0 || s.holdsTask(now) {
			continue
		}
		cand = append(cand, e)
	}
	slices.SortFunc(cand, func(a, b *entry) int { return cmp.Compare(a.sess.lastUsed.Load(), b.sess.lastUsed.Load()) })
	victims := make([]*session, 0, min(over, len(cand)))
	for _, e := range cand[:min(over, len(cand))] {
		victims = append(victims, e.sess)
		e.sess = nil
	}
	return victims
}

// SessionStats reports the cached live sessions, the bytes they are estimated at
// (SessionBytes each), the bound, and how many sessions were closed to stay under it.
func (p *Pool) SessionStats() (sessions int, bytes, maxBytes int64, evictions int64) {
	p.mu.Lock()
	for _, e := range p.conns {
		if e.sess != nil {
			sessions++
		}
	}
	p.mu.Unlock()
	return sessions, int64(sessions) * SessionBytes, p.opts.MaxSessionBytes, p.evictions.Load()
}

// drop forgets s if it is still connectionID's session, and closes it.
func (p *Pool) drop(connectionID string, s *session) {
	p.mu.Lock()
	if e := p.conns[connectionID]; e != nil && e.sess == s {
		e.sess = nil
	}
	p.mu.Unlock()
	s.dead.Store(true)
	go s.close()
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
