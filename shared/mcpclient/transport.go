package mcpclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// errTooLarge is what a response body read returns once it passes MaxResponseBytes.
var errTooLarge = errors.New("mcpclient: upstream response too large")

// probe records what the HTTP layer saw for the requests made under one context (one
// connect attempt, or one call). go-sdk does not expose the HTTP status of a failed connect
// or call (NOTES.md), and it often formats lower errors with %v; the probe is how the pool
// decides on fallback and error codes without matching message text.
type probe struct {
	mu          sync.Mutex
	status      int // status of the last response (0: none)
	method      string
	netErr      error // last transport error (dial, TLS, reset, guard refusal)
	sessionGone bool  // a request carrying Mcp-Session-Id was answered 404
}

func (p *probe) record(req *http.Request, resp *http.Response, err error, sse bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.netErr = err
		return
	}
	p.status = resp.StatusCode
	p.method = req.Method
	// A stateful streamable upstream answers 404 to a forgotten Mcp-Session-Id (MCP
	// 2025-11-25 §2.5.3); a legacy SSE upstream answers 404 to a POST for a session whose
	// stream it no longer has.
	if resp.StatusCode == http.StatusNotFound &&
		(req.Header.Get("Mcp-Session-Id") != "" || (sse && req.Method == http.MethodPost)) {
		p.sessionGone = true
	}
}

func (p *probe) snapshot() (status int, method string, netErr error, sessionGone bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status, p.method, p.netErr, p.sessionGone
}

type probeKey struct{}

func withProbe(ctx context.Context, p *probe) context.Context {
	return context.WithValue(ctx, probeKey{}, p)
}

func probeFrom(ctx context.Context) *probe {
	p, _ := ctx.Value(probeKey{}).(*probe)
	return p
}

// Credentials supplies an upstream access token for a Target (upstream OAuth: package
// upstreamauth implements it). The roundTripper asks Token before every request and sends
// "Authorization: Bearer <token>" (after the declared headers, so it wins); a Token error
// fails the request before anything is sent upstream. After a 401 or 403 answer it calls
// Unauthorized with the token that was sent; when that returns true (the token was
// refreshed) the request is retried once with a new Token.
type Credentials interface {
	// Token returns the access token to send, or "" to send none.
	Token(ctx context.Context) (string, error)
	// Unauthorized is told of a 401/403 answer to a request sent with token. It must not
	// read or close resp.Body. It returns true when a retry with a new Token is worthwhile.
	Unauthorized(ctx context.Context, token string, resp *http.Response) bool
}

// roundTripper is the per-session HTTP layer between the go-sdk transports and the guarded
// base transport: it adds the connection's declared headers (and only those: DESIGN §6),
// records statuses into the request's probe, caps response sizes, and taps a relaying
// call's event stream for its notifications (relay.go).
type roundTripper struct {
	base      http.RoundTripper
	headers   map[string]string // validated by headers.Validate
	userAgent string
	maxBytes  int64
	sse       bool        // the session uses the legacy SSE transport
	tooLarge  atomic.Bool // set once any response of this session passed maxBytes
	creds     Credentials // Target.Credentials; nil: no Authorization from the gateway
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for name, value := range rt.headers {
		r.Header.Set(name, value)
	}
	if rt.userAgent != "" {
		r.Header.Set("User-Agent", rt.userAgent)
	}
	resp, err := rt.send(r)
	if p := probeFrom(req.Context()); p != nil {
		p.record(r, resp, err, rt.sse)
	}
	if err != nil {
		return nil, err
	}
	eventStream := strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream")
	if rt.maxBytes > 0 {
		resp.Body = &limitedBody{
			rc:          resp.Body,
			max:         rt.maxBytes,
			eventStream: eventStream,
			flag:        &rt.tooLarge,
		}
	}
	// A relaying call's own stream (relay.go): only on the streamable transport, where the
	// POST's response carries the notifications of that request and no other.
	if sink := sinkFrom(req.Context()); sink != nil && !rt.sse && eventStream && resp.StatusCode/100 == 2 {
		resp.Body = &sseTap{rc: resp.Body, sink: sink}
	}
	return resp, nil
}

// send sends r with the credentials' token, and once more with a refreshed one when the
// upstream answered 401/403 and Unauthorized asked for a retry.
func (rt *roundTripper) send(r *http.Request) (*http.Response, error) {
	if rt.creds == nil {
		return rt.base.RoundTrip(r)
	}
	ctx := r.Context()
	token, err := rt.creds.Token(ctx)
	if err != nil {
		return nil, &CredentialsError{Err: err}
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := rt.base.RoundTrip(r)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if !rt.creds.Unauthorized(ctx, token, resp) || (r.Body != nil && r.GetBody == nil) {
		return resp, nil
	}
	retry := r.Clone(ctx)
	if r.GetBody != nil {
		if retry.Body, err = r.GetBody(); err != nil {
			return resp, nil
		}
	}
	fresh, err := rt.creds.Token(ctx)
	if err != nil || fresh == "" {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	retry.Header.Set("Authorization", "Bearer "+fresh)
	return rt.base.RoundTrip(retry)
}

// CredentialsError is a Target.Credentials refusal to supply a token: the request was not
// sent. Err is the credentials' error (e.g. upstreamauth.ErrAuthorizationRequired).
type CredentialsError struct{ Err error }

func (e *CredentialsError) Error() string {
	return "mcpclient: no upstream credentials: " + e.Err.Error()
}
func (e *CredentialsError) Unwrap() error { return e.Err }

// limitedBody fails reads once a body passes max bytes; for an event stream the count is per
// event (reset at each blank line), so a long-lived SSE stream is not cut for its total.
type limitedBody struct {
	rc          io.ReadCloser
	max         int64
	eventStream bool
	flag        *atomic.Bool

	n        int64 // bytes in the current body / event
	newlines int   // consecutive '\n' seen (ignoring '\r'), for event boundaries
	failed   bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.failed {
		return 0, errTooLarge
	}
	n, err := b.rc.Read(p)
	if !b.eventStream {
		b.n += int64(n)
	} else {
		for _, c := range p[:n] {
			switch c {
			case '\r':
				continue
			case '\n':
				b.newlines++
				if b.newlines >= 2 {
					b.n = 0
					continue
				}
			default:
				b.newlines = 0
			}
			b.n++
			if b.n > b.max {
				break
			}
		}
	}
	if b.n > b.max {
		b.failed = true
		b.flag.Store(true)
		return 0, errTooLarge
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
