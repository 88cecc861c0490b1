package api

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
)

// notOwnRESTURL refuses raw, a connection's or an install's URL, when it is this gateway's
// own REST API: a URL on the host r was sent to (the same host and port; locally any
// loopback name for a loopback host) whose path is /api or under it. Connecting there
// would POST an MCP initialize to a REST route, whose answer ("editing the shared catalog
// requires the superuser role", "not found") says nothing about the mistake (issue 44).
// VALIDATION_ERROR on field url; nil for anything else, including a URL that does not
// parse (the URL guard says what is wrong with it).
func notOwnRESTURL(r *http.Request, raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil
	}
	if u.Path != "/api" && !strings.HasPrefix(u.Path, "/api/") {
		return nil
	}
	if !sameHost(u, r) {
		return nil
	}
	return apperr.New(apperr.Validation,
		"url is this gateway's own REST API URL, not an MCP server's: enter the URL of the MCP server to connect, e.g. https://mcp.example.com/mcp (MCP clients reach this gateway itself at /mcp/{workspaceId}, which is not installed as a server)").
		WithDetails(map[string]string{"field": "url"})
}

// sameHost reports whether u names the host r was sent to: equal host and port (the
// scheme's default when absent), loopback names (localhost, 127.0.0.1, ::1) all equal.
func sameHost(u *url.URL, r *http.Request) bool {
	rh, rp, err := net.SplitHostPort(r.Host)
	if err != nil {
		rh, rp = r.Host, ""
	}
	if rp == "" {
		rp = "80"
		if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
			rp = "443"
		}
	}
	uh, up := u.Hostname(), u.Port()
	if up == "" {
		up = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if up != rp {
		return false
	}
	return strings.EqualFold(uh, strings.Trim(rh, "[]")) || (loopback(uh) && loopback(strings.Trim(rh, "[]")))
}

// loopback reports whether host is localhost or a loopback address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
