// Package web is the gateway's HTTP face apart from MCP itself: the DNS-rebinding and
// CSRF guard on the Origin and Host headers ([Site.OriginAllowed]), the CORS headers
// ([CORS]), the public base URL ([Site.BaseURL]), the OAuth 2.0 Protected Resource
// Metadata of each MCP URL (RFC 9728: [Site.ServeResourceMetadata],
// [Site.ResourceMetadataURL]) and the answers a client needs to fix its configuration: the
// 401 challenge (RFC 6750: [BearerChallenge]), the 403 that names the token's workspaces
// ([NoAccess]), the 404 that names the workspace's servers ([UnknownServer]) and the JSON
// 404 for any other path under /mcp/ ([Site.ServeNoEndpoint]).
package web

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/httpapi"
)

// Site is what the gateway's HTTP face needs of its options (gateway.Options' fields of
// the same names).
type Site struct {
	// PublicBaseURL is the gateway's external URL without a trailing slash; "" derives
	// it from the request (scheme from TLS or X-Forwarded-Proto, and Host).
	PublicBaseURL string
	// AllowedOrigins are the browser origins accepted besides loopback ones on a
	// loopback listener.
	AllowedOrigins []string
	// AuthServerURL is the external authorization server metadata names; "" with
	// OwnAuthServer names the gateway itself (scope "mcp").
	AuthServerURL string
	OwnAuthServer bool
}

// OriginAllowed is the DNS-rebinding and CSRF guard. A request that arrived on a
// loopback socket (a local run: `make run`, tests) must name a loopback Host, so that a
// page on evil.example whose DNS points at 127.0.0.1 cannot reach the local gateway; there
// a loopback Origin is also accepted. Behind API Gateway there is no loopback socket and
// only AllowedOrigins pass. Requests without an Origin header are not from a browser page.
func (s *Site) OriginAllowed(r *http.Request) bool {
	loopback := onLoopback(r)
	if loopback && !isLoopbackHost(r.Host) {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" || slices.Contains(s.AllowedOrigins, o) {
		return true
	}
	if loopback {
		if u, err := url.Parse(o); err == nil && (u.Scheme == "http" || u.Scheme == "https") && isLoopbackHost(u.Host) {
			return true
		}
	}
	return false
}

// onLoopback reports whether r arrived on a loopback listener.
func onLoopback(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || a == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// isLoopbackHost reports whether hostport (a Host header or URL host) names localhost,
// 127.0.0.1 or [::1], with or without a port.
func isLoopbackHost(hostport string) bool {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}

// CORS sets the CORS headers of an answer to a request with an Origin (the guard has
// passed it): that origin, POST and OPTIONS, the MCP and gateway request headers, and
// WWW-Authenticate and X-Request-Id exposed.
func CORS(w http.ResponseWriter, r *http.Request) {
	o := r.Header.Get("Origin")
	if o == "" {
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", o)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, X-Workspace-Id, X-Project-Id, X-Chat-Id, X-MCP-Toolsets, X-MCP-Discovery")
	h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, X-Request-Id")
	h.Set("Access-Control-Max-Age", "600")
}

// BaseURL is the gateway's external base URL for r, without a trailing slash.
func (s *Site) BaseURL(r *http.Request) string {
	if s.PublicBaseURL != "" {
		return s.PublicBaseURL
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// ResourceMetadataURL is the RFC 9728 document of the MCP URL r asked for: each MCP URL has
// its own, path-inserted (RFC 9728 §3.1), whose resource is exactly that URL, so that a client
// that checks the document against the URL it was given (RFC 9728 §3.3) accepts it. A path
// that is not one of the gateway's MCP URLs points at the gateway-wide /mcp document.
func (s *Site) ResourceMetadataURL(r *http.Request) string {
	p, _, ok := auth.MCPURLPath(r.URL.EscapedPath())
	if !ok {
		p = auth.MCPPath
	}
	return s.BaseURL(r) + MetadataPrefix + p
}

// MetadataPrefix is the path of the RFC 9728 documents (RFC 9728 §3).
const MetadataPrefix = "/.well-known/oauth-protected-resource"

// ServeResourceMetadata serves OAuth 2.0 Protected Resource Metadata (RFC 9728) for each MCP
// URL (auth.MCPURLPath): /.well-known/oauth-protected-resource/mcp/{workspaceId} names
// resource <base>/mcp/{workspaceId}, and so on; the bare document (no path) names the
// gateway-wide <base>/mcp, as it always has. Any other path is 404: no document is made up for a
// URL the gateway does not serve.
func (s *Site) ServeResourceMetadata(w http.ResponseWriter, r *http.Request) {
	base := s.BaseURL(r)
	p := strings.TrimPrefix(r.URL.EscapedPath(), MetadataPrefix)
	if p == "" || p == "/" {
		p = auth.MCPPath
	}
	canonical, _, ok := auth.MCPURLPath(p)
	if !ok {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		httpapi.JSON(w, http.StatusNotFound, map[string]any{"error": "not_found",
			"error_description": "no protected resource metadata at this path: the gateway's MCP URLs are /mcp, /mcp/{workspaceId} and /mcp/{workspaceId}/servers/{connection}"})
		return
	}
	md := map[string]any{
		"resource":                 base + canonical,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Agentpack MCP Gateway",
	}
	if s.AuthServerURL != "" {
		md["authorization_servers"] = []string{s.AuthServerURL}
	} else if s.OwnAuthServer {
		md["authorization_servers"] = []string{base}
		md["scopes_supported"] = []string{"mcp"}
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	httpapi.JSON(w, http.StatusOK, md)
}
