package mcpclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
	"github.com/agentpack/gateway/shared/urlguard"
)

// Stages of a connection to an upstream, in order (Failure.Stage).
const (
	StageDNS      = "dns"      // resolving the URL's host name
	StageConnect  = "connect"  // opening the TCP connection (refused, unreachable, blocked address)
	StageTLS      = "tls"      // the TLS handshake (certificate, protocol)
	StageHTTP     = "http"     // an HTTP answer that is not a success (HTTPStatus), or no answer at all
	StageProtocol = "protocol" // HTTP succeeded but the MCP exchange did not (JSON-RPC error, bad body)
)

// Failure says where a connection to an upstream failed, for the people who set it up:
// REST answers of test, install, create and refresh carry it next to the
// client-safe message. It is the Details of the *apperr.Error the pool returns (see
// FailureOf) and holds no secret: no header value, no URL query, no raw network error text.
type Failure struct {
	// Stage is one of StageDNS, StageConnect, StageTLS, StageHTTP, StageProtocol.
	Stage string `json:"stage"`
	// HTTPStatus is the status of the upstream's answer, when there was one (else 0).
	HTTPStatus int `json:"httpStatus,omitempty"`
	// Hint is what to try, e.g. "the MCP endpoint is often at /mcp: try https://host/mcp".
	Hint string `json:"hint,omitempty"`
}

// FailureOf returns the Failure of an error returned by a Pool method: that of the first
// *apperr.Error in err's chain that carries one (an outer error may sum up several
// attempts, e.g. both transports of D-09, and the inner one says where the last failed),
// or nil when err is nil or was not an upstream failure (e.g. an invalid stored URL).
func FailureOf(err error) *Failure {
	for err != nil {
		if e, ok := err.(*apperr.Error); ok {
			if f, ok := e.Details.(*Failure); ok {
				return f
			}
		}
		err = errors.Unwrap(err)
	}
	return nil
}

// withFailure sets e's Details to a Failure of stage (with status and e's hint) and returns e.
func withFailure(e *apperr.Error, stage string, status int) *apperr.Error {
	return e.WithDetails(&Failure{Stage: stage, HTTPStatus: status, Hint: e.Hint})
}

// reqTrace follows one HTTP request through DNS, connect and TLS (net/http/httptrace), so
// that a transport error can be put in its stage without reading its text.
type reqTrace struct {
	mu        sync.Mutex
	dnsErr    bool
	connected bool // a TCP connection was made (or reused)
	tlsStart  bool
	tlsDone   bool
}

func (t *reqTrace) clientTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		DNSDone: func(i httptrace.DNSDoneInfo) {
			t.mu.Lock()
			t.dnsErr = i.Err != nil
			t.mu.Unlock()
		},
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				t.mu.Lock()
				t.connected = true
				t.mu.Unlock()
			}
		},
		GotConn: func(httptrace.GotConnInfo) {
			t.mu.Lock()
			t.connected, t.tlsDone = true, true // a usable connection: any TLS is done
			t.mu.Unlock()
		},
		TLSHandshakeStart: func() {
			t.mu.Lock()
			t.tlsStart = true
			t.mu.Unlock()
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err == nil {
				t.mu.Lock()
				t.tlsDone = true
				t.mu.Unlock()
			}
		},
	}
}

// stage places a transport error of a request to a URL of scheme: the error's type first
// (DNS, blocked address, TLS), then how far the trace got.
func (t *reqTrace) stage(scheme string, err error) string {
	var dnsErr *net.DNSError
	var blocked *urlguard.BlockedError
	switch {
	case errors.As(err, &dnsErr):
		return StageDNS
	case errors.As(err, &blocked):
		return StageConnect
	case isTLSError(err):
		return StageTLS
	}
	if t == nil {
		return StageConnect
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.dnsErr:
		return StageDNS
	case !t.connected:
		return StageConnect
	case scheme == "https" && !t.tlsDone:
		return StageTLS
	}
	return StageHTTP
}

func isTLSError(err error) bool {
	var (
		rh   tls.RecordHeaderError
		ae   tls.AlertError
		cve  *tls.CertificateVerificationError
		ua   x509.UnknownAuthorityError
		he   x509.HostnameError
		ci   x509.CertificateInvalidError
		uaP  *x509.UnknownAuthorityError
		heP  *x509.HostnameError
		ciP  *x509.CertificateInvalidError
		ecPt *tls.ECHRejectionError
	)
	return errors.As(err, &rh) || errors.As(err, &ae) || errors.As(err, &cve) || errors.As(err, &ua) ||
		errors.As(err, &he) || errors.As(err, &ci) || errors.As(err, &uaP) || errors.As(err, &heP) ||
		errors.As(err, &ciP) || errors.As(err, &ecPt)
}

// describeNetErr is a short, client-safe account of a transport error at stage for host
// (host[:port] of the URL: no path, no query) and a hint — never the error's own text.
func describeNetErr(err error, stage, host string) (msg, hint string) {
	var dnsErr *net.DNSError
	var blocked *urlguard.BlockedError
	switch stage {
	case StageDNS:
		name := host
		if h, _, e := net.SplitHostPort(host); e == nil {
			name = h
		}
		msg = "the host name " + quote(name) + " could not be resolved (DNS)"
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			msg = "the host name " + quote(name) + " does not exist (DNS)"
		}
		return msg, "check the host name in the connection's URL"
	case StageConnect:
		switch {
		case errors.As(err, &blocked):
			return "the address of " + quote(host) + " is not allowed (" + blocked.Reason + ")",
				"the URL resolves to a private or reserved address"
		case errors.Is(err, syscall.ECONNREFUSED):
			return "the connection to " + quote(host) + " was refused",
				"check that the server is running and listens on that port"
		case isTimeout(err):
			return "the connection to " + quote(host) + " timed out",
				"check the host and port, and that a firewall lets the gateway through"
		case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
			return "the host " + quote(host) + " is unreachable", "check the host and port in the connection's URL"
		}
		return "could not connect to " + quote(host), "check the host and port in the connection's URL"
	case StageTLS:
		var ua x509.UnknownAuthorityError
		var uaP *x509.UnknownAuthorityError
		var he x509.HostnameError
		var heP *x509.HostnameError
		var ci x509.CertificateInvalidError
		var ciP *x509.CertificateInvalidError
		var rh tls.RecordHeaderError
		switch {
		case errors.As(err, &ua) || errors.As(err, &uaP):
			return "the TLS certificate of " + quote(host) + " is signed by an unknown authority",
				"the server needs a certificate from a public certificate authority"
		case errors.As(err, &he) || errors.As(err, &heP):
			return "the TLS certificate of " + quote(host) + " is not valid for that host name",
				"check the host name in the connection's URL"
		case errors.As(err, &ci) || errors.As(err, &ciP):
			return "the TLS certificate of " + quote(host) + " is not valid (expired, not yet valid, or not for server use)",
				"the server's certificate must be renewed"
		case errors.As(err, &rh):
			return "the server at " + quote(host) + " did not answer in TLS",
				"the URL may need http:// instead of https://, or another port"
		case isTimeout(err):
			return "the TLS handshake with " + quote(host) + " timed out", ""
		}
		return "the TLS handshake with " + quote(host) + " failed", ""
	}
	if isTimeout(err) {
		return "the server at " + quote(host) + " did not answer in time", ""
	}
	return "the connection to " + quote(host) + " was closed before an answer", ""
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// mcpPathHint is the hint for a 404 to a URL whose path does not end in /mcp (or /sse): the
// same URL with /mcp appended (scheme, host, path only), as most servers serve MCP there.
func mcpPathHint(scheme, host, path string) string {
	p := strings.TrimRight(path, "/")
	if strings.HasSuffix(p, "/mcp") || strings.HasSuffix(p, "/sse") || scheme == "" || host == "" {
		return ""
	}
	return "the MCP endpoint is often at /mcp: try " + scheme + "://" + host + p + "/mcp"
}

// urlPathHint is mcpPathHint for a target URL (its query never included).
func urlPathHint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return mcpPathHint(u.Scheme, u.Host, u.Path)
}

func quote(s string) string { return "\"" + text.Clip(s, 128) + "\"" }
