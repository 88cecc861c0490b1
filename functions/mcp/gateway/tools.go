package gateway

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/mcpclient"
)

// proxiedRef is one proxied tool as a server key exposes it: the name the client calls,
// and its connection and catalog tool.
type proxiedRef struct {
	name string
	c    *catalog.Connection
	t    *catalog.Tool
}

// proxiedTools calls add for every proxied tool st may see, under the name the client
// calls: the upstream name on the single-server endpoint, the exposed name (mcp_<handle>_
// <tool>) on the aggregate endpoint. Tools whose input schema is not an object are
// skipped (the refresh already reported them).
func proxiedTools(st *requestState, add func(name string, c *catalog.Connection, t *catalog.Tool)) {
	if c := st.single; c != nil {
		for j := range c.Tools {
			if t := &c.Tools[j]; schemaIsObject(t.InputSchema) {
				add(t.UpstreamName, c, t)
			}
		}
		return
	}
	for i := range st.snap.Doc.Connections {
		c := &st.snap.Doc.Connections[i]
		if !connectionVisible(st, c) {
			continue
		}
		for j := range c.Tools {
			if t := &c.Tools[j]; schemaIsObject(t.InputSchema) {
				add(t.ExposedName, c, t)
			}
		}
	}
}

// lookup returns the proxied tool called name under st's key (it is st's item).
func (it *serverItem) lookup(st *requestState, name string) (proxiedRef, bool) {
	it.callsOnce.Do(func() {
		m := map[string]proxiedRef{}
		proxiedTools(st, func(name string, c *catalog.Connection, t *catalog.Tool) {
			m[name] = proxiedRef{name: name, c: c, t: t}
		})
		it.calls = m
	})
	ref, ok := it.calls[name]
	return ref, ok
}

// toolsList returns the tools/list result for st: the built-ins st may see and every
// visible proxied tool, ordered by name. A proxied tool is the upstream's definition as
// listed with only "name" changed (every other member, known or not, kept as sent).
// The result carries ttlMs 0 and cacheScope "private" (as go-sdk's own lists do, in every
// revision): the list depends on the caller's workspace, role, chat and project, and can
// change with any install.
func (it *serverItem) toolsList(g *Gateway, st *requestState) json.RawMessage {
	it.listOnce.Do(func() {
		type named struct {
			name string
			def  []byte
		}
		var all []named
		if st.single == nil {
			for _, b := range g.builtins {
				if canSee(st.principal, b, st.toolsets) {
					def, err := json.Marshal(b.tool)
					if err == nil {
						all = append(all, named{b.Name, def})
					}
				}
			}
		}
		proxiedTools(st, func(name string, _ *catalog.Connection, t *catalog.Tool) {
			if def, err := toolDefinition(t, name); err == nil {
				all = append(all, named{name, def})
			} else {
				g.log.Warn("tool definition unusable", "tool", name, "err", err)
			}
		})
		slices.SortStableFunc(all, func(a, b named) int { return cmp.Compare(a.name, b.name) })
		var buf bytes.Buffer
		buf.WriteString(`{"tools":[`)
		for i, n := range all {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(n.def)
		}
		buf.WriteString(`],"ttlMs":0,"cacheScope":"private"}`)
		it.list = buf.Bytes()
	})
	return it.list
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
		return mcpclient.SetMember(t.Definition, "name", nb)
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
