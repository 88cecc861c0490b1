package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
)

// cmdDemoUpstream serves only the demo upstream MCP server (stateless streamable HTTP,
// JSON responses) on 127.0.0.1:$DEMO_UPSTREAM_PORT until SIGINT/SIGTERM — the benchmark's
// upstream, run as its own process.
func cmdDemoUpstream(ctx context.Context) error {
	ln, err := net.Listen("tcp", "127.0.0.1:"+env("DEMO_UPSTREAM_PORT", "8090"))
	if err != nil {
		return fmt.Errorf("demo upstream: %w (set DEMO_UPSTREAM_PORT)", err)
	}
	url, stop := startDemoUpstream(ln)
	defer stop()
	fmt.Println(url)
	ctx, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()
	<-ctx.Done()
	return nil
}
