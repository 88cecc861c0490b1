package testpeer

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// Resolver starts a DNS server on 127.0.0.1 (UDP) that answers A and AAAA questions from
// names (a fully qualified or bare host name → its addresses; case-insensitive) and NXDOMAIN
// for any other name, and returns a *net.Resolver that asks only it (Go's resolver; the
// hosts file is still read first, so pick names that are not in it, e.g. under .test, RFC
// 6761). The server stops when t ends. It lets a test resolve a name to a chosen address,
// loopback included, on any machine and without network access.
func Resolver(t TB, names map[string][]netip.Addr) *net.Resolver {
	t.Helper()
	zone := make(map[string][]netip.Addr, len(names))
	for n, as := range names {
		zone[strings.ToLower(strings.TrimSuffix(n, "."))+"."] = as
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testpeer: dns listen: %v", err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return // closed
			}
			if out, err := answer(zone, buf[:n]); err == nil {
				_, _ = pc.WriteTo(out, from)
			}
		}
	}()
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// answer builds the reply to one DNS query message.
func answer(zone map[string][]netip.Addr, query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, errors.New("testpeer: dns query without a question")
	}
	addrs, known := zone[strings.ToLower(q.Name.String())]
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RCode: dnsmessage.RCodeSuccess}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
	for _, a := range addrs {
		switch {
		case q.Type == dnsmessage.TypeA && a.Unmap().Is4():
			err = b.AResource(rr, dnsmessage.AResource{A: a.Unmap().As4()})
		case q.Type == dnsmessage.TypeAAAA && a.Is6() && !a.Is4In6():
			err = b.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
		if err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
