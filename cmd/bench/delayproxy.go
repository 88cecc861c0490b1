package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"time"
)

// delayProxy is a TCP proxy on loopback that stands between the gateway and Postgres and
// adds delay to every database round trip: each chunk of bytes the client (the gateway)
// sends is held until delay after it arrived, then written to the server, in order; the
// server's answers come back at once. So every request–response pair (a statement, a
// Sync, a ping) costs delay more, once, whatever its size, while pipelined bytes keep their
// order and spacing (the client→server stream is a queue, not a sleep per chunk, so the
// proxy's own throughput is not the limit). This is the deployed shape measured locally: in
// AWS every round trip crosses RDS Proxy and the network to another process, often in
// another availability zone.
type delayProxy struct {
	ln     net.Listener
	target string
	delay  time.Duration
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

// startDelayProxy listens on a free loopback port and forwards to target (host:port) with
// delay added to each client→server chunk; Addr is where to connect, Close stops it.
func startDelayProxy(target string, delay time.Duration) (*delayProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &delayProxy{ln: ln, target: target, delay: delay}
	p.wg.Go(p.accept)
	return p, nil
}

func (p *delayProxy) Addr() string { return p.ln.Addr().String() }

func (p *delayProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Go(func() { p.delayed(c, s) })
		p.wg.Go(func() { _, _ = io.Copy(c, s); c.Close() })
	}
}

// chunk is bytes read from the client and when they are due at the server.
type chunk struct {
	b   []byte
	due time.Time
}

// delayed copies src to dst, each read chunk written delay after it was read.
func (p *delayProxy) delayed(src, dst net.Conn) {
	q := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			if d := time.Until(c.due); d > 0 {
				time.Sleep(d)
			}
			if _, err := dst.Write(c.b); err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{b: append([]byte(nil), buf[:n]...), due: time.Now().Add(p.delay)}
		}
		if err != nil {
			break
		}
	}
	close(q)
	<-done
	dst.Close()
}

// Close stops accepting, closes every proxied connection and waits for the copiers.
func (p *delayProxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// delayRows is the limit leg's database-delay row: a second gateway process whose every
// Postgres connection goes through a delayProxy adding dbDelay per round trip, measured at
// c=1 interleaved with the bare proxy (bare) and the first gateway (gw), with the result in
// v (target: p50 within the bare proxy's + 0.5 ms).
func delayRows(ctx context.Context, e limitEnv, v *limitVerdict, bare, gw *leg) error {
	u, err := url.Parse(e.dbURL)
	if err != nil {
		return err
	}
	dp, err := startDelayProxy(u.Host, dbDelay)
	if err != nil {
		return err
	}
	defer dp.Close()
	u.Host = dp.Addr()
	gp, gwURL, err := e.startGateway(u.String())
	if err != nil {
		return err
	}
	defer gp.stop()
	fmt.Fprintln(os.Stderr, "bench: limit leg with", dbDelay, "on every database round trip…")
	slow := &leg{name: fmt.Sprintf("gateway, %s added to every Postgres round trip", dbDelay), url: gwURL, token: gw.token, body: gw.body}
	legs := []*leg{bare, gw, slow}
	for _, l := range legs {
		l.load(e.warm, 1)
	}
	rs := loadInterleaved(legs, e.n, 1, nil)
	v.delayRef, v.delayed = &rs[0], &rs[2]
	for _, r := range rs {
		note := fmt.Sprintf("%d requests in %d rounds interleaved; p50 %+.3f ms over the bare proxy", e.n, limitRounds, float64((r.p50-rs[0].p50).Microseconds())/1000)
		if r.errors > 0 {
			note += fmt.Sprintf("; first error: %.120s", r.firstErr)
		}
		add(row{what: "limit leg, echo tools/call (demo upstream), database delay row, " + r.name + ", concurrency 1",
			p50: ms(r.p50) + " ms", p99: ms(r.p99) + " ms", rps: fmt.Sprintf("%.0f", r.rps), note: note + fmt.Sprintf("; errors %d", r.errors)})
	}
	return nil
}
