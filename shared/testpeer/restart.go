package testpeer

import (
	"fmt"
	"net"
	"strings"
	"sync"
)

// RestartablePeer is a node MCP peer that a test can restart on the same port, as a
// deployed upstream restarts: the new process has none of the old one's sessions.
type RestartablePeer struct {
	// URL is the MCP endpoint, e.g. http://127.0.0.1:PORT/mcp; it stays the same across
	// restarts.
	URL string

	dir, entry, arg string
	port            int
	mu              sync.Mutex
	stop            func()
}

// EverythingRestartable starts @modelcontextprotocol/server-everything like Everything (mode
// "streamable" or "sse") on a fixed free loopback port, so that Restart can bring it back
// at the same URL. t.Cleanup stops it. Missing node_modules: skip, or fail with
// REQUIRE_PEERS=1.
func EverythingRestartable(t TB, mode string) *RestartablePeer {
	t.Helper()
	dir, entry, arg, path := everythingArgs(t, mode)
	p := &RestartablePeer{dir: dir, arg: arg, entry: entry}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testpeer: %v", err)
	}
	p.port = l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	p.start(t)
	p.URL = fmt.Sprintf("http://127.0.0.1:%d%s", p.port, path)
	return p
}

func (p *RestartablePeer) start(t TB) {
	t.Helper()
	addr, stop := startNode(t, p.dir, []string{fmt.Sprintf("PORT=%d", p.port)}, p.entry, p.arg)
	if !strings.HasSuffix(addr, fmt.Sprintf(":%d", p.port)) {
		stop()
		t.Fatalf("testpeer: server-everything listens on %s, want port %d", addr, p.port)
	}
	p.mu.Lock()
	p.stop = stop
	p.mu.Unlock()
}

// Restart kills the process (SIGKILL: no goodbye to its clients) and starts a new one on
// the same port; it returns once the new one listens.
func (p *RestartablePeer) Restart(t TB) {
	t.Helper()
	p.mu.Lock()
	stop := p.stop
	p.mu.Unlock()
	stop()
	p.start(t)
}
