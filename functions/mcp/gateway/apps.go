package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Apps on the aggregate endpoint (the io.modelcontextprotocol/ui extension, SEP-1865,
// stable 2026-01-26; docs/ARCHITECTURE.md "MCP Apps"). Upstream views are ui:// resources
// that tools name in _meta.ui.resourceUri (and the deprecated flat _meta["ui/resourceUri"]).
// Two upstreams may both name ui://dashboard/app.html, so the aggregate endpoint shows
// every upstream ui:// URI under its connection's handle:
//
//	ui://<host+path…>  (upstream)  ⇄  ui://<handle>/<host+path…>  (client)
//
// The handle ([a-z0-9]{1,16}, unique in a workspace) becomes the URI's authority, so the
// client still sees a ui:// URI and each connection's views get an authority of their own.
// The mapping is a pure function both ways: no table, nothing stored.
//
// What the aggregate endpoint lists is taken from the catalog snapshot, never from the
// upstreams at request time: the ui:// resources each upstream listed at its last refresh
// (stored, migrations/00017) and the ui:// URIs the visible tools' definitions name (the
// spec makes tool metadata the discovery path: servers MAY leave UI-only resources out of
// resources/list). resources/read of ui://<handle>/… goes to that connection with the
// upstream's own URI, and the result comes back with its bytes intact except the contents'
// ui:// uri members, mapped back. Per request this is one map lookup; the tables are built
// once per server key, like tools/list.

// uiExtension is the MCP Apps extension's identifier (capabilities.extensions key).
const uiExtension = "io.modelcontextprotocol/ui"

// appMIMEType is the MIME type of an MCP App view (SEP-1865 "UI Resource Format").
const appMIMEType = "text/html;profile=mcp-app"

const uiScheme = "ui://"

// uiRest returns what follows the ui:// scheme of uri (the scheme matched without regard
// to case, RFC 3986 §3.1); ok is false for any other URI.
func uiRest(uri string) (rest string, ok bool) {
	if len(uri) < len(uiScheme) || !strings.EqualFold(uri[:len(uiScheme)], uiScheme) {
		return "", false
	}
	return uri[len(uiScheme):], true
}

// appURI is the aggregate endpoint's name of connection handle's upstream view URI uri:
// ui://<handle>/<what followed ui://> for a ui:// URI, and ui://<handle>/:<uri> for an
// opaque URI (RFC 3986 §3: a scheme and no authority, such as memo:board-1 or
// urn:x:view — issue 34: views an upstream serves under such URIs were not listed). The
// ":" form cannot collide with a ui:// one: after ui://<handle>/ a ui:// URI's authority
// follows, which starts with ":" only before a port (digits), while a scheme starts with a
// letter. ok is false for any other URI (https://…, file:///…, malformed).
func appURI(handle, uri string) (string, bool) {
	if rest, ok := uiRest(uri); ok {
		return uiScheme + handle + "/" + rest, true
	}
	if opaqueURI(uri) {
		return uiScheme + handle + "/:" + uri, true
	}
	return "", false
}

// opaqueURI reports whether uri is an absolute URI without an authority or a rooted path
// (RFC 3986 §3, "path-rootless"; net/url's Opaque): scheme ":" then anything but "/".
func opaqueURI(uri string) bool {
	u, err := url.Parse(uri)
	return err == nil && u.Scheme != "" && u.Opaque != "" && !strings.EqualFold(u.Scheme, "ui")
}

// appTarget reverses appURI: the handle and the upstream's own URI of an aggregate
// ui:// URI; ok is false when uri is not of that form (no ui:// scheme, no "/" after a
// non-empty handle, a ":" form that is no opaque URI).
func appTarget(uri string) (handle, upstream string, ok bool) {
	rest, ok := uiRest(uri)
	if !ok {
		return "", "", false
	}
	handle, orig, found := strings.Cut(rest, "/")
	if !found || handle == "" {
		return "", "", false
	}
	if len(orig) > 1 && orig[0] == ':' && isLetter(orig[1]) {
		if !opaqueURI(orig[1:]) {
			return "", "", false
		}
		return handle, orig[1:], true
	}
	return handle, uiScheme + orig, true
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// viewURI reports whether uri can name an MCP App view the aggregate endpoint maps: a
// ui:// URI or an opaque one (appURI).
func viewURI(uri string) bool {
	_, ok := uiRest(uri)
	return ok || opaqueURI(uri)
}

// toolUIMeta is the part of a tool definition the apps code reads.
type toolUIMeta struct {
	Meta struct {
		UI struct {
			ResourceURI *string `json:"resourceUri"`
		} `json:"ui"`
		Flat *string `json:"ui/resourceUri"`
	} `json:"_meta"`
}

// toolAppURIs returns the view URIs (viewURI: ui:// or opaque) definition def names
// (_meta.ui.resourceUri and the deprecated _meta["ui/resourceUri"]), without repeats.
func toolAppURIs(def json.RawMessage) []string {
	if !bytes.Contains(def, []byte(`resourceUri`)) {
		return nil
	}
	var d toolUIMeta
	if json.Unmarshal(def, &d) != nil {
		return nil
	}
	var out []string
	for _, p := range []*string{d.Meta.UI.ResourceURI, d.Meta.Flat} {
		if p != nil {
			if viewURI(*p) && !slices.Contains(out, *p) {
				out = append(out, *p)
			}
		}
	}
	return out
}

// withAppURIs returns tool definition def with its _meta.ui.resourceUri and
// _meta["ui/resourceUri"] (when they are ui:// URIs) shown as handle's aggregate URIs
// (appURI); every other byte is kept. A definition without them is returned as it is.
func withAppURIs(def json.RawMessage, handle string) json.RawMessage {
	if len(toolAppURIs(def)) == 0 {
		return def
	}
	top, ok := jsonobj.Members(def)
	if !ok {
		return def
	}
	meta := top["_meta"]
	mm, ok := jsonobj.Members(meta)
	if !ok {
		return def
	}
	// setURI returns obj with member key (a ui:// URI string) shown under handle.
	setURI := func(obj json.RawMessage, key string) json.RawMessage {
		m, _ := jsonobj.Members(obj)
		var s string
		if json.Unmarshal(m[key], &s) != nil {
			return obj
		}
		ns, ok := appURI(handle, s)
		if !ok {
			return obj
		}
		if out, err := jsonobj.SetMember(obj, key, jsonString(ns)); err == nil {
			return out
		}
		return obj
	}
	if ui, ok := jsonobj.Members(mm["ui"]); ok && ui["resourceUri"] != nil {
		if nui := setURI(mm["ui"], "resourceUri"); !bytes.Equal(nui, mm["ui"]) {
			if out, err := jsonobj.SetMember(meta, "ui", nui); err == nil {
				meta = out
			}
		}
	}
	if mm["ui/resourceUri"] != nil {
		meta = setURI(meta, "ui/resourceUri")
	}
	out, err := jsonobj.SetMember(def, "_meta", meta)
	if err != nil {
		return def
	}
	return out
}

// appResource is one ui:// resource the aggregate endpoint lists.
type appResource struct {
	uri      string // the aggregate URI (appURI)
	upstream string // the upstream's own
	conn     *catalog.Connection
	def      json.RawMessage // the upstream's resource object as listed; nil: only a tool names it
}

// appTables are a server key's MCP Apps tables (built once, appsOf).
type appTables struct {
	list     []appResource                  // by aggregate URI
	byHandle map[string]*catalog.Connection // visible connections by handle
	// settings is the extension's settings to advertise: those of the connections with
	// views when they all declared the same, else {}.
	settings json.RawMessage
}

// appsOf returns st's MCP Apps tables (aggregate endpoint; empty on the single-server
// one): every visible connection by handle, and its views — the ui:// resources its
// upstream listed at the last refresh (catalog.Connection.UIResources) and those its
// served tools name, once each. A URI go-sdk could not register (url.Parse fails) is left
// out: AddResource panics on it.
func (it *serverItem) appsOf(st *requestState) *appTables {
	it.appsOnce.Do(func() {
		a := &appTables{byHandle: map[string]*catalog.Connection{}}
		it.apps = a
		if st.Single != nil {
			return
		}
		seen := map[string]bool{}
		var settings []json.RawMessage
		for i := range st.Snapshot.Doc.Connections {
			c := &st.Snapshot.Doc.Connections[i]
			if !st.Visible(c) {
				continue
			}
			a.byHandle[c.Handle] = c
			n := len(a.list)
			add := func(u string, def json.RawMessage) {
				ns, ok := appURI(c.Handle, u)
				if !ok || seen[ns] {
					return
				}
				if _, err := url.Parse(ns); err != nil {
					return
				}
				seen[ns] = true
				a.list = append(a.list, appResource{uri: ns, upstream: u, conn: c, def: def})
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
				if t := &c.Tools[j]; schemaIsObject(t.InputSchema) {
					for _, u := range toolAppURIs(t.Definition) {
						add(u, nil)
					}
				}
			}
			if len(a.list) > n {
				settings = append(settings, uiSettings(c))
			}
		}
		slices.SortFunc(a.list, func(x, y appResource) int { return strings.Compare(x.uri, y.uri) })
		a.settings = json.RawMessage(`{}`)
		if len(settings) > 0 && settings[0] != nil &&
			!slices.ContainsFunc(settings, func(s json.RawMessage) bool { return !jsonSame(s, settings[0]) }) {
			a.settings = settings[0]
		}
		it.grew(int64(len(a.byHandle))*appsConnEntryBytes + int64(len(a.list))*(appsConnEntryBytes+128))
	})
	return it.apps
}

// uiSettings is the io.modelcontextprotocol/ui settings connection c declared at its last
// connect (nil: none).
func uiSettings(c *catalog.Connection) json.RawMessage {
	u, ok := capsOf(c)
	if !ok {
		return nil
	}
	s := u.Extensions[uiExtension]
	if len(s) == 0 || s[0] != '{' {
		return nil
	}
	return s
}

// jsonString is s as a JSON string, with <, > and & as they are (json.Marshal would
// escape them: a URI must come back as the upstream spelled it).
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

func jsonSame(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ab, _ := json.Marshal(va)
	bb, _ := json.Marshal(vb)
	return bytes.Equal(ab, bb)
}

// withAppsCapability returns caps with the MCP Apps extension advertised when a is not
// empty (caps itself otherwise; it is never modified).
func withAppsCapability(caps *mcp.ServerCapabilities, a *appTables) *mcp.ServerCapabilities {
	if len(a.list) == 0 {
		return caps
	}
	c := *caps
	c.Extensions = maps.Clone(caps.Extensions)
	if c.Extensions == nil {
		c.Extensions = map[string]any{}
	}
	c.Extensions[uiExtension] = a.settings
	return &c
}

// addAppResources registers a's views on s, so that go-sdk lists them (resources/list,
// with its paging) next to the gateway's own resources: as the upstream listed them
// (name, title, description, _meta, …) with the aggregate URI, and with name
// <handle>/<rest> and mimeType text/html;profile=mcp-app where the upstream listed none
// (a view only a tool names). Their reads are the edge's (readApp); the handler here
// serves one only when a request reaches go-sdk anyway.
func (g *Gateway) addAppResources(s *mcp.Server, a *appTables) {
	for _, r := range a.list {
		res := &mcp.Resource{}
		if r.def != nil && json.Unmarshal(r.def, res) != nil {
			res = &mcp.Resource{}
		}
		rest, _ := uiRest(r.uri)
		res.URI = r.uri
		if res.Name == "" {
			res.Name = rest
		}
		if res.MIMEType == "" {
			res.MIMEType = appMIMEType
		}
		if res.Description == "" {
			res.Description = "MCP App view of " + r.conn.Name + " (upstream URI " + r.upstream + ")"
		}
		s.AddResource(res, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			st := stateFrom(ctx)
			if st == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no request state"}
			}
			params, err := json.Marshal(req.Params)
			if err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
			}
			raw, err := g.readApp(ctx, st.State, a, req.Params.URI, params)
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

// appRead reports whether params (of a resources/read) name an aggregate ui:// URI of a
// visible connection, and returns that URI.
func appRead(a *appTables, params json.RawMessage) (string, bool) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", false
	}
	h, _, ok := appTarget(p.URI)
	return p.URI, ok && a.byHandle[h] != nil
}

// readApp reads aggregate ui:// URI uri (appTarget) from its connection, which must be
// visible (a.byHandle): the client's params (the request's own members kept) with the
// upstream's own URI. It returns the upstream's result with every contents[].uri that is
// a ui:// URI mapped back to its aggregate form (every other byte kept). A URI of no
// visible connection is -32602 (the 2026-07-28 code for an unknown resource; older
// revisions define -32002, which go-sdk answers for the URIs the edge does not route).
// The upstream's JSON-RPC error reaches the client as it is (forward.Method).
func (g *Gateway) readApp(ctx context.Context, st *request.State, a *appTables, uri string, params json.RawMessage) (json.RawMessage, error) {
	handle, upstream, ok := appTarget(uri)
	c := a.byHandle[handle]
	if !ok || c == nil {
		return nil, wire.InvalidParams("resource not found: " + uri)
	}
	up, err := jsonobj.SetMember(params, "uri", jsonString(upstream))
	if err != nil {
		return nil, wire.InvalidParams("params must be an object")
	}
	res, err := g.forward.Method(ctx, st, c, "resources/read", up)
	if err != nil {
		return nil, err
	}
	return appResult(res, handle), nil
}

// appResult is a resources/read result with each contents[].uri that is a view URI (ui://
// or opaque: it is the view's read) shown as handle's aggregate URI; every other byte (spacing between the items included) is
// kept. A result of another shape is returned as it is (the client judges it, as for any
// forwarded result).
func appResult(res json.RawMessage, handle string) json.RawMessage {
	m, ok := jsonobj.Members(res)
	if !ok || m["contents"] == nil {
		return res
	}
	contents, changed := mapItems(m["contents"], func(item json.RawMessage) (json.RawMessage, bool) {
		im, ok := jsonobj.Members(item)
		if !ok {
			return nil, false
		}
		var u string
		if json.Unmarshal(im["uri"], &u) != nil {
			return nil, false
		}
		ns, ok := appURI(handle, u)
		if !ok {
			return nil, false
		}
		edited, err := jsonobj.SetMember(item, "uri", jsonString(ns))
		return edited, err == nil
	})
	if !changed {
		return res
	}
	edited, err := jsonobj.SetMember(res, "contents", contents)
	if err != nil {
		return res
	}
	return edited
}

// appCallResult is a proxied tools/call result on the aggregate endpoint with the view URIs
// it carries shown as connection handle's aggregate URIs, as tools/list shows the tool's
// (issue 34: the listing was rewritten and the result was not, so a host rendering the
// result looked for the upstream's own ui://dashboard/app.html): the result's
// _meta.ui.resourceUri and _meta["ui/resourceUri"] (withAppURIs), and in content[] the uri
// of a resource_link and the resource.uri of an embedded resource when it is a ui:// URI,
// or an opaque one of an MCP App view (mimeType text/html;profile=mcp-app). Every other byte
// is kept; a result of another shape comes back as it is.
func appCallResult(res json.RawMessage, handle string) json.RawMessage {
	if !bytes.Contains(res, []byte("ui://")) && !bytes.Contains(res, []byte("resourceUri")) && !bytes.Contains(res, []byte("mcp-app")) {
		return res // the cheap test first: most results carry no view
	}
	res = withAppURIs(res, handle)
	m, ok := jsonobj.Members(res)
	if !ok || m["content"] == nil {
		return res
	}
	content, changed := mapItems(m["content"], func(item json.RawMessage) (json.RawMessage, bool) {
		im, ok := jsonobj.Members(item)
		if !ok {
			return nil, false
		}
		var typ string
		_ = json.Unmarshal(im["type"], &typ)
		switch typ {
		case "resource_link":
			return mapURIMember(item, "uri", handle)
		case "resource":
			r, ok := mapURIMember(im["resource"], "uri", handle)
			if !ok {
				return nil, false
			}
			out, err := jsonobj.SetMember(item, "resource", r)
			return out, err == nil
		}
		return nil, false
	})
	if !changed {
		return res
	}
	if out, err := jsonobj.SetMember(res, "content", content); err == nil {
		return out
	}
	return res
}

// mapURIMember returns obj with its member key (a URI) shown under handle when it is a ui://
// URI, or an opaque URI and obj's mimeType is the MCP App one; ok is false when nothing
// changed.
func mapURIMember(obj json.RawMessage, key, handle string) (json.RawMessage, bool) {
	m, ok := jsonobj.Members(obj)
	if !ok {
		return nil, false
	}
	var u, mime string
	if json.Unmarshal(m[key], &u) != nil {
		return nil, false
	}
	_ = json.Unmarshal(m["mimeType"], &mime)
	if _, isUI := uiRest(u); !isUI && !(opaqueURI(u) && isAppMIME(mime)) {
		return nil, false
	}
	ns, ok := appURI(handle, u)
	if !ok {
		return nil, false
	}
	out, err := jsonobj.SetMember(obj, key, jsonString(ns))
	return out, err == nil
}

// isAppMIME reports whether mime is an MCP App view's type (text/html;profile=mcp-app,
// case and spaces around ";" ignored).
func isAppMIME(mime string) bool {
	return strings.EqualFold(strings.ReplaceAll(mime, " ", ""), appMIMEType)
}

// mapItems applies f to each item of JSON array arr, replacing an item where f answers
// ok; the bytes between items are kept. changed is false (and arr returned) when f changed
// nothing or arr is no array.
func mapItems(arr json.RawMessage, f func(item json.RawMessage) (json.RawMessage, bool)) (_ json.RawMessage, changed bool) {
	dec := json.NewDecoder(bytes.NewReader(arr))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return arr, false
	}
	var out []byte
	last := 0 // arr[:last] is in out
	for dec.More() {
		var item json.RawMessage
		if dec.Decode(&item) != nil {
			return arr, false
		}
		end := int(dec.InputOffset())
		start := end - len(item)
		edited, ok := f(item)
		if !ok {
			continue
		}
		out = append(append(out, arr[last:start]...), edited...)
		last = end
	}
	if out == nil {
		return arr, false
	}
	return append(out, arr[last:]...), true
}

// taskResultView is a proxied task's result (of connection connID) as st's endpoint shows
// it (tasks.Options.ResultView): on the aggregate endpoint with its view URIs under the
// connection's handle (appCallResult), as the synchronous call's result; on the
// single-server endpoint, or for a connection no longer in the snapshot, as stored.
func taskResultView(st *request.State, connID string, res json.RawMessage) json.RawMessage {
	if st.Single != nil || st.Snapshot == nil {
		return res
	}
	for i := range st.Snapshot.Doc.Connections {
		if c := &st.Snapshot.Doc.Connections[i]; c.ID == connID {
			return appCallResult(res, c.Handle)
		}
	}
	return res
}
