package builtin

import (
	"context"
	"encoding/json"
	"math"

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
			Name: SearchToolName, Version: "1.1.0", Toolset: toolsetMeta,
			Title: "Search tools",
			Description: "Search every tool you can call here — built-in and from connected servers — ranked by relevance (BM25 over " +
				"name, title, description and parameter names). Each hit carries the tool's inputSchema; call it directly by " +
				"name or through agentpack_tool_call.",
			Input:       `{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":200},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"],"additionalProperties":false}`,
			Output:      `{"type":"object","properties":{"tools":{"type":["array","null"],"items":{"type":"object","properties":{"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"kind":{"enum":["builtin","proxied"]},"source":{"type":"string"},"score":{"type":"number"},"inputSchema":{"type":"object"}},"required":["name","kind","source","score"]}},"total":{"type":"integer"}},"required":["tools","total"]}`,
			Annotations: readOnly,
			Handler:     Typed(s.toolsSearch),
		},
		{
			Name: CallToolName, Version: "1.0.0", Toolset: toolsetMeta,
			Title: "Call a tool by name",
			Description: "Call any tool you can call here by its name (as agentpack_tools_search returns it) with its arguments. " +
				"The answer is that tool's own answer, with the same access checks and audit as calling it directly.",
			Input: `{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":256},"arguments":{"type":"object"}},"required":["name"],"additionalProperties":false}`,
			// No Output: the edge answers with the named tool's own result, which no schema of
			// ours describes (a strict client would refuse an upstream's result against one).
			Handler: Typed(s.toolCall),
		},
	}
}

// toolCall runs only when the edge did not route the call (see the top of this file): the
// call named agentpack_tool_call itself.
type toolCallArgs struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func (s *Set) toolCall(_ context.Context, _ *Call, _ toolCallArgs) (any, error) {
	return nil, apperr.New(apperr.Validation, "%s cannot call itself", CallToolName).
		WithHint("name the tool to call, as agentpack_tools_search returns it")
}

type searchHit struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	Kind        string          `json:"kind"`   // builtin | proxied
	Source      string          `json:"source"` // "agentpack" or the connection's name
	Score       float64         `json:"score"`
	InputSchema json.RawMessage `json:"inputSchema"`
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
// catalog.Snapshot.Memo); what a caller may see is filtered per query.
func (s *Set) indexOf(snap *catalog.Snapshot) *toolIndex {
	return snap.Memo(toolIndexKey{}, func() any {
		ti := &toolIndex{builtin: s.all}
		docs := make([]search.Doc, 0, len(s.all))
		for _, b := range s.all {
			docs = append(docs, search.Doc{Name: b.Name, Title: b.Title, Description: b.Description, Params: paramNames(json.RawMessage(b.Input))})
		}
		for i := range snap.Doc.Connections {
			c := &snap.Doc.Connections[i]
			for j := range c.Tools {
				t := &c.Tools[j]
				params, ok := objectParams(t.InputSchema)
				if !ok {
					continue
				}
				ti.conns, ti.tools = append(ti.conns, c), append(ti.tools, t)
				docs = append(docs, search.Doc{Name: t.ExposedName, Title: t.Title, Description: t.Description, Params: params})
			}
		}
		ti.ix = search.New(docs)
		return ti
	}).(*toolIndex)
}

// objectParams returns the property names of an input schema whose type is "object";
// ok is false for any other schema (such tools are not served, as in tools/list).
func objectParams(raw json.RawMessage) (names []string, ok bool) {
	var s struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil || s.Type != "object" {
		return nil, false
	}
	for k := range s.Properties {
		names = append(names, k)
	}
	return names, true
}

func paramNames(raw json.RawMessage) []string {
	n, _ := objectParams(raw)
	return n
}

// toolsSearch ranks the tools the caller may call here for the query (BM25, package
// search): the built-ins it may see with the request's toolsets and the proxied tools of
// the connections visible to the request (project, chat pins), less what the access
// policies' "list" decision withholds (request.State.Listable). The index is the
// snapshot's; a query costs what matches it, not the catalog's size.
type toolsSearchArgs struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

func (s *Set) toolsSearch(_ context.Context, c *Call, in toolsSearchArgs) (any, error) {
	st := c.Req
	ti := s.indexOf(st.Snapshot)
	nb := len(ti.builtin)
	keep := func(d int) bool {
		if d < nb {
			return CanSee(c.Principal, ti.builtin[d], st.Toolsets) && (st.Listable == nil || st.Listable(nil, nil, ti.builtin[d].Name))
		}
		return st.Visible(ti.conns[d-nb]) && (st.Listable == nil || st.Listable(ti.conns[d-nb], ti.tools[d-nb], ""))
	}
	found, total := ti.ix.Search(in.Query, orDefault(in.Limit, 20), keep)
	hits := make([]searchHit, 0, len(found))
	for _, h := range found {
		score := math.Round(h.Score*1000) / 1000
		if h.Doc < nb {
			b := ti.builtin[h.Doc]
			hits = append(hits, searchHit{Name: b.Name, Title: b.Title, Description: b.Description, Kind: "builtin",
				Source: "agentpack", Score: score, InputSchema: json.RawMessage(b.Input)})
			continue
		}
		conn, t := ti.conns[h.Doc-nb], ti.tools[h.Doc-nb]
		hits = append(hits, searchHit{Name: t.ExposedName, Title: t.Title, Description: t.Description, Kind: "proxied",
			Source: conn.Name, Score: score, InputSchema: t.InputSchema})
	}
	return map[string]any{"tools": hits, "total": total}, nil
}
