package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/agentpack/gateway/functions/mcp/gateway/apps"
	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/tasks"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/policy"
	"github.com/agentpack/gateway/shared/text"
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

// toolsPageSize is how many tools one tools/list page holds (go-sdk's server pages at the
// same size).
const toolsPageSize = 1000

// toolsList returns the tools/list result page for st at cursor ("" = the first): the
// built-ins st may see and every visible proxied tool, ordered by name, toolsPageSize a
// page with nextCursor naming the next. A proxied tool is the upstream's definition as
// listed with only "name" changed (every other member, known or not, kept as sent) — on
// the aggregate endpoint also its MCP Apps ui:// URIs, under the connection's handle
// (apps.WithURIs, docs/ARCHITECTURE.md "MCP Apps"). The result carries ttlMs 0 and cacheScope "private" (as go-sdk's own lists do, in every
// revision): the list depends on the caller's workspace, role, chat and project, and can
// change with any install. ok is false for a cursor this list never issued. When the
// workspace has access policies, the list is what their "list" decision permits st's
// caller (policy.go filteredList).
func (it *serverItem) toolsList(g *Gateway, st *requestState, cursor string) (result json.RawMessage, ok bool) {
	cp := policiesOf(st.Snapshot)
	it.listOnce.Do(func() {
		all := builtinEntries(g, st)
		if listsProxied(st) { // else progressive discovery: the built-ins only (discovery.go)
			proxiedTools(st, func(name string, c *catalog.Connection, t *catalog.Tool) {
				if e, ok := proxiedEntry(g, st, cp, name, c, t); ok {
					all = append(all, e)
				}
			})
		}
		sortEntries(all)
		if cp != nil {
			// The workspace has access policies: the list is filtered per request (policy.go).
			it.listed = all
			return
		}
		for start := 0; start == 0 || start < len(all); start += toolsPageSize {
			page := all[start:min(start+toolsPageSize, len(all))]
			b := pageBytes(page, len(it.pages), start+toolsPageSize < len(all))
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
	n := 0
	if cursor != "" {
		var err error
		if n, err = pageOf(cursor); err != nil || n <= 0 || n >= len(it.pages) {
			return nil, false
		}
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
	entries []listedTool
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
				bl.entries = append(bl.entries, listedTool{b.Name, tasks.WithExecution(def), builtinResource(b)})
			}
		}
	}
	sortEntries(bl.entries)
	head := []byte(`{"tools":[`)
	for i, e := range bl.entries {
		if i > 0 {
			head = append(head, ',')
		}
		head = append(head, e.def...)
	}
	bl.head = head
	v, _ := g.builtinLists.LoadOrStore(key, bl)
	return v.(*builtinList)
}

// builtinEntries are the tools/list entries of the built-ins st may see (none on the
// single-server endpoint), sorted by name; the definitions are the shared builtinList's.
func builtinEntries(g *Gateway, st *requestState) []listedTool {
	if st.Single != nil {
		return nil
	}
	return slices.Clone(g.builtinsFor(st).entries)
}

// proxiedEntry is the tools/list entry of proxied tool t of connection c under name
// (proxiedTools); ok is false (and the tool logged and left out) when its definition is
// unusable. cp, when not nil, gives the entry its policy resource.
func proxiedEntry(g *Gateway, st *requestState, cp *compiledPolicies, name string, c *catalog.Connection, t *catalog.Tool) (listedTool, bool) {
	def, err := toolDefinition(t, name)
	if err != nil {
		g.log.Warn("tool definition unusable", "tool", name, "err", err)
		return listedTool{}, false
	}
	if st.Single == nil {
		def = apps.WithURIs(def, c.Handle) // views under the connection's handle
	}
	var res policy.Resource
	if cp != nil {
		res = cp.toolResource(c, t)
	}
	return listedTool{name, tasks.WithExecution(def), res}, true
}

// sortEntries orders a tools/list by name (names are unique: built-ins are agentpack_*,
// proxied tools mcp_<handle>_<tool>).
func sortEntries(all []listedTool) {
	slices.SortStableFunc(all, func(a, b listedTool) int { return cmp.Compare(a.name, b.name) })
}

// pageBytes is tools/list result page n (0-based) holding page, with nextCursor naming page
// n+1 when more is true.
func pageBytes(page []listedTool, n int, more bool) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"tools":[`)
	for i, e := range page {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(e.def)
	}
	buf.WriteString(`]`)
	if more {
		buf.WriteString(`,"nextCursor":`)
		c, _ := json.Marshal(pageCursor(n + 1))
		buf.Write(c)
	}
	buf.WriteString(`,"ttlMs":0,"cacheScope":"private"}`)
	return buf.Bytes()
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
	n := toolsPageSize
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
	sortEntries(all)
	return pageBytes(all[:min(toolsPageSize, len(all))], 0, total > toolsPageSize), true, nil
}

// pageCursor is the opaque cursor of page n (1-based pages after the first).
func pageCursor(n int) string { return "page-" + strconv.Itoa(n) }

func pageOf(cursor string) (int, error) {
	s, ok := strings.CutPrefix(cursor, "page-")
	if !ok {
		return 0, errors.New("not a page cursor")
	}
	return strconv.Atoi(s)
}

// toolDefinition is t's definition under name: the stored upstream definition with its
// name replaced, or, for a tool listed before definitions were kept, one built from the
// stored members.
func toolDefinition(t *catalog.Tool, name string) ([]byte, error) {
	nb, _ := json.Marshal(name)
	if len(t.Definition) > 0 {
		if name == t.UpstreamName {
			if n, ok := definitionName(t.Definition); ok && n == name {
				return t.Definition, nil
			}
		}
		return jsonobj.SetMember(t.Definition, "name", nb)
	}
	return json.Marshal(struct {
		Name         string          `json:"name"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description,omitempty"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  json.RawMessage `json:"annotations,omitempty"`
	}{name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations})
}

func definitionName(def json.RawMessage) (string, bool) {
	var d struct {
		Name *string `json:"name"`
	}
	if json.Unmarshal(def, &d) != nil || d.Name == nil {
		return "", false
	}
	return *d.Name, true
}

// unknownTool is the message of the -32602 answer to a tools/call of name, which is neither
// a proxied tool st may call nor a built-in: go-sdk's words (`unknown tool "…"`) plus the
// next step — `did you mean "…"?` naming the closest tool st may call (one that name is a
// prefix of, else the nearest by Levenshtein distance, at most a third of name's length
// and at most 4 edits), else, on the aggregate endpoint, agentpack_tools_search to find
// one (builtin.SearchToolName).
func unknownTool(g *Gateway, st *requestState, it *serverItem, name string) string {
	msg := fmt.Sprintf("unknown tool %q", text.Clip(name, 128))
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
	if best := closestName(name, names); best != "" {
		return msg + fmt.Sprintf("; did you mean %q?", best)
	}
	if st.Single == nil {
		return msg + "; call " + builtin.SearchToolName + " to find the tool you need (tools/list names every tool)"
	}
	return msg + "; tools/list names every tool of this server"
}

// closestName is the candidate closest to name: the shortest one name is a proper prefix
// of, else the one at the smallest Levenshtein distance (ties: the first in sorted order)
// when that distance is at most max(1, len(name)/3) and at most 4; "" when none is close.
func closestName(name string, candidates []string) string {
	if name == "" || len(name) > 256 {
		return ""
	}
	slices.Sort(candidates)
	best, bestLen := "", 0
	for _, c := range candidates {
		if len(c) > len(name) && strings.HasPrefix(c, name) && (best == "" || len(c) < bestLen) {
			best, bestLen = c, len(c)
		}
	}
	if best != "" {
		return best
	}
	limit := min(max(1, len(name)/3), 4)
	bestD := limit + 1
	for _, c := range candidates {
		if d := levenshtein.ComputeDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
