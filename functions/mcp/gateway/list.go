package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// tools/list replay. A server's tools/list answer depends only on the server (its cache
// key: workspace, catalog ETag, role class, toolsets, project, chat, endpoint) and the
// protocol version, yet go-sdk re-encodes every tool twice per request (the result into a
// RawMessage, then the response, compacting each raw schema both times) and its JSON
// decoder allocates 32 KiB per message. So the first plain tools/list of a server is served
// by go-sdk and its answer kept; later ones whose request and headers go-sdk already
// accepted get the same bytes with their own id. Measured on the 2-core bench machine,
// 1,000 visible tools through the full handler (BenchmarkToolsList/tools=1000):
// 5.18 → 0.09 ms p50 and 2,245 → 113 allocs per request (README "Performance").
//
// Only an exactly plain request is replayed: one JSON object with keys jsonrpc "2.0", a
// canonical id (an integer or a short string without escapes, which go-sdk writes back
// byte for byte), method "tools/list" and no params or {} — no cursor, no _meta — at an
// old-era protocol version (the 2026-07-28 era carries per-request _meta), without Mcp-*
// request headers besides Mcp-Protocol-Version (go-sdk checks Mcp-Method / Mcp-Name against
// the body). Everything else,
// including every error, goes through go-sdk as before.

// maxApprovedHeaders bounds the header combinations remembered per server.
const maxApprovedHeaders = 16

// listCache is one server's remembered tools/list answers.
type listCache struct {
	mu sync.Mutex
	// results maps a protocol version header to go-sdk's "result" bytes and the response
	// headers go-sdk set.
	results map[string]*cachedList
	// approved holds the (version, Content-Type, Accept) combinations go-sdk answered 200.
	approved map[string]bool
}

type cachedList struct {
	result []byte
	suffix []byte // what followed the result object: "}" or "}\n"
	header http.Header
}

var canonicalID = regexp.MustCompile(`^(?:0|[1-9][0-9]{0,15}|"[A-Za-z0-9_.:-]{1,64}")$`)

// plainToolsList returns the raw id of body when body is a plain tools/list (see above).
func plainToolsList(body []byte) (id []byte, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || len(m) < 3 || len(m) > 4 {
		return nil, false
	}
	if string(m["jsonrpc"]) != `"2.0"` || string(m["method"]) != `"tools/list"` {
		return nil, false
	}
	if p, has := m["params"]; has && string(bytes.TrimSpace(p)) != "{}" {
		return nil, false
	} else if !has && len(m) != 3 {
		return nil, false
	}
	id = m["id"]
	if !canonicalID.Match(id) {
		return nil, false
	}
	return id, true
}

func headerKey(r *http.Request) string {
	return r.Header.Get("Mcp-Protocol-Version") + "\x00" + r.Header.Get("Content-Type") + "\x00" +
		strings.Join(r.Header.Values("Accept"), "\x00")
}

// serveSDK serves r through go-sdk, or replays a remembered tools/list answer, or answers
// a plain proxied tools/call itself (call.go).
func (g *Gateway) serveSDK(w *limitedWriter, r *http.Request, st *requestState) {
	if st.newProtocol || r.ContentLength <= 0 || r.ContentLength > maxFastRequest || !fastHeaders(r) {
		g.mcp.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxFastRequest+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil {
		g.mcp.ServeHTTP(w, r)
		return
	}
	if pc, ok := plainToolsCall(body); ok {
		if g.tryFastCall(w, r, st, pc) {
			return
		}
		g.getServer(r)
		if st.item == nil {
			g.mcp.ServeHTTP(w, r)
			return
		}
		before := w.Header().Clone()
		g.mcp.ServeHTTP(w, r)
		st.item.rememberCall(w, before, r.Header.Get("Mcp-Protocol-Version"), headerKey(r))
		return
	}
	id, ok := plainToolsList(body)
	if !ok {
		g.mcp.ServeHTTP(w, r)
		return
	}
	g.getServer(r)
	if st.item == nil {
		g.mcp.ServeHTTP(w, r)
		return
	}
	version, hk := r.Header.Get("Mcp-Protocol-Version"), headerKey(r)
	lc := &st.item.lists
	lc.mu.Lock()
	cl := lc.results[version]
	approved := lc.approved[hk]
	lc.mu.Unlock()
	if cl != nil && approved {
		h := w.Header()
		for k, v := range cl.header {
			h[k] = v
		}
		w.WriteHeader(http.StatusOK)
		w.buf.Grow(len(listPrefix) + len(id) + len(listMid) + len(cl.result) + len(cl.suffix))
		_, _ = w.Write(listPrefix)
		_, _ = w.Write(id)
		_, _ = w.Write(listMid)
		_, _ = w.Write(cl.result)
		_, _ = w.Write(cl.suffix)
		return
	}
	before := w.Header().Clone()
	g.mcp.ServeHTTP(w, r)
	lc.remember(w, before, version, hk, id)
}

var (
	listPrefix = []byte(`{"jsonrpc":"2.0","id":`)
	listMid    = []byte(`,"result":`)
)

// remember keeps go-sdk's answer when it is exactly prefix + id + result + suffix.
func (lc *listCache) remember(w *limitedWriter, before http.Header, version, hk string, id []byte) {
	if w.status != http.StatusOK || w.tooBig || w.Header().Get("Content-Type") != "application/json" {
		return
	}
	b := w.buf.Bytes()
	head := len(listPrefix) + len(id) + len(listMid)
	if len(b) < head+2 || !bytes.HasPrefix(b, listPrefix) || !bytes.Equal(b[len(listPrefix):len(listPrefix)+len(id)], id) ||
		!bytes.Equal(b[len(listPrefix)+len(id):head], listMid) {
		return
	}
	var suffix []byte
	switch {
	case bytes.HasSuffix(b, []byte("}\n")):
		suffix = []byte("}\n")
	case bytes.HasSuffix(b, []byte("}")):
		suffix = []byte("}")
	default:
		return
	}
	result := b[head : len(b)-len(suffix)]
	var check struct {
		Result json.RawMessage `json:"result"`
	}
	if !json.Valid(result) || json.Unmarshal(b, &check) != nil || !bytes.Equal(check.Result, result) {
		return
	}
	hdr := http.Header{}
	for k, v := range w.Header() {
		if k != "Content-Length" && !equalValues(before[k], v) {
			hdr[k] = append([]string(nil), v...)
		}
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.results == nil {
		lc.results, lc.approved = map[string]*cachedList{}, map[string]bool{}
	}
	if _, ok := lc.results[version]; !ok {
		lc.results[version] = &cachedList{result: bytes.Clone(result), suffix: suffix, header: hdr}
	}
	if len(lc.approved) < maxApprovedHeaders {
		lc.approved[hk] = true
	}
}

func equalValues(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
