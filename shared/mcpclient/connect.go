package mcpclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/agentpack/gateway/shared/text"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// configKey hashes what identifies a session's configuration: url, declared transport and
// headers (values included, hashed: never stored or logged in clear).
func configKey(t Target) string {
	h := sha256.New()
	write := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	write(t.URL)
	write(normTransport(t.Transport))
	names := make([]string, 0, len(t.Headers))
	for n := range t.Headers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		write(n)
		write(t.Headers[n])
	}
	// A credential names whose token it is (a per-user grant): its own session.
	if id, ok := t.Credentials.(interface{ ID() string }); ok {
		write("credentials")
		write(id.ID())
	}
	return hex.EncodeToString(h.Sum(nil))
}

func normTransport(s string) string {
	if s == "" {
		return TransportStreamable
	}
	return s
}

// connect validates t and connects, trying transports in order (D-09).
func (p *Pool) connect(ctx context.Context, t Target) (*session, error) {
	if err := p.opts.Guard.CheckURL(t.URL); err != nil {
		msg := "the connection's URL is not allowed"
		if e := apperr.As(err); e != nil {
			msg += ": " + e.Message
		}
		return nil, apperr.Wrap(err, apperr.UpstreamError, "%s", msg)
	}
	if err := headers.Validate(t.Headers); err != nil {
		msg := "the connection's headers are invalid"
		if e := apperr.As(err); e != nil {
			msg += ": " + e.Message
		}
		return nil, apperr.Wrap(err, apperr.UpstreamError, "%s", msg)
	}
	var order []string
	switch normTransport(t.Transport) {
	case TransportSSE:
		order = []string{TransportSSE}
	case TransportStreamable:
		if t.Remembered == TransportSSE {
			order = []string{TransportSSE, TransportStreamable}
		} else {
			order = []string{TransportStreamable, TransportSSE}
		}
	default:
		return nil, apperr.New(apperr.UpstreamError, "the connection's transport %q is not one of %q, %q",
			text.Clip(t.Transport, 32), TransportStreamable, TransportSSE)
	}
	deadline := time.Now().Add(p.opts.ConnectTimeout) // for all attempts together
	key := configKey(t)
	_, refused := p.refused.Load(key)
	version, preferred := offeredVersion(t.ProtocolVersion, refused)
	s, firstStatus, err := p.connectTransports(ctx, t, order, deadline, version)
	if err != nil && preferred && ctx.Err() == nil && time.Now().Before(deadline) &&
		(firstStatus == http.StatusBadRequest || (firstStatus >= 200 && firstStatus < 300)) {
		// The upstream may have refused the preferred version (HTTP 400, or a JSON-RPC error
		// such as -32022 to initialize): offer the newest, and remember when that worked.
		p.log.DebugContext(ctx, "mcpclient: connect offering the preferred protocol version failed; offering the newest",
			"connection_id", t.ConnectionID, "version", version, "status", firstStatus)
		if s, _, err = p.connectTransports(ctx, t, order, deadline, ""); err == nil {
			p.refused.Store(key, true)
		}
	}
	return s, err
}

// connectTransports tries the transports in order (D-09) offering version; firstStatus is
// the HTTP status that failed the first transport (0 when none).
func (p *Pool) connectTransports(ctx context.Context, t Target, order []string, deadline time.Time, version string) (_ *session, firstStatus int, _ error) {
	for i, transport := range order {
		s, status, fallback, err := p.connectOnce(ctx, t, transport, deadline, version)
		if i == 0 {
			firstStatus = status
		}
		if err == nil {
			if i > 0 {
				p.log.InfoContext(ctx, "mcpclient: transport fallback", "connection_id", t.ConnectionID,
					"from", order[0], "to", transport, "status", firstStatus)
			}
			return s, firstStatus, nil
		}
		if !fallback || i == len(order)-1 {
			if i == 0 {
				return nil, firstStatus, err
			}
			var e *apperr.Error
			if fallback {
				e = apperr.Wrap(err, apperr.UpstreamError,
					"upstream answered %d to %s and %d to %s: check the connection's URL and transport",
					firstStatus, order[0], status, transport)
			} else {
				e = apperr.Wrap(err, apperr.UpstreamError, "upstream answered %d to %s, and %s failed: %s",
					firstStatus, order[0], transport, apperr.Public(err).Message)
			}
			// The first transport's 404 says the most: no MCP endpoint at this path. The
			// fallback's answer to a path that is no MCP endpoint either (405 to the GET of a
			// POST-only route, a web page) must not hide the /mcp hint.
			if h := urlPathHint(t.URL); firstStatus == http.StatusNotFound && h != "" {
				return nil, firstStatus, withFailure(e.WithHint(h), StageHTTP, firstStatus)
			}
			return nil, firstStatus, e
		}
	}
	panic("unreachable")
}

// offeredVersion is the version to offer at connect given the remembered one and whether
// this configuration refused the preference before; preferred reports that the preference
// is being tried (so a refusal may be retried with the newest).
func offeredVersion(remembered string, refused bool) (version string, preferred bool) {
	switch {
	case remembered != "" && remembered <= PreferredProtocolVersion:
		return remembered, false
	case refused:
		return remembered, false // "" = go-sdk's newest (server/discover, then initialize)
	}
	return PreferredProtocolVersion, true
}

// connectOnce makes one connect attempt with one transport, offering version ("" = go-sdk's
// newest). fallback reports whether the failure is a 400/404/405/406 answer, the only ones
// that allow trying the other transport.
func (p *Pool) connectOnce(ctx context.Context, t Target, transport string, deadline time.Time, version string) (_ *session, status int, fallback bool, _ error) {
	rt := &roundTripper{
		base:      telemetry.Transport(p.opts.Guard.Transport()), // upstream-call span + traceparent
		headers:   t.Headers,
		userAgent: p.opts.UserAgent,
		maxBytes:  p.opts.MaxResponseBytes,
		sse:       transport == TransportSSE,
		creds:     t.Credentials,
	}
	httpClient := &http.Client{Transport: rt, CheckRedirect: urlguard.NoRedirect}
	maxEvent := int(p.opts.MaxResponseBytes) + 64<<10 // ours trips first, with a clear error
	var tr mcp.Transport
	var rawTr *rawTransport
	if transport == TransportSSE {
		rawTr = &rawTransport{Transport: &mcp.SSEClientTransport{Endpoint: t.URL, HTTPClient: httpClient, MaxEventSize: maxEvent}}
		tr = rawTr
	} else {
		tr = &mcp.StreamableClientTransport{
			Endpoint: t.URL, HTTPClient: httpClient, MaxEventSize: maxEvent,
			DisableStandaloneSSE: true, // nothing listens between calls in a Lambda
			MaxRetries:           2,
		}
	}

	// The SSE client's GET lives on the Connect context (docs/DESIGN.md §13), so the session gets a
	// context detached from the caller's and cancelled only by close; the connect deadline
	// and the caller's cancellation are applied by timers during Connect only.
	sessCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var timedOut atomic.Bool
	timer := time.AfterFunc(time.Until(deadline), func() { timedOut.Store(true); cancel() })
	stopCaller := context.AfterFunc(ctx, cancel)
	pr := &probe{}
	start := time.Now()
	cs, err := p.client.Connect(withProbe(sessCtx, pr), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	timer.Stop()
	stopCaller()
	if err == nil && (timedOut.Load() || ctx.Err() != nil) {
		_ = cs.Close()
		err = context.Canceled
	}
	if err != nil {
		cancel()
		st, _, _, _ := pr.snapshot()
		return nil, st, isFallbackStatus(st) && !timedOut.Load() && ctx.Err() == nil,
			p.classifyConnect(ctx, err, pr, rt, transport, timedOut.Load())
	}
	s := &session{cs: cs, rt: rt, cancel: cancel, connectedAt: time.Now(), key: configKey(t),
		url: t.URL, http: httpClient, maxEvent: maxEvent}
	if rawTr != nil {
		s.raw = rawTr.conn
	}
	s.lastUsed.Store(s.connectedAt.UnixNano())
	s.info = Info{Transport: transport}
	if ir := cs.InitializeResult(); ir != nil {
		s.info.ProtocolVersion = ir.ProtocolVersion
		if ir.ServerInfo != nil {
			s.info.ServerName, s.info.ServerVersion = ir.ServerInfo.Name, ir.ServerInfo.Version
		}
		if s.info.Capabilities = rt.capabilities(); s.info.Capabilities == nil && ir.Capabilities != nil {
			s.info.Capabilities, _ = json.Marshal(ir.Capabilities) // go-sdk's reading of them
		}
	}
	go func() {
		_ = cs.Wait()
		s.dead.Store(true)
	}()
	p.log.DebugContext(ctx, "mcpclient: connected", "connection_id", t.ConnectionID, "transport", transport,
		"protocol_version", s.info.ProtocolVersion, "duration_ms", time.Since(start).Milliseconds())
	return s, 0, false, nil
}

func isFallbackStatus(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotAcceptable:
		return true
	}
	return false
}
