// Package urlguard keeps the gateway's outbound HTTP (upstream MCP servers, test-connection
// and health probes) away from addresses it must never reach (docs/DESIGN.md §9 "Upstream URLs").
//
// Two checks, on purpose:
//
//   - CheckURL looks at the URL as written, on write (REST) and before connecting: scheme
//     http/https (https only with RequireHTTPS), a host, no userinfo, no numeric host in a
//     non-standard IPv4 form (0x7f000001, 127.1, 017700000001, 2130706433: parsers disagree
//     about them), and — unless AllowPrivate — no literal blocked IP and no "localhost" name.
//   - The dialer (DialContext, Transport, HTTPClient) checks the IP actually being dialled,
//     after DNS resolution, in a net.Dialer Control hook. A name that resolves (or re-resolves,
//     "DNS rebinding") to a blocked address is refused there, with an error that wraps
//     ErrBlockedAddress.
//
// Blocked unless AllowPrivate: loopback (127.0.0.0/8, ::1), private (10/8, 172.16/12,
// 192.168/16), unique-local fc00::/7, link-local (169.254.0.0/16, fe80::/10), CGNAT
// 100.64.0.0/10, deprecated site-local fec0::/10, and IPv4 addresses embedded in IPv6
// (IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16),
// which are judged by the IPv4 address they carry.
// Blocked always, even with AllowPrivate: unspecified (0.0.0.0/8, ::: dialling it reaches the
// local host), multicast (224/4, ff00::/8), reserved 240/4 incl. broadcast, and the cloud
// metadata endpoints 169.254.169.254 and fd00:ec2::254.
//
// The transport never uses a proxy from the environment (a proxy would make the dialled IP
// the proxy's, bypassing the check) and HTTPClient follows no redirects (docs/DESIGN.md §9: probes
// follow no redirects; a redirect is also a classic way around a URL check).
package urlguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
)

// MaxURLBytes is the longest URL CheckURL accepts, in bytes.
const MaxURLBytes = 2048

// ErrBlockedAddress is wrapped by every dial refusal (see BlockedError). Callers test it with
// errors.Is; the MCP client maps it to UPSTREAM_ERROR.
var ErrBlockedAddress = errors.New("urlguard: blocked address")

// BlockedError is the dial-time refusal of one resolved address.
type BlockedError struct {
	Addr   netip.Addr // the address that was about to be dialled
	Reason string     // e.g. "loopback", "private (RFC 1918)", "cloud metadata"
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("urlguard: refusing to connect to %s (%s)", e.Addr, e.Reason)
}

// Is makes errors.Is(err, ErrBlockedAddress) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlockedAddress }

// Options configures a Guard. The zero value (and a nil *Options) is strict about addresses
// but accepts http as well as https.
type Options struct {
	// AllowPrivate permits loopback, private, link-local, unique-local and CGNAT targets and
	// "localhost" names: for local development and tests only (docs/DESIGN.md §9 "a config switch").
	AllowPrivate bool
	// RequireHTTPS refuses http:// URLs (deployed mode, docs/DESIGN.md §9).
	RequireHTTPS bool
	// Resolver, when set, is the resolver the dialer uses to turn a host name into the
	// addresses it then checks and dials; nil is the system's (net.DefaultResolver). Tests
	// set it to make a name resolve to a chosen address (DNS rebinding).
	Resolver *net.Resolver
}

// Guard checks URLs and dials. It is safe for concurrent use; share one per process so that
// its Transport's connection pool is reused.
type Guard struct {
	opts      Options
	dialer    *net.Dialer
	transport *http.Transport
}

// New returns a Guard with opts (nil means the zero Options).
func New(opts *Options) *Guard {
	g := &Guard{}
	if opts != nil {
		g.opts = *opts
	}
	g.dialer = &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   g.control,
		Resolver:  g.opts.Resolver,
	}
	g.transport = &http.Transport{
		Proxy:                 nil, // never: see the package doc
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return g
}

// Options returns the guard's options.
func (g *Guard) Options() Options { return g.opts }

// CheckURL validates raw as an upstream URL (rules in the package doc). It returns nil or an
// *apperr.Error with code VALIDATION_ERROR and a message that says what is wrong. It does
// not resolve names: the dial-time check covers what a name resolves to.
func (g *Guard) CheckURL(raw string) error {
	if raw == "" {
		return invalid("url is empty")
	}
	if len(raw) > MaxURLBytes {
		return invalid("url is %d bytes long, at most %d allowed", len(raw), MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return apperr.Wrap(err, apperr.Validation, "url is not a valid URL")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if g.opts.RequireHTTPS {
			return invalid("url must use https")
		}
	default:
		if g.opts.RequireHTTPS {
			return invalid("url must use https (got scheme %q)", text.Clip(u.Scheme, 64))
		}
		return invalid("url must use http or https (got scheme %q)", text.Clip(u.Scheme, 64))
	}
	if u.Opaque != "" || u.Host == "" {
		return invalid("url has no host")
	}
	if u.User != nil {
		return invalid("url must not contain user information (user:password@); declare credentials as connection headers")
	}
	if p := u.Port(); p != "" {
		if n, err := parsePort(p); err != nil || n == 0 {
			return invalid("url has an invalid port")
		}
	}
	host := u.Hostname()
	if host == "" {
		return invalid("url has no host")
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if reason, blocked := g.blocked(addr); blocked {
			return invalid("url targets a blocked address (%s)", reason).
				WithHint("only public addresses are allowed here")
		}
		return nil
	}
	if strings.Contains(host, ":") || strings.Contains(host, "%") {
		return invalid("url host is not a valid IP address or name")
	}
	if looksNumeric(host) {
		return invalid("url host %q is a non-standard IP address form; write the address as a.b.c.d", text.Clip(host, 64))
	}
	if !g.opts.AllowPrivate && isLocalName(host) {
		return invalid("url targets localhost").WithHint("only public addresses are allowed here")
	}
	return nil
}

// CheckAddr reports whether a dial to addr is allowed: nil, or a *BlockedError (which wraps
// ErrBlockedAddress).
func (g *Guard) CheckAddr(addr netip.Addr) error {
	if reason, blocked := g.blocked(addr); blocked {
		return &BlockedError{Addr: addr.Unmap(), Reason: reason}
	}
	return nil
}

// DialContext dials like net.Dialer.DialContext (10 s connect timeout) but refuses blocked
// resolved addresses: its error then wraps a *BlockedError (errors.Is ErrBlockedAddress).
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return g.dialer.DialContext(ctx, network, address)
}

// Transport returns the guard's shared *http.Transport: guarded dialer, no proxy, HTTP/2
// when offered. Callers must not modify it; wrap it in a RoundTripper instead.
func (g *Guard) Transport() *http.Transport { return g.transport }

// HTTPClient returns an *http.Client on Transport() that follows no redirects (the 3xx
// response is returned as is, per http.ErrUseLastResponse). timeout bounds each whole
// request including reading the body; 0 means no limit (needed for long-lived SSE streams —
// use context deadlines there).
func (g *Guard) HTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport:     g.transport,
		Timeout:       timeout,
		CheckRedirect: NoRedirect,
	}
}

// NoRedirect is an http.Client.CheckRedirect that stops at the first redirect.
func NoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// control is the net.Dialer Control hook: it sees the resolved "ip:port" of every attempt.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		// Not an IP socket address (e.g. a unix socket): nothing of ours dials those.
		return &BlockedError{Reason: "not an IP address"}
	}
	return g.CheckAddr(ap.Addr())
}

var (
	metadataV4 = netip.MustParseAddr("169.254.169.254")
	metadataV6 = netip.MustParseAddr("fd00:ec2::254")

	alwaysBlocked = []struct {
		p      netip.Prefix
		reason string
	}{
		{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
		{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
		{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	}
	privateV4 = []struct {
		p      netip.Prefix
		reason string
	}{
		{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
		{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
		{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
		{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
		{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
		{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (CGNAT)"},
		{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
		{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	}
	privateV6 = []struct {
		p      netip.Prefix
		reason string
	}{
		{netip.MustParsePrefix("fc00::/7"), "unique-local"},
		{netip.MustParsePrefix("fe80::/10"), "link-local"},
		{netip.MustParsePrefix("fec0::/10"), "site-local"},
	}
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	compat4 = netip.MustParsePrefix("::/96")
)

// blocked classifies addr under the guard's options.
func (g *Guard) blocked(addr netip.Addr) (reason string, blocked bool) {
	addr = addr.WithZone("")
	if addr.Is6() && !addr.Is4In6() {
		switch {
		case addr.IsUnspecified():
			return "unspecified", true
		case addr.IsMulticast():
			return "multicast", true
		case addr == metadataV6:
			return "cloud metadata", true
		case addr.IsLoopback():
			return g.private("loopback")
		}
		// IPv4 carried inside IPv6: judge the IPv4 address.
		b := addr.As16()
		switch {
		case nat64.Contains(addr):
			return g.blocked(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixTo4.Contains(addr):
			return g.blocked(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		case compat4.Contains(addr):
			return g.blocked(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		}
		for _, r := range privateV6 {
			if r.p.Contains(addr) {
				return g.private(r.reason)
			}
		}
		return "", false
	}
	addr = addr.Unmap()
	if addr == metadataV4 {
		return "cloud metadata", true
	}
	for _, r := range alwaysBlocked {
		if r.p.Contains(addr) {
			return r.reason, true
		}
	}
	for _, r := range privateV4 {
		if r.p.Contains(addr) {
			return g.private(r.reason)
		}
	}
	return "", false
}

func (g *Guard) private(reason string) (string, bool) {
	if g.opts.AllowPrivate {
		return "", false
	}
	return reason, true
}

// looksNumeric reports whether host would be read as an IPv4 address by a WHATWG URL parser
// or inet_aton: its last label is a decimal, octal or hex number (127.1, 0x7f000001,
// 2130706433, 1.2.3.0x4). netip already accepted canonical dotted quads.
func looksNumeric(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host
	if i := strings.LastIndexByte(host, '.'); i >= 0 {
		last = host[i+1:]
	}
	if last == "" {
		return false
	}
	lower := strings.ToLower(last)
	if strings.HasPrefix(lower, "0x") {
		return strings.Trim(lower[2:], "0123456789abcdef") == ""
	}
	return strings.Trim(lower, "0123456789") == ""
}

// isLocalName reports names that mean this host (RFC 6761 §6.3 "localhost." and below).
func isLocalName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	switch h {
	case "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback":
		return true
	}
	return strings.HasSuffix(h, ".localhost")
}

func parsePort(p string) (int, error) {
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return 0, errors.New("out of range")
		}
	}
	return n, nil
}

func invalid(format string, args ...any) *apperr.Error {
	return apperr.New(apperr.Validation, format, args...)
}
