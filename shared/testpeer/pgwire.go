package testpeer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// PgWire is a loopback TCP proxy in front of a Postgres (or PgBouncer) endpoint that reads
// every message the clients send (the frontend half of the v3 wire protocol) and records
// what would pin an RDS Proxy session or break a transaction pooler:
//
//   - a named prepared statement (a Parse message with a statement name);
//   - session state set by SQL: SET / RESET without LOCAL, set_config(…, false), a
//     session advisory lock (pg_advisory_lock, pg_try_advisory_lock and their _shared
//     forms; the _xact_ forms are transaction-scoped and allowed), LISTEN, PREPARE,
//     DECLARE … WITH HOLD, a temporary table.
//
// The bytes pass through unchanged. URL is the database URL through the proxy.
type PgWire struct {
	URL string

	mu         sync.Mutex
	statements int
	violations []string
	texts      []string // the statements' texts, at most maxTexts
	down       bool
	cut        func() // closes every open connection
}

// Cut makes the database unreachable through the proxy, as a stopped database or a
// partition would: open connections are closed and new ones are closed at once.
func (p *PgWire) Cut() {
	p.mu.Lock()
	p.down = true
	cut := p.cut
	p.mu.Unlock()
	cut()
}

// Restore lets connections through again after Cut.
func (p *PgWire) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

func (p *PgWire) isDown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down
}

// Statements returns how many statements were executed (Bind and simple Query messages).
func (p *PgWire) Statements() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.statements
}

// maxTexts bounds the statement texts a PgWire keeps.
const maxTexts = 100000

// Texts returns the text of every statement executed so far (the first 100,000), in order.
func (p *PgWire) Texts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.texts...)
}

// Violations returns what was recorded, one line each: the rule and the statement (clipped).
func (p *PgWire) Violations() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.violations...)
}

// NewPgWire starts the proxy on a free 127.0.0.1 port in front of dbURL's host and port; it
// is closed at cleanup.
func NewPgWire(t TB, dbURL string) *PgWire {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil || u.Host == "" {
		t.Fatalf("testpeer: pgwire: bad database URL")
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testpeer: %v", err)
	}
	pu := *u
	pu.Host = ln.Addr().String()
	p := &PgWire{URL: pu.String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	track := func(c net.Conn, on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			conns[c] = true
		} else {
			delete(conns, c)
		}
	}
	p.cut = func() {
		mu.Lock()
		defer mu.Unlock()
		for c := range conns {
			c.Close()
		}
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if p.isDown() {
				c.Close()
				continue
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			track(c, true)
			track(s, true)
			wg.Go(func() {
				_, _ = io.Copy(c, s)
				c.Close()
			})
			wg.Go(func() {
				p.frontend(c, s)
				s.Close()
				track(c, false)
				track(s, false)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		wg.Wait()
	})
	return p
}

// Request codes of the untyped first messages (SSLRequest, GSSENCRequest): the server
// answers one byte and the client sends another untyped message.
const (
	sslRequestCode    = 80877103
	gssencRequestCode = 80877104
)

// frontend copies the client's messages to the server, inspecting each.
func (p *PgWire) frontend(c, s net.Conn) {
	var hdr [5]byte
	// Untyped start: length, then a code or the protocol version.
	for {
		if _, err := io.ReadFull(c, hdr[:4]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[:4]))
		if n < 8 || n > 1<<20 {
			return
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		if _, err := s.Write(append(hdr[:4:4], body...)); err != nil {
			return
		}
		code := binary.BigEndian.Uint32(body[:4])
		if code != sslRequestCode && code != gssencRequestCode {
			break
		}
	}
	parsed := map[string]string{} // statement name ("" = unnamed) → its text
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[1:]))
		if n < 4 || n > 1<<30 {
			return
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		switch hdr[0] {
		case 'P': // Parse: name\0 query\0 …
			name, rest, _ := bytes.Cut(body, []byte{0})
			query, _, _ := bytes.Cut(rest, []byte{0})
			p.check(string(name), string(query))
			parsed[string(name)] = string(query)
		case 'B': // Bind: portal\0 statement\0 …: one execution of that statement
			_, rest, _ := bytes.Cut(body, []byte{0})
			stmt, _, _ := bytes.Cut(rest, []byte{0})
			p.executed(parsed[string(stmt)])
		case 'Q': // Query: query\0
			query, _, _ := bytes.Cut(body, []byte{0})
			p.check("", string(query))
			p.executed(string(query))
		}
		if _, err := s.Write(hdr[:]); err != nil {
			return
		}
		if _, err := s.Write(body); err != nil {
			return
		}
	}
}

var (
	sessionSQL = regexp.MustCompile(`(?is)^\s*(set|reset|listen|prepare|discard)\b` +
		`|\bpg_(try_)?advisory_lock(_shared)?\s*\(` +
		`|\bset_config\s*\([^)]*,\s*false\s*\)` +
		`|\bdeclare\b.*\bwith\s+hold\b` +
		`|\bcreate\s+(global\s+|local\s+)?temp(orary)?\s+table\b`)
	localSet = regexp.MustCompile(`(?is)^\s*set\s+(local|transaction|constraints)\b`)
)

// executed records one execution of statement text query.
func (p *PgWire) executed(query string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.statements++
	if len(p.texts) < maxTexts {
		p.texts = append(p.texts, query)
	}
}

// check records a named statement or a statement that sets session state.
func (p *PgWire) check(name, query string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	clip := strings.Join(strings.Fields(query), " ")
	if len(clip) > 160 {
		clip = clip[:160] + "…"
	}
	if name != "" {
		p.violations = append(p.violations, fmt.Sprintf("named prepared statement %q: %s", name, clip))
	}
	if sessionSQL.MatchString(query) && !localSet.MatchString(query) {
		p.violations = append(p.violations, "session state: "+clip)
	}
}
