package gateway

import "github.com/agentpack/gateway/shared/catalog"

// ResolveMcpSourceName maps an exposed proxied tool name (mcp_<handle>_<tool>, possibly
// hash-shortened) back to the human-readable name of the connection that provides it, as
// the seed's resolveMcpSourceName does. Names are looked up in the workspace's catalog
// snapshot, never parsed: a shortened name or a handle containing "_" resolves the same
// way. It reports false for a name that is not a proxied tool of snap (e.g. a built-in).
func ResolveMcpSourceName(snap *catalog.Snapshot, exposed string) (string, bool) {
	if snap == nil {
		return "", false
	}
	ref, ok := snap.Lookup(exposed)
	if !ok {
		return "", false
	}
	return ref.Conn.Name, true
}
