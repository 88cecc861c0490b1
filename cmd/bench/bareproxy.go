package main

// The limit leg's bare proxy: a net/http/httputil.ReverseProxy this binary becomes when
// limitProxyEnv is set, and the bench's start of it as a child process.

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"
)

// limitProxyEnv, when set in this binary's environment, makes it the bare proxy instead
// of the bench: "<port> <target URL>" (init below; the bench sets it for its own child).
const limitProxyEnv = "AGENTPACK_BENCH_BARE_PROXY"

func init() {
	spec := os.Getenv(limitProxyEnv)
	if spec == "" {
		return
	}
	port, target, _ := strings.Cut(spec, " ")
	if err := serveBareProxy("127.0.0.1:"+port, target); err != nil {
		fmt.Fprintln(os.Stderr, "bench proxy:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// bareProxy is the reverse proxy for target: every request, whatever its path, goes to
// target's URL with its method, headers (Mcp-Session-Id, Mcp-Protocol-Version, …) and body
// unchanged; the answer comes back as it is (an event stream flushed as it arrives). Its
// transport keeps as many idle connections per host as the load client does, so that c=32
// does not open a connection per request.
func bareProxy(target string) (*httputil.ReverseProxy, error) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("bare proxy target %q is not an http URL", target)
	}
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.URL.Path, r.Out.URL.RawPath = u.Scheme, u.Host, u.Path, u.RawPath
			r.Out.Host = u.Host
		},
		Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute},
	}, nil
}

func serveBareProxy(addr, target string) error {
	p, err := bareProxy(target)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: addr, Handler: p, ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

// startBareProxy runs this binary as the bare proxy for target and returns its URL once it
// listens.
func startBareProxy(target string) (*proc, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	port := freePort()
	p, err := start(self, []string{limitProxyEnv + "=" + port + " " + target})
	if err != nil {
		return nil, "", err
	}
	if err := waitHTTP("127.0.0.1:"+port, 10*time.Second); err != nil {
		p.stop()
		return nil, "", err
	}
	return p, "http://127.0.0.1:" + port + "/mcp", nil
}
