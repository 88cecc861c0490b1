package apps

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/shared/jsonobj"
)

// toolUIMeta is the part of a tool definition this package reads.
type toolUIMeta struct {
	Meta struct {
		UI struct {
			ResourceURI *string `json:"resourceUri"`
		} `json:"ui"`
		Flat *string `json:"ui/resourceUri"`
	} `json:"_meta"`
}

// toolURIs returns the view URIs (viewURI: ui:// or opaque) definition def names
// (_meta.ui.resourceUri and the deprecated _meta["ui/resourceUri"]), without repeats.
func toolURIs(def json.RawMessage) []string {
	if !bytes.Contains(def, []byte(`resourceUri`)) {
		return nil
	}
	var d toolUIMeta
	if json.Unmarshal(def, &d) != nil {
		return nil
	}
	var out []string
	for _, p := range []*string{d.Meta.UI.ResourceURI, d.Meta.Flat} {
		if p != nil && viewURI(*p) && !slices.Contains(out, *p) {
			out = append(out, *p)
		}
	}
	return out
}

// WithURIs returns tool definition def (a JSON object: a tools/list item, or a tools/call
// result, which carries the same _meta keys) with its _meta.ui.resourceUri and
// _meta["ui/resourceUri"], when they are view URIs, shown as handle's aggregate URIs
// (URI); every other byte is kept. A definition without them is returned as it is.
func WithURIs(def json.RawMessage, handle string) json.RawMessage {
	if len(toolURIs(def)) == 0 {
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
	// setURI returns obj with member key (a view URI string) shown under handle.
	setURI := func(obj json.RawMessage, key string) json.RawMessage {
		m, _ := jsonobj.Members(obj)
		var s string
		if json.Unmarshal(m[key], &s) != nil {
			return obj
		}
		ns, ok := URI(handle, s)
		if !ok {
			return obj
		}
		if out, err := jsonobj.SetMember(obj, key, jsonobj.String(ns)); err == nil {
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

// readResult is a resources/read result with each contents[].uri that is a view URI
// (ui:// or opaque: it is the view's read) shown as handle's aggregate URI; every other
// byte (spacing between the items included) is kept. A result of another shape is
// returned as it is (the client judges it, as for any forwarded result).
func readResult(res json.RawMessage, handle string) json.RawMessage {
	m, ok := jsonobj.Members(res)
	if !ok || m["contents"] == nil {
		return res
	}
	contents, changed := jsonobj.MapItems(m["contents"], func(item json.RawMessage) (json.RawMessage, bool) {
		im, ok := jsonobj.Members(item)
		if !ok {
			return nil, false
		}
		var u string
		if json.Unmarshal(im["uri"], &u) != nil {
			return nil, false
		}
		ns, ok := URI(handle, u)
		if !ok {
			return nil, false
		}
		edited, err := jsonobj.SetMember(item, "uri", jsonobj.String(ns))
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

// CallResult is a proxied tools/call result on the aggregate endpoint with the view URIs
// it carries shown as connection handle's aggregate URIs, as tools/list shows the tool's
// (issue 34: the listing was rewritten and the result was not, so a host rendering the
// result looked for the upstream's own ui://dashboard/app.html): the result's
// _meta.ui.resourceUri and _meta["ui/resourceUri"] (WithURIs), and in content[] the uri of
// a resource_link and the resource.uri of an embedded resource when it is a ui:// URI, or an
// opaque one of an MCP App view (mimeType text/html;profile=mcp-app). Every other byte is
// kept; a result of another shape comes back as it is.
func CallResult(res json.RawMessage, handle string) json.RawMessage {
	if !bytes.Contains(res, []byte("ui://")) && !bytes.Contains(res, []byte("resourceUri")) && !bytes.Contains(res, []byte("mcp-app")) {
		return res // the cheap test first: most results carry no view
	}
	res = WithURIs(res, handle)
	m, ok := jsonobj.Members(res)
	if !ok || m["content"] == nil {
		return res
	}
	content, changed := jsonobj.MapItems(m["content"], func(item json.RawMessage) (json.RawMessage, bool) {
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

// mapURIMember returns obj with its member key (a URI) shown under handle when it is a
// ui:// URI, or an opaque URI and obj's mimeType is the MCP App one; ok is false when
// nothing changed.
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
	if _, isUI := rest(u); !isUI && !(opaque(u) && isAppMIME(mime)) {
		return nil, false
	}
	ns, ok := URI(handle, u)
	if !ok {
		return nil, false
	}
	out, err := jsonobj.SetMember(obj, key, jsonobj.String(ns))
	return out, err == nil
}

// ResultView is a proxied task's result (of connection connID) as st's endpoint shows it
// (tasks.Options.ResultView): on the aggregate endpoint with its view URIs under the
// connection's handle (CallResult), as the synchronous call's result; on the single-server
// endpoint, or for a connection no longer in the snapshot, as stored.
func ResultView(st *request.State, connID string, res json.RawMessage) json.RawMessage {
	if st.Single != nil || st.Snapshot == nil {
		return res
	}
	for i := range st.Snapshot.Doc.Connections {
		if c := &st.Snapshot.Doc.Connections[i]; c.ID == connID {
			return CallResult(res, c.Handle)
		}
	}
	return res
}
