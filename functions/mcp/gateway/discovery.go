package gateway

import (
	"cmp"
	"net/http"

	"github.com/agentpack/gateway/shared/apperr"
)

// Progressive discovery (docs/ARCHITECTURE.md "Decisions worth knowing", docs/USING.md
// "Progressive discovery"). On the aggregate endpoint tools/list lists every visible tool
// unless the workspace has more visible proxied tools than its threshold (the catalog
// document's discoveryThreshold, DefaultDiscoveryThreshold when unset) or the client asks
// for discovery (?discovery=search or X-MCP-Discovery: search): then it lists the
// built-ins only, among them agentpack_tools_search (ranked search) and agentpack_tool_call
// (call by name). ?discovery=all (or the header) lists every tool whatever the threshold.
// Calling a proxied tool directly works in every mode.

// DefaultDiscoveryThreshold is the number of visible proxied tools above which tools/list
// switches to discovery when the workspace sets no threshold of its own.
const DefaultDiscoveryThreshold = 200

// Discovery modes a client may ask for.
const (
	discoverySearch = "search"
	discoveryAll    = "all"
)

// discoveryMode reads the mode the client asked for ("" = the workspace's threshold
// decides): X-MCP-Discovery, else ?discovery=. Any other value is a VALIDATION_ERROR (the
// mode is part of the server cache key, which a client must not grow at will).
func discoveryMode(r *http.Request) (string, error) {
	switch m := cmp.Or(r.Header.Get("X-MCP-Discovery"), r.URL.Query().Get("discovery")); m {
	case "", discoverySearch, discoveryAll:
		return m, nil
	default:
		return "", apperr.New(apperr.Validation, "unknown discovery mode").
			WithHint(`X-MCP-Discovery / ?discovery= is "search" (built-ins and the search tool only) or "all" (every tool)`)
	}
}

// listsProxied reports whether st's tools/list lists the proxied tools (see the top of
// this file). It counts st's visible tools: call it once per server item.
func listsProxied(st *requestState) bool {
	switch {
	case st.Single != nil || st.discovery == discoveryAll:
		return true
	case st.discovery == discoverySearch:
		return false
	}
	limit := DefaultDiscoveryThreshold
	if t := st.Snapshot.Doc.DiscoveryThreshold; t != nil {
		limit = *t
	}
	n := 0
	for i := range st.Snapshot.Doc.Connections {
		if c := &st.Snapshot.Doc.Connections[i]; st.Visible(c) {
			if n += len(c.Tools); n > limit {
				return false
			}
		}
	}
	return true
}
