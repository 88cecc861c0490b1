package auth

import (
	"net/url"
	"strings"

	"github.com/google/uuid"
)

// MCPPath is the gateway-wide MCP endpoint's path; every MCP URL the gateway serves is it or
// under it (functions/mcp/gateway's routes).
const MCPPath = "/mcp"

// MCPURLPath reports whether path is one of the MCP URLs the gateway serves, and which
// workspace it names:
//
//	/mcp                                          gateway-wide (workspace "")
//	/mcp/{workspaceId}                            one workspace (a UUID)
//	/mcp/{workspaceId}/servers/{connection}       one installed server of that workspace
//
// This is the one rule behind each URL's own protected resource metadata (RFC 9728 §3.1,
// path-inserted), the 401 challenge that points at it, and the authorization server's check
// of the RFC 8707 resource parameter (docs/AUTH.md "The resource is the URL you were
// given"). A single trailing slash is tolerated and dropped: canonical is path without it.
func MCPURLPath(path string) (canonical, workspace string, ok bool) {
	p := path
	if len(p) > len(MCPPath) {
		p = strings.TrimSuffix(p, "/")
	}
	if p == MCPPath {
		return p, "", true
	}
	rest, found := strings.CutPrefix(p, MCPPath+"/")
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if _, err := uuid.Parse(parts[0]); err != nil || len(parts[0]) != 36 {
		return "", "", false
	}
	switch {
	case len(parts) == 1:
	case len(parts) == 3 && parts[1] == "servers" && parts[2] != "" && !strings.ContainsAny(parts[2], "%?#"):
	default:
		return "", "", false
	}
	return p, strings.ToLower(parts[0]), true
}

// MCPResource checks an RFC 8707 resource (an absolute URL, no fragment) against the MCP URLs
// the gateway serves at origin base (scheme://host[:port], no trailing slash): it returns the
// canonical resource (base + the canonical path of MCPURLPath) and the workspace it names ("" for
// the gateway-wide /mcp). The scheme and host compare case-insensitively (RFC 3986 §6.2.2.1);
// ok is false for any other origin, path, a query or a fragment.
func MCPResource(base, raw string) (resource, workspace string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Fragment != "" || u.RawQuery != "" || u.User != nil || u.Opaque != "" {
		return "", "", false
	}
	b, err := url.Parse(base)
	if err != nil || !strings.EqualFold(u.Scheme, b.Scheme) || !strings.EqualFold(u.Host, b.Host) {
		return "", "", false
	}
	p, ws, ok := MCPURLPath(u.EscapedPath())
	if !ok {
		return "", "", false
	}
	return base + p, ws, true
}
