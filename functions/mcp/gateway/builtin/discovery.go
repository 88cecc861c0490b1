package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	gschema "github.com/google/jsonschema-go/jsonschema"
	"math"
	"strconv"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/search"
)

// Progressive discovery (docs/ARCHITECTURE.md "Decisions worth knowing"): a workspace with
// more tools than a model's context holds lists only the built-ins, among them a ranked
// search (agentpack_tools_search) and a call by name (agentpack_tool_call). The gateway's
// edge turns a call of agentpack_tool_call into the direct tools/call it names before
// anything else reads the request, so that call has exactly a direct call's access checks,
// audit and pass-through; its handler here runs only when the edge could not (it names
// itself).

// Names of the discovery built-ins.
const (
	SearchToolName = "agentpack_tools_search"
	CallToolName   = "agentpack_tool_call"
)

func (s *Set) discoveryDefinitions() []*Builtin {
	return []*Builtin{
		{
			Name: SearchToolName, Version: "1.2.0", Toolset: toolsetMeta,
			Title: "Search tools",
			Description: "Search every tool you can call here — built-in and from connected servers — for a need in your own words " +
				"(English, Portuguese, Spanish or German; synonyms count), ranked by relevance. Each hit names its server " +
				"(source, connection), the fields your words matched, and its inputSchema; call it directly by name or through " +
				"agentpack_tool_call. connection narrows the search to one server (its name or handle; agentpack for the " +
				"built-ins). When nothing matches, the answer lists the servers here.",
			Input:       Input{Props: map[string]*gschema.Schema{"query": {MinLength: ptr(1), MaxLength: ptr(200)}, "limit": {Minimum: ptr[float64](1), Maximum: ptr[float64](100)}, "connection": {MaxLength: ptr(256)}}},
			Annotations: readOnly,
			Handler:     Typed(s.toolsSearch),
		},
		{
			Name: CallToolName, Version: "1.0.0", Toolset: toolsetMeta,
			Title: "Call a tool by name",
			Description: "Call any tool you can call here by its name (as agentpack_tools_search returns it) with its arguments. " +
				"The answer is that tool's own answer, with the same access checks and audit as calling it directly.",
			Input: Input{Props: map[string]*gschema.Schema{"name": {MinLength: ptr(1), MaxLength: ptr(256)}}},
			// Unstructured (no outputSchema): the edge answers with the named tool's own
			// result, which no schema of ours describes.
			Handler: Typed(s.toolCall),
		},
	}
}

// toolCall runs only when the edge did not route the call (see the top of this file): the
// call named agentpack_tool_call itself.
type toolCallArgs struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

func (s *Set) toolCall(_ context.Context, _ *Call, _ toolCallArgs) (Unstructured, error) {
	return Unstructured{}, apperr.New(apperr.Validation, "%s cannot call itself", CallToolName).
		WithHint("name the tool to call, as agentpack_tools_search returns it")
}

type searchHit struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	Kind        string          `json:"kind" enum:"builtin,proxied"`
	Source      string          `json:"source"`               // "agentpack" or the connection's name
	Connection  string          `json:"connection,omitempty"` // the connection's handle (proxied tools)
	Score       float64         `json:"score"`
	Matched     []string        `json:"matched"` // the fields a query word (or its synonym or translation) occurred in
	InputSchema json.RawMessage `json:"inputSchema"`
}

// searchAnswer is agentpack_tools_search's answer: the hits, best first, and how many
// tools matched in all; when none did, the servers the caller can search and a hint.
type searchAnswer struct {
	Hint    string       `json:"hint,omitempty"`
	Servers []serverInfo `json:"servers,omitempty"`
	Tools   []searchHit  `json:"tools"`
	Total   int          `json:"total"`
}

// serverInfo is one server a caller can search, as a search that finds nothing lists
// them.
type serverInfo struct {
	Name       string `json:"name"`
	Connection string `json:"connection"`
	Tools      int    `json:"tools"`
}

// toolIndex is one snapshot's search index: the built-ins, then every proxied tool with
// an object input schema, in document order.
type toolIndex struct {
	ix      *search.Index
	builtin []*Compiled
	conns   []*catalog.Connection // for positions len(builtin)…
	tools   []*catalog.Tool
}

type toolIndexKey struct{}

// indexOf returns snap's index of every tool (built lazily once per snapshot,
// catalog.Snapshot.Memo); what a caller may see is filtered per query. A tool's document
// is search.ToolDoc's: its upstream name, title, description, parameters, and its
// connection's name and handle.
func (s *Set) indexOf(snap *catalog.Snapshot) *toolIndex {
	return snap.Memo(toolIndexKey{}, func() any {
		ti := &toolIndex{builtin: s.all}
		docs := make([]search.Doc, 0, len(s.all))
		for _, b := range s.all {
			d, _ := search.ToolDoc("agentpack", "", b.Name, b.Title, b.Description, b.InputSchema())
			docs = append(docs, d)
		}
		for i := range snap.Doc.Connections {
			c := &snap.Doc.Connections[i]
			for j := range c.Tools {
				t := &c.Tools[j]
				name := t.UpstreamName
				if name == "" {
					name = t.ExposedName
				}
				d, ok := search.ToolDoc(c.Name+" "+c.Handle, "", name, t.Title, t.Description, t.InputSchema)
				if !ok {
					continue
				}
				ti.conns, ti.tools = append(ti.conns, c), append(ti.tools, t)
				docs = append(docs, d)
			}
		}
		ti.ix = search.New(docs)
		return ti
	}).(*toolIndex)
}

// toolsSearch ranks the tools the caller may call here for the query (package search:
// BM25F with stemming, synonyms and Portuguese, Spanish and German words): the built-ins
// it may see with the request's toolsets and the proxied tools of the connections visible
// to the request (project, chat pins), or of one of them (connection: its name or
// handle, case-insensitive; "agentpack" for the built-ins). The index is the snapshot's;
// a query costs what matches it, not the catalog's size. When nothing matches, the answer
// lists the servers the caller can search (name, handle, tool count) and a hint; an
// unknown connection is a validation error that lists them too. What the access policies'
// "list" decision withholds (request.State.Listable) is never found.
type toolsSearchArgs struct {
	Query      string `json:"query" jsonschema:"what you need, in a few words"`
	Limit      int    `json:"limit,omitempty" jsonschema:"at most this many hits (20)"`
	Connection string `json:"connection,omitempty" jsonschema:"only this server's tools: a connection's name or handle, or agentpack"`
}

func (s *Set) toolsSearch(_ context.Context, c *Call, in toolsSearchArgs) (searchAnswer, error) {
	st := c.Req
	ti := s.indexOf(st.Snapshot)
	nb := len(ti.builtin)
	var only *catalog.Connection
	builtinsOnly := false
	if want := strings.TrimSpace(in.Connection); want != "" {
		switch {
		case strings.EqualFold(want, "agentpack"):
			builtinsOnly = true
		default:
			for i := range st.Snapshot.Doc.Connections {
				conn := &st.Snapshot.Doc.Connections[i]
				if st.Visible(conn) && (strings.EqualFold(conn.Handle, want) || strings.EqualFold(conn.Name, want)) {
					only = conn
					break
				}
			}
			if only == nil {
				return searchAnswer{}, apperr.New(apperr.Validation, "no connection named %q here", want).
					WithHint("search without connection, or name one of: " + serverList(s.servers(c, ti)))
			}
		}
	}
	keep := func(d int) bool {
		if d < nb {
			return only == nil && CanSee(c.Principal, ti.builtin[d], st.Toolsets) &&
				(st.Listable == nil || st.Listable(nil, nil, ti.builtin[d].Name))
		}
		if builtinsOnly {
			return false
		}
		conn := ti.conns[d-nb]
		if only != nil && conn != only {
			return false
		}
		return st.Visible(conn) && (st.Listable == nil || st.Listable(conn, ti.tools[d-nb], ""))
	}
	found, total := ti.ix.Search(in.Query, orDefault(in.Limit, 20), keep)
	hits := make([]searchHit, 0, len(found))
	for _, h := range found {
		score := math.Round(h.Score*1000) / 1000
		if h.Doc < nb {
			b := ti.builtin[h.Doc]
			hits = append(hits, searchHit{Name: b.Name, Title: b.Title, Description: b.Description, Kind: "builtin",
				Source: "agentpack", Score: score, Matched: h.Fields(), InputSchema: b.InputSchema()})
			continue
		}
		conn, t := ti.conns[h.Doc-nb], ti.tools[h.Doc-nb]
		hits = append(hits, searchHit{Name: t.ExposedName, Title: t.Title, Description: t.Description, Kind: "proxied",
			Source: conn.Name, Connection: conn.Handle, Score: score, Matched: h.Fields(), InputSchema: t.InputSchema})
	}
	out := searchAnswer{Tools: hits, Total: total}
	if total == 0 {
		out.Servers = s.servers(c, ti)
		out.Hint = "No tool here matched " + strconv.Quote(in.Query) + ". Try other words (what the tool acts on, or the " +
			"service's name), or search one server with connection. Servers here: " + serverList(out.Servers) + "."
	}
	return out, nil
}

// servers lists what a caller can search: the built-ins ("agentpack") it may see, then
// each visible connection with its count of searchable tools, in document order.
func (s *Set) servers(c *Call, ti *toolIndex) []serverInfo {
	st := c.Req
	n := 0
	for _, b := range ti.builtin {
		if CanSee(c.Principal, b, st.Toolsets) {
			n++
		}
	}
	out := []serverInfo{{Name: "Agentpack built-ins", Connection: "agentpack", Tools: n}}
	counts := map[*catalog.Connection]int{}
	for _, conn := range ti.conns {
		counts[conn]++
	}
	for i := range st.Snapshot.Doc.Connections {
		conn := &st.Snapshot.Doc.Connections[i]
		if st.Visible(conn) {
			out = append(out, serverInfo{Name: conn.Name, Connection: conn.Handle, Tools: counts[conn]})
		}
	}
	return out
}

// serverList is servers as one line for a hint (at most 50 named, then how many more).
func serverList(servers []serverInfo) string {
	var b strings.Builder
	for i, sv := range servers {
		if i == 50 {
			fmt.Fprintf(&b, " and %d more", len(servers)-50)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (connection %q, %d tools)", sv.Name, sv.Connection, sv.Tools)
	}
	return b.String()
}
