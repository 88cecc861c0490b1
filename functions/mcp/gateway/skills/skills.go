package skills

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Extension is the Skills extension's identifier (capabilities.extensions key).
const Extension = "io.modelcontextprotocol/skills"

const scheme = "skill://"

// maxPages bounds how many skills/list pages the aggregate endpoint reads of one upstream
// per request.
const maxPages = 20

// Conns are the connections whose skills a request sees, by handle (Connections).
type Conns map[string]*catalog.Connection

// Connections are st's visible connections that declared the extension, by handle
// (aggregate endpoint).
func Connections(st *request.State) Conns {
	out := Conns{}
	for i := range st.Snapshot.Doc.Connections {
		if c := &st.Snapshot.Doc.Connections[i]; st.Visible(c) && c.Extension(Extension) != nil {
			out[c.Handle] = c
		}
	}
	return out
}

// Capability returns the extension's settings to advertise in capabilities.extensions
// under [Extension]: {} (no settings the aggregate endpoint serves, such as
// directoryRead); ok is false when conns is empty (nothing is advertised then).
func (conns Conns) Capability() (settings json.RawMessage, ok bool) {
	return json.RawMessage(`{}`), len(conns) > 0
}

// rest returns what follows the skill:// scheme of uri (matched without regard to case);
// ok is false for any other URI.
func rest(uri string) (string, bool) {
	if len(uri) < len(scheme) || !strings.EqualFold(uri[:len(scheme)], scheme) {
		return "", false
	}
	return uri[len(scheme):], true
}

// URI is the aggregate endpoint's name of connection handle's skill:// URI uri:
// skill://<handle>/<what followed skill://>; ok is false for any other URI.
func URI(handle, uri string) (string, bool) {
	r, ok := rest(uri)
	if !ok || r == "" {
		return "", false
	}
	return scheme + handle + "/" + r, true
}

// Target reverses URI: the handle and the upstream's own URI; ok is false when uri is not
// skill://<handle>/<non-empty rest>.
func Target(uri string) (handle, upstream string, ok bool) {
	r, ok := rest(uri)
	if !ok {
		return "", "", false
	}
	handle, orig, found := strings.Cut(r, "/")
	if !found || handle == "" || orig == "" {
		return "", "", false
	}
	return handle, scheme + orig, true
}

// entry is a skills/list or skills/get entry of connection handle with its uri and every
// resources[].uri that is a skill:// URI shown under the handle; every other byte
// (frontmatter, digests, unknown members) kept. ok is false when the entry's uri is not a
// skill:// URI (left out of the aggregate listing).
func entry(e json.RawMessage, handle string) (json.RawMessage, bool) {
	out, ok := mapMember(e, "uri", handle)
	if !ok {
		return nil, false
	}
	m, _ := jsonobj.Members(out)
	if m["resources"] == nil {
		return out, true
	}
	res, changed := jsonobj.MapItems(m["resources"], func(item json.RawMessage) (json.RawMessage, bool) {
		return mapMember(item, "uri", handle)
	})
	if !changed {
		return out, true
	}
	if edited, err := jsonobj.SetMember(out, "resources", res); err == nil {
		return edited, true
	}
	return out, true
}

// mapMember returns obj with its member key (a skill:// URI) under handle; ok is false
// when it is no skill:// URI.
func mapMember(obj json.RawMessage, key, handle string) (json.RawMessage, bool) {
	m, ok := jsonobj.Members(obj)
	if !ok {
		return nil, false
	}
	var u string
	if json.Unmarshal(m[key], &u) != nil {
		return nil, false
	}
	ns, ok := URI(handle, u)
	if !ok {
		return nil, false
	}
	out, err := jsonobj.SetMember(obj, key, jsonobj.String(ns))
	return out, err == nil
}

// Service answers the extension's requests on the aggregate endpoint, asking the upstreams
// through a forwarder. It is safe for concurrent use.
type Service struct {
	fw  *forward.Forwarder
	log *slog.Logger
}

// New returns a Service that reaches upstreams through fw and logs an upstream's failure
// to log (nil discards).
func New(fw *forward.Forwarder, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{fw: fw, log: log}
}

// Serve answers skills/list (List) or skills/get (Get) for conns; any other method is
// -32601.
func (s *Service) Serve(ctx context.Context, st *request.State, conns Conns, method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "skills/list":
		return s.List(ctx, st, conns, params)
	case "skills/get":
		return s.Get(ctx, st, conns, params)
	}
	return nil, wire.Refusal(jsonrpc.CodeMethodNotFound, "method not found: "+method)
}

// List is the aggregate endpoint's skills/list: every entry of every connection in conns
// (each upstream asked concurrently, all its pages up to maxPages), mapped under its
// handle, in one page ordered by handle. A client's cursor is -32602: the answer has no
// next page; so are params that are no object.
func (s *Service) List(ctx context.Context, st *request.State, conns Conns, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(params) > 0 && string(params) != "null" && json.Unmarshal(params, &p) != nil {
		return nil, wire.InvalidParams("params must be an object")
	}
	if p.Cursor != "" {
		return nil, wire.InvalidParams("invalid cursor: the aggregate skills/list answers one page")
	}
	handles := slices.Sorted(maps.Keys(conns))
	lists := make([][]json.RawMessage, len(handles))
	var wg sync.WaitGroup
	for i, h := range handles {
		wg.Go(func() {
			lists[i] = s.upstream(ctx, st, conns[h])
		})
	}
	wg.Wait()
	var b strings.Builder
	b.WriteString(`{"skills":[`)
	n := 0
	for _, l := range lists {
		for _, e := range l {
			if n > 0 {
				b.WriteByte(',')
			}
			b.Write(e)
			n++
		}
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String()), nil
}

// upstream lists connection c's skill entries (every page, at most maxPages), mapped under
// its handle; a failure is logged and ends the list where it is.
func (s *Service) upstream(ctx context.Context, st *request.State, c *catalog.Connection) []json.RawMessage {
	var out []json.RawMessage
	cursor := ""
	for range maxPages {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params = json.RawMessage(`{"cursor":` + string(jsonobj.String(cursor)) + `}`)
		}
		res, err := s.fw.Method(ctx, st, c, "skills/list", params)
		if err != nil {
			s.log.WarnContext(ctx, "upstream skills/list failed; its skills are left out of this listing",
				"connection_id", c.ID, "err", err)
			return out
		}
		var page struct {
			Skills     []json.RawMessage `json:"skills"`
			NextCursor string            `json:"nextCursor"`
		}
		if json.Unmarshal(res, &page) != nil {
			s.log.WarnContext(ctx, "upstream skills/list result is not one", "connection_id", c.ID)
			return out
		}
		for _, e := range page.Skills {
			if m, ok := entry(e, c.Handle); ok {
				out = append(out, m)
			}
		}
		if page.NextCursor == "" || page.NextCursor == cursor {
			return out
		}
		cursor = page.NextCursor
	}
	return out
}

// Get is the aggregate endpoint's skills/get: params.uri skill://<handle>/<rest> is asked
// of that connection as skill://<rest> (the client's other members kept) and the entry it
// answers is mapped under the handle. A URI of no connection in conns is -32602 (SEP-2640:
// "URIs it does not serve as skills"), as are params that are no object.
func (s *Service) Get(ctx context.Context, st *request.State, conns Conns, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil, wire.InvalidParams("params must be an object with uri")
	}
	handle, upstream, ok := Target(p.URI)
	c := conns[handle]
	if !ok || c == nil {
		return nil, wire.InvalidParams("not a skill of this server: " + p.URI)
	}
	up, err := jsonobj.SetMember(params, "uri", jsonobj.String(upstream))
	if err != nil {
		return nil, wire.InvalidParams("params must be an object")
	}
	res, err := s.fw.Method(ctx, st, c, "skills/get", up)
	if err != nil {
		return nil, err
	}
	m, ok := jsonobj.Members(res)
	if !ok || m["skill"] == nil {
		return res, nil
	}
	e, ok := entry(m["skill"], handle)
	if !ok {
		return res, nil
	}
	if out, err := jsonobj.SetMember(res, "skill", e); err == nil {
		return out, nil
	}
	return res, nil
}

// Reads reports whether params (of a resources/read) name skill://<handle>/… of a
// connection in conns, and returns that URI.
func (conns Conns) Reads(params json.RawMessage) (string, bool) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", false
	}
	h, _, ok := Target(p.URI)
	return p.URI, ok && conns[h] != nil
}

// Read reads skill file uri (skill://<handle>/<rest>, of a connection in conns) from its
// connection as skill://<rest> and answers the upstream's result with each contents[].uri
// that is a skill:// URI shown under the handle; the contents' text and blob keep every
// byte (the manifest's digests hold). A URI of no connection in conns, or params that are
// no object, are -32602; the upstream's JSON-RPC error reaches the client as it is.
func (s *Service) Read(ctx context.Context, st *request.State, conns Conns, uri string, params json.RawMessage) (json.RawMessage, error) {
	handle, upstream, _ := Target(uri)
	c := conns[handle]
	up, err := jsonobj.SetMember(params, "uri", jsonobj.String(upstream))
	if err != nil || c == nil {
		return nil, wire.InvalidParams("resource not found: " + uri)
	}
	res, err := s.fw.Method(ctx, st, c, "resources/read", up)
	if err != nil {
		return nil, err
	}
	m, ok := jsonobj.Members(res)
	if !ok || m["contents"] == nil {
		return res, nil
	}
	contents, changed := jsonobj.MapItems(m["contents"], func(item json.RawMessage) (json.RawMessage, bool) {
		return mapMember(item, "uri", handle)
	})
	if !changed {
		return res, nil
	}
	if out, err := jsonobj.SetMember(res, "contents", contents); err == nil {
		return out, nil
	}
	return res, nil
}
