package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	sse "github.com/tmaxmax/go-sse"
)

// errTooLarge is what a response body read returns once it passes MaxResponseBytes.
var errTooLarge = errors.New("mcpclient: upstream response too large")

// probe records what the HTTP layer saw for the requests made under one context (one
// connect attempt, or one call). go-sdk does not expose the HTTP status of a failed connect
// or call (docs/DESIGN.md §13), and it often formats lower errors with %v; the probe is how the pool
// decides on fallback, reconnects and error codes without matching message text of our
// own dependencies. It also keeps what a failure report needs (Failure): the stage the
// last request reached, the redirect target, and the URL's scheme, host and path (never
// its query).
type probe struct {
	mu          sync.Mutex
	status      int // status of the last response (0: none)
	method      string
	netErr      error // last transport error (dial, TLS, reset, guard refusal)
	netStage    string
	sessionGone bool // the upstream may have forgotten the session: see record
	location    string
	scheme      string
	host        string
	path        string
}

func (p *probe) record(req *http.Request, resp *http.Response, err error, sse bool, tr *reqTrace) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scheme, p.host, p.path = req.URL.Scheme, req.URL.Host, req.URL.Path
	if err != nil {
		p.netErr = err
		p.netStage = tr.stage(req.URL.Scheme, err)
		return
	}
	p.status = resp.StatusCode
	p.method = req.Method
	p.location = ""
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		p.location = redirectTarget(req.URL, resp.Header.Get("Location"))
	}
	// A stateful streamable upstream answers 404 to a forgotten Mcp-Session-Id (MCP
	// 2025-11-25 §2.5.3); a legacy SSE upstream answers 404 to a POST for a session whose
	// stream it no longer has; and a restarted stateful server answers 400 to a request
	// on a session of its previous process, in words of its own ("Server not initialized",
	// "No valid session ID provided", or anything else). So the status decides, never the
	// text (docs/ARCHITECTURE.md "Decisions": session recovery by status): a 400 or 404 to a
	// request carrying an Mcp-Session-Id means "maybe gone", and the pool re-initializes
	// and retries once (Pool.do). A genuine 400 costs one reconnect and is then relayed.
	sid := req.Header.Get("Mcp-Session-Id") != "" && req.Method != http.MethodDelete
	if (resp.StatusCode == http.StatusNotFound && (sid || (sse && req.Method == http.MethodPost))) ||
		(resp.StatusCode == http.StatusBadRequest && sid) {
		p.sessionGone = true
	}
}

func (p *probe) snapshot() (status int, method string, netErr error, sessionGone bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status, p.method, p.netErr, p.sessionGone
}

// where returns the stage of the last transport error, the redirect target of the last
// response, and the scheme, host and path of the last request.
func (p *probe) where() (netStage, location, scheme, host, path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.netStage, p.location, p.scheme, p.host, p.path
}

// redirectTarget is the absolute redirect target of a Location value, without its query
// and fragment (they may carry a key), or "" when there is none.
func redirectTarget(base *url.URL, loc string) string {
	if loc == "" {
		return ""
	}
	u, err := base.Parse(loc)
	if err != nil || u.Host == "" {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
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
// base transport: it adds the connection's declared headers (and only those: docs/DESIGN.md §6),
// records statuses into the request's probe, and caps response sizes.
type roundTripper struct {
	base      http.RoundTripper
	headers   map[string]string // validated by headers.Validate
	userAgent string
	maxBytes  int64
	sse       bool        // the session uses the legacy SSE transport
	tooLarge  atomic.Bool // set once any response of this session passed maxBytes
	// initAnswer keeps the body of the answer to the session's initialize (or
	// server/discover) request: go-sdk's typed result drops capabilities it does not know
	// (tasks), and the gateway needs the upstream's own.
	initMu     sync.Mutex
	initAnswer *bytes.Buffer
	initDone   bool        // the capabilities were read: stop copying
	creds      Credentials // Target.Credentials; nil: no Authorization from the gateway
}

// capabilities returns the capabilities member of the handshake's answer as the upstream
// sent it (a JSON body, or the event carrying it), or nil; it stops the copying.
func (rt *roundTripper) capabilities() json.RawMessage {
	rt.initMu.Lock()
	defer rt.initMu.Unlock()
	rt.initDone = true
	if rt.initAnswer == nil {
		return nil
	}
	b := rt.initAnswer.Bytes()
	rt.initAnswer = nil
	find := func(data []byte) json.RawMessage {
		// initialize's result has protocolVersion; server/discover's supportedVersions.
		var m struct {
			Result struct {
				Capabilities json.RawMessage `json:"capabilities"`
			} `json:"result"`
		}
		if json.Unmarshal(data, &m) != nil {
			return nil
		}
		return m.Result.Capabilities
	}
	if c := find(b); c != nil {
		return c
	}
	for ev, err := range sse.Read(bytes.NewReader(b), &sse.ReadConfig{MaxEventSize: maxInitAnswer}) {
		if err != nil {
			break
		}
		if c := find([]byte(ev.Data)); c != nil {
			return c
		}
	}
	return nil
}

// maxInitAnswer bounds what initAnswer keeps.
const maxInitAnswer = 256 << 10

// handshake reports whether req carries an initialize or server/discover request.
func handshake(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	b, _ := io.ReadAll(io.LimitReader(body, 4096))
	return bytes.Contains(b, []byte(`"method":"initialize"`)) || bytes.Contains(b, []byte(`"method":"server/discover"`))
}

// teeBody copies what is read from rc into buf (up to maxInitAnswer bytes).
type teeBody struct {
	rc  io.ReadCloser
	rt  *roundTripper
	buf *bytes.Buffer
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.rt.initMu.Lock()
	if t.rt.initDone {
		t.buf = nil // read: free the copy (a legacy SSE stream lives on)
	} else if room := maxInitAnswer - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(n, room)])
	}
	t.rt.initMu.Unlock()
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for name, value := range rt.headers {
		r.Header.Set(name, value)
	}
	if rt.userAgent != "" {
		r.Header.Set("User-Agent", rt.userAgent)
	}
	tr := &reqTrace{}
	r = r.WithContext(httptrace.WithClientTrace(r.Context(), tr.clientTrace()))
	resp, err := rt.send(r)
	if p := probeFrom(req.Context()); p != nil {
		p.record(r, resp, err, rt.sse, tr)
	}
	if err != nil {
		return nil, err
	}
	eventStream := strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream")
	if resp.StatusCode/100 == 2 && (handshake(r) || (rt.sse && eventStream && rt.initAnswer == nil)) {
		// The handshake's answer (for legacy SSE: the start of the stream, which carries it).
		buf := &bytes.Buffer{}
		rt.initMu.Lock()
		rt.initAnswer = buf
		rt.initMu.Unlock()
		resp.Body = &teeBody{rc: resp.Body, rt: rt, buf: buf}
	}
	if rt.maxBytes > 0 {
		resp.Body = &limitedBody{
			rc:          resp.Body,
			max:         rt.maxBytes,
			eventStream: eventStream,
			flag:        &rt.tooLarge,
		}
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
