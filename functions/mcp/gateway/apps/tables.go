package apps

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// view is one view the aggregate endpoint lists.
type view struct {
	uri      string // the aggregate URI (URI)
	upstream string // the upstream's own
	conn     *catalog.Connection
	def      json.RawMessage // the upstream's resource object as listed; nil: only a tool names it
}

// Tables are one server key's MCP Apps tables: its views and its visible connections by
// handle. Build makes them once per key; they are read-only after.
type Tables struct {
	views    []view                         // by aggregate URI
	byHandle map[string]*catalog.Connection // visible connections by handle
	// settings is the extension's settings to advertise: those of the connections with
	// views when they all declared the same, else {}.
	settings json.RawMessage
}

// Estimated bytes of a table entry (Tables.Weight): a connection by handle, and a view
// (the entry plus its aggregate URI).
const (
	connEntryBytes = 64
	viewEntryBytes = connEntryBytes + 128
)

// Build returns the tables of st's endpoint (empty on the single-server one, which passes
// views through): every visible connection by handle, and its views — the ui:// resources
// its upstream listed at the last refresh (catalog.Connection.UIResources) and those its
// served tools name, once each, ordered by aggregate URI. A URI go-sdk could not register
// (url.Parse fails) is left out: AddResource panics on it.
func Build(st *request.State) *Tables {
	t := &Tables{byHandle: map[string]*catalog.Connection{}, settings: json.RawMessage(`{}`)}
	if st.Single != nil {
		return t
	}
	seen := map[string]bool{}
	var settings []json.RawMessage
	for i := range st.Snapshot.Doc.Connections {
		c := &st.Snapshot.Doc.Connections[i]
		if !st.Visible(c) {
			continue
		}
		t.byHandle[c.Handle] = c
		n := len(t.views)
		add := func(u string, def json.RawMessage) {
			ns, ok := URI(c.Handle, u)
			if !ok || seen[ns] {
				return
			}
			if _, err := url.Parse(ns); err != nil {
				return
			}
			seen[ns] = true
			t.views = append(t.views, view{uri: ns, upstream: u, conn: c, def: def})
		}
		for _, d := range c.UIResources {
			var r struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(d, &r) == nil {
				add(r.URI, d)
			}
		}
		for j := range c.Tools {
			if tool := &c.Tools[j]; tool.Served() {
				for _, u := range toolURIs(tool.Definition) {
					add(u, nil)
				}
			}
		}
		if len(t.views) > n {
			settings = append(settings, objectSettings(c))
		}
	}
	slices.SortFunc(t.views, func(x, y view) int { return strings.Compare(x.uri, y.uri) })
	if len(settings) > 0 && settings[0] != nil &&
		!slices.ContainsFunc(settings, func(s json.RawMessage) bool { return !jsonSame(s, settings[0]) }) {
		t.settings = settings[0]
	}
	return t
}

// objectSettings is the extension's settings connection c declared at its last connect
// (nil: none, or not an object).
func objectSettings(c *catalog.Connection) json.RawMessage {
	s := c.Extension(Extension)
	if len(s) == 0 || s[0] != '{' {
		return nil
	}
	return s
}

// jsonSame reports whether a and b are the same JSON value (spacing and member order
// aside).
func jsonSame(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ab, _ := json.Marshal(va)
	bb, _ := json.Marshal(vb)
	return bytes.Equal(ab, bb)
}

// Weight is t's estimated size in bytes, for the server cache's budget.
func (t *Tables) Weight() int64 {
	return int64(len(t.byHandle))*connEntryBytes + int64(len(t.views))*viewEntryBytes
}

// Capability returns the extension's settings to advertise in capabilities.extensions
// under [Extension]: ok is false when t has no views (nothing is advertised then). The
// settings are those the connections with views declared when they all agree, else {}.
func (t *Tables) Capability() (settings json.RawMessage, ok bool) {
	return t.settings, len(t.views) > 0
}

// Register registers t's views on s, so that go-sdk lists them (resources/list, with its
// paging) next to the gateway's own resources: as the upstream listed them (name, title,
// description, _meta, …) with the aggregate URI, and with name <handle>/<rest> and mimeType
// text/html;profile=mcp-app where the upstream listed none (a view only a tool names).
// Their reads are the edge's (Read); the handler registered here serves one only when a
// request reaches go-sdk anyway, reading through fw.
func (t *Tables) Register(s *mcp.Server, fw *forward.Forwarder) {
	for _, v := range t.views {
		res := &mcp.Resource{}
		if v.def != nil && json.Unmarshal(v.def, res) != nil {
			res = &mcp.Resource{}
		}
		r, _ := rest(v.uri)
		res.URI = v.uri
		if res.Name == "" {
			res.Name = r
		}
		if res.MIMEType == "" {
			res.MIMEType = MIMEType
		}
		if res.Description == "" {
			res.Description = "MCP App view of " + v.conn.Name + " (upstream URI " + v.upstream + ")"
		}
		s.AddResource(res, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			st := request.From(ctx)
			if st == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no request state"}
			}
			params, err := json.Marshal(req.Params)
			if err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
			}
			raw, err := t.Read(ctx, fw, st, req.Params.URI, params)
			if err != nil {
				return nil, err
			}
			var out mcp.ReadResourceResult
			if err := json.Unmarshal(raw, &out); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the upstream's resources/read result is not one"}
			}
			return &out, nil
		})
	}
}

// Reads reports whether params (of a resources/read) name an aggregate ui:// URI of a
// visible connection, and returns that URI.
func (t *Tables) Reads(params json.RawMessage) (string, bool) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", false
	}
	h, _, ok := Target(p.URI)
	return p.URI, ok && t.byHandle[h] != nil
}

// Read reads aggregate ui:// URI uri (Target) from its connection, which must be visible
// (t's): the client's params (the request's own members kept) with the upstream's own URI,
// sent through fw. It returns the upstream's result with every contents[].uri that is a
// view URI mapped back to its aggregate form (every other byte kept). A URI of no visible
// connection is -32602 (the 2026-07-28 code for an unknown resource; older revisions define
// -32002, which go-sdk answers for the URIs the edge does not route). The upstream's
// JSON-RPC error reaches the client as it is (forward.Forwarder.Method).
func (t *Tables) Read(ctx context.Context, fw *forward.Forwarder, st *request.State, uri string, params json.RawMessage) (json.RawMessage, error) {
	handle, upstream, ok := Target(uri)
	c := t.byHandle[handle]
	if !ok || c == nil {
		return nil, wire.InvalidParams("resource not found: " + uri)
	}
	up, err := jsonobj.SetMember(params, "uri", jsonobj.String(upstream))
	if err != nil {
		return nil, wire.InvalidParams("params must be an object")
	}
	res, err := fw.Method(ctx, st, c, "resources/read", up)
	if err != nil {
		return nil, err
	}
	return readResult(res, handle), nil
}
