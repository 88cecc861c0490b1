package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/agentpack/gateway/functions/mcp/gateway/access"
	"github.com/agentpack/gateway/functions/mcp/gateway/apps"
	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/listing"
	"github.com/agentpack/gateway/functions/mcp/gateway/tasks"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/policy"
)

// proxiedTools calls add for every proxied tool st may see, under the name the client
// calls: the upstream name on the single-server endpoint, the exposed name (mcp_<handle>_
// <tool>) on the aggregate endpoint. Tools whose input schema is not an object are
// skipped (the refresh already reported them).
func proxiedTools(st *requestState, add func(name string, c *catalog.Connection, t *catalog.Tool)) {
	if c := st.Single; c != nil {
		for j := range c.Tools {
			if t := &c.Tools[j]; t.Served() {
				add(t.UpstreamName, c, t)
			}
		}
		return
	}
	for i := range st.Snapshot.Doc.Connections {
		c := &st.Snapshot.Doc.Connections[i]
		if !st.Visible(c) {
			continue
		}
		for j := range c.Tools {
			if t := &c.Tools[j]; t.Served() {
				add(t.ExposedName, c, t)
			}
		}
	}
}

// lookup returns the proxied tool called name under st's key (it is st's item).
func (it *serverItem) lookup(st *requestState, name string) (forward.Ref, bool) {
	it.callsOnce.Do(func() {
		m := map[string]forward.Ref{}
		proxiedTools(st, func(name string, c *catalog.Connection, t *catalog.Tool) {
			m[name] = forward.Ref{Name: name, Conn: c, Tool: t}
		})
		it.calls = m
		it.grew(int64(len(m)) * callEntryBytes)
	})
	ref, ok := it.calls[name]
	return ref, ok
}

// toolsList returns the tools/list result page for st at cursor ("" = the first): the
// built-ins st may see and every visible proxied tool, ordered by name, listing.PageSize a
// page with nextCursor naming the next. A proxied tool is the upstream's definition as
// listed with only "name" changed (every other member, known or not, kept as sent) — on
// the aggregate endpoint also its MCP Apps ui:// URIs, under the connection's handle
// (apps.WithURIs, docs/ARCHITECTURE.md "MCP Apps"). The result carries ttlMs 0 and cacheScope "private" (as go-sdk's own lists do, in every
// revision): the list depends on the caller's workspace, role, chat and project, and can
// change with any install. ok is false for a cursor this list never issued. When the
// workspace has access policies, the list is what their "list" decision permits st's
// caller (filteredList, package access).
func (it *serverItem) toolsList(g *Gateway, st *requestState, cursor string) (result json.RawMessage, ok bool) {
	cp := access.Of(st.Snapshot)
	it.listOnce.Do(func() {
		all := builtinEntries(g, st)
		if listsProxied(st) { // else progressive discovery: the built-ins only (discovery.go)
			proxiedTools(st, func(name string, c *catalog.Connection, t *catalog.Tool) {
				if e, ok := proxiedEntry(g, st, cp, name, c, t); ok {
					all = append(all, e)
				}
			})
		}
		listing.Sort(all)
		if cp != nil {
			// The workspace has access policies: the list is filtered per request (filteredList).
			it.listed = all
			return
		}
		for start := 0; start == 0 || start < len(all); start += listing.PageSize {
			page := all[start:min(start+listing.PageSize, len(all))]
			b := listing.PageBytes(page, len(it.pages), start+listing.PageSize < len(all))
			if start == 0 && st.Single == nil {
				// The built-ins lead page 1: the item keeps the rest (tail), the head is shared.
				if bl := g.builtinsFor(st); len(bl.head) > len(`{"tools":[`) && bytes.HasPrefix(b, bl.head) {
					it.head = bl.head
					b = bytes.Clone(b[len(bl.head):])
				}
			}
			it.pages = append(it.pages, b)
			it.grew(int64(cap(b)))
		}
	})
	if cp != nil {
		return it.filteredList(cp, st, cursor)
	}
	n, ok := listing.PageIndex(cursor, len(it.pages))
	if !ok {
		return nil, false
	}
	if n == 0 && it.head != nil {
		return append(append(make([]byte, 0, len(it.head)+len(it.pages[0])), it.head...), it.pages[0]...), true
	}
	return it.pages[n], true
}

// builtinList is the built-ins' part of a tools/list for one role class and toolsets
// (builtin.RoleClass, builtin.CanSee): their entries by name, and head, the first page's
// bytes up to and including the last built-in's definition. It is made once per process
// and shared by every server item of that class (Gateway.builtinLists), so that a server
// item holds only its own proxied tools' bytes: built-ins are agentpack_*, proxied tools
// mcp_*, so the built-ins lead page 1 (docs/CATALOG.md "Many workspaces per instance").
// At most 3 role classes × the known toolsets' combinations exist.
type builtinList struct {
	entries []listing.Entry
	head    []byte
}

// builtinsFor returns st's role class's builtinList (made on first use).
func (g *Gateway) builtinsFor(st *requestState) *builtinList {
	key := builtin.RoleClass(st.Principal) + "|" + strings.Join(st.Toolsets, ",")
	if v, ok := g.builtinLists.Load(key); ok {
		return v.(*builtinList)
	}
	bl := &builtinList{}
	for _, b := range g.builtins.All() {
		if builtin.CanSee(st.Principal, b, st.Toolsets) {
			def, err := json.Marshal(b.Tool())
			if err == nil {
				bl.entries = append(bl.entries, listing.Entry{Name: b.Name, Def: tasks.WithExecution(def), Res: access.BuiltinResource(b)})
			}
		}
	}
	listing.Sort(bl.entries)
	head := []byte(`{"tools":[`)
	for i, e := range bl.entries {
		if i > 0 {
			head = append(head, ',')
		}
		head = append(head, e.Def...)
	}
	bl.head = head
	v, _ := g.builtinLists.LoadOrStore(key, bl)
	return v.(*builtinList)
}

// builtinEntries are the tools/list entries of the built-ins st may see (none on the
// single-server endpoint), sorted by name; the definitions are the shared builtinList's.
func builtinEntries(g *Gateway, st *requestState) []listing.Entry {
	if st.Single != nil {
		return nil
	}
	return slices.Clone(g.builtinsFor(st).entries)
}

// proxiedEntry is the tools/list entry of proxied tool t of connection c under name
// (proxiedTools); ok is false (and the tool logged and left out) when its definition is
// unusable. cp, when not nil, gives the entry its policy resource.
func proxiedEntry(g *Gateway, st *requestState, cp *access.Policies, name string, c *catalog.Connection, t *catalog.Tool) (listing.Entry, bool) {
	def, err := listing.Definition(t, name)
	if err != nil {
		g.log.Warn("tool definition unusable", "tool", name, "err", err)
		return listing.Entry{}, false
	}
	if st.Single == nil {
		def = apps.WithURIs(def, c.Handle) // views under the connection's handle
	}
	var res policy.Resource
	if cp != nil {
		res = cp.ToolResource(c, t)
	}
	return listing.Entry{Name: name, Def: tasks.WithExecution(def), Res: res}, true
}

// firstPage is toolsList's first page for a pending (lazy) catalog snapshot
// (catalog.Snapshot.Pending): the same bytes, from the index's summaries and the few parts
// that hold the first names (catalog.Snapshot.FirstTools), so that a cold start's first
// page does not wait for the whole catalog (docs/CATALOG.md "Cold start"). ok is false
// when it cannot be made so (an index without summaries, a part gone, access policies,
// the single-server endpoint or a chat): the caller then completes the snapshot and
// serves toolsList. Errors: the store's, or a part that does not decode.
func (g *Gateway) firstPage(ctx context.Context, st *requestState) (json.RawMessage, bool, error) {
	head := st.Snapshot.Head()
	if st.Single != nil || st.Allowed != nil || head == nil || head.Policies != nil {
		return nil, false, nil
	}
	all := builtinEntries(g, st)
	total := len(all)
	proxied := st.discovery == discoveryAll
	n := listing.PageSize
	if st.discovery == "" {
		// The threshold's decision (listsProxied) needs the counts only.
		_, _, count, ok, err := st.Snapshot.FirstTools(ctx, 0, st.Visible)
		if err != nil || !ok {
			return nil, ok, err
		}
		limit := DefaultDiscoveryThreshold
		if head.DiscoveryThreshold != nil {
			limit = *head.DiscoveryThreshold
		}
		proxied = count <= limit
	}
	if proxied {
		refs, served, _, ok, err := st.Snapshot.FirstTools(ctx, n, st.Visible)
		if err != nil || !ok {
			return nil, ok, err
		}
		for _, r := range refs {
			e, ok := proxiedEntry(g, st, nil, r.Tool.ExposedName, r.Conn, r.Tool)
			if !ok {
				return nil, false, nil // the whole list leaves it out: page boundaries are its
			}
			all = append(all, e)
		}
		total += served
	}
	listing.Sort(all)
	return listing.PageBytes(all[:min(listing.PageSize, len(all))], 0, total > listing.PageSize), true, nil
}

// unknownTool is the message of the -32602 answer to a tools/call of name, which is neither
// a proxied tool st may call nor a built-in: go-sdk's words (`unknown tool "…"`) plus the
// next step — `did you mean "…"?` naming the closest tool st may call (one that name is a
// prefix of, else the nearest by Levenshtein distance, at most a third of name's length
// and at most 4 edits), else, on the aggregate endpoint, agentpack_tools_search to find
// one (builtin.SearchToolName).
func unknownTool(g *Gateway, st *requestState, it *serverItem, name string) string {
	var names []string
	it.lookup(st, "") // fills it.calls
	for n := range it.calls {
		names = append(names, n)
	}
	if st.Single == nil {
		for _, b := range g.builtins.All() {
			if builtin.CanSee(st.Principal, b, st.Toolsets) {
				names = append(names, b.Name)
			}
		}
	}
	return listing.UnknownTool(name, names, st.Single == nil, builtin.SearchToolName)
}

// filteredList is toolsList for a workspace with policies: it.listed (the key's whole
// list) less what "list" denies st's caller, paged as toolsList pages. Computed per
// request, since the answer depends on the principal, the chat and the time.
func (it *serverItem) filteredList(cp *access.Policies, st *requestState, cursor string) (json.RawMessage, bool) {
	var kept []listing.Entry
	for _, t := range it.listed {
		if cp.Decide(st.State, policy.ActionList, t.Res, nil).Allowed {
			kept = append(kept, t)
		}
	}
	return listing.Page(kept, cursor)
}
