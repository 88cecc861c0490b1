package connections

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
)

// Resolver is the part of *net.Resolver the write-time address check uses.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// resolveTimeout bounds the write-time lookup; a slow or failing DNS never blocks a write
// (the dial-time check still stands between the gateway and the address).
const resolveTimeout = 3 * time.Second

// checkResolved refuses, in deployed mode (guard without AllowPrivate), a URL whose host
// name resolves now to an address the guard blocks (loopback, private, link-local,
// metadata, ...): the admin gets a clear 400 on write instead of a connection that can
// never connect (docs/DESIGN.md §9). A literal IP was already judged by CheckURL; a lookup failure
// is not an error here. DNS can change later ("rebinding"): the dialer checks again.
func (s *Service) checkResolved(ctx context.Context, raw string) error {
	if s.Guard.Options().AllowPrivate {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil // CheckURL already refused it
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil || host == "" {
		return nil
	}
	var r Resolver = net.DefaultResolver
	if s.Resolver != nil {
		r = s.Resolver
	}
	lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(lctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if err := s.Guard.CheckAddr(a); err != nil {
			return apperr.New(apperr.Validation, "url host %q resolves to a blocked address (%s)", text.Clip(host, 64), a.Unmap()).
				WithHint("only public addresses are allowed here")
		}
	}
	return nil
}
