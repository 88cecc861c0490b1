// Package registrytest is a loopback MCP registry for tests: it serves a fixture of real
// server.json documents (testdata/, sources in testdata/README.md) through the registry's
// v0.1 list API (GET /v0.1/servers?cursor=&limit=, docs/REGISTRY.md) with cursor pagination.
// The documents' bytes are kept as they were published; the registry's own metadata (status,
// publishedAt, isLatest) is the list item's _meta, set here per document.
package registrytest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

//go:embed testdata/*.json
var files embed.FS

// Status is the registry status the fixture gives a document (default active).
var Status = map[string]string{
	"com.aradia.sovereign-hardware.json":         "deprecated",
	"seed.io.github.getcyphrex.cyphrex-mcp.json": "deleted",
}

// Doc is one fixture document.
type Doc struct {
	File   string
	Raw    []byte
	Status string
}

// Docs returns the fixture's documents in file-name order (bytes as published).
func Docs() []Doc {
	ents, err := files.ReadDir("testdata")
	if err != nil {
		panic(err)
	}
	var out []Doc
	for _, e := range ents {
		raw, err := files.ReadFile("testdata/" + e.Name())
		if err != nil {
			panic(err)
		}
		st := Status[e.Name()]
		if st == "" {
			st = "active"
		}
		out = append(out, Doc{File: e.Name(), Raw: raw, Status: st})
	}
	return out
}

// Item wraps a server.json document as a v0.1 list item: {"server": raw, "_meta":
// {"io.modelcontextprotocol.registry/official": {status, publishedAt, isLatest}}}. raw is
// copied byte for byte.
func Item(raw []byte, status string, publishedAt string, latest bool) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"server": `)
	b.Write(bytes.TrimSpace(raw))
	fmt.Fprintf(&b, `, "_meta": {"io.modelcontextprotocol.registry/official": {"status": %q, "publishedAt": %q, "isLatest": %t}}}`,
		status, publishedAt, latest)
	return b.Bytes()
}

// Items returns the fixture as list items, each published at its own second of 2025-12-11.
func Items() []json.RawMessage {
	var out []json.RawMessage
	for i, d := range Docs() {
		out = append(out, Item(d.Raw, d.Status, fmt.Sprintf("2025-12-11T10:%02d:%02dZ", i/60, i%60), true))
	}
	return out
}

// ListAnswer is the whole fixture as one v0.1 list answer (a file an import can read).
func ListAnswer() []byte {
	var b bytes.Buffer
	b.WriteString(`{"servers": [`)
	for i, it := range Items() {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.Write(it)
	}
	fmt.Fprintf(&b, `], "metadata": {"count": %d}}`, len(Items()))
	return b.Bytes()
}

// Stub is a loopback registry serving Items (and anything appended) through GET
// /v0.1/servers: at most PageMax per page whatever limit asks (so an import must follow
// cursors); the cursor is the next offset. Pages counts the pages served.
type Stub struct {
	mu      sync.Mutex
	items   []json.RawMessage
	PageMax int
	pages   int
}

// NewStub returns a stub serving items (nil: the fixture's Items), 4 per page.
func NewStub(items []json.RawMessage) *Stub {
	if items == nil {
		items = Items()
	}
	return &Stub{items: slices.Clone(items), PageMax: 4}
}

// Pages is the number of pages served so far.
func (s *Stub) Pages() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pages
}

// Rewrite replaces old with new in every item that contains match (a version bump).
func (s *Stub) Rewrite(match string, oldnew ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := strings.NewReplacer(oldnew...)
	for i, it := range s.items {
		if strings.Contains(string(it), match) {
			s.items[i] = json.RawMessage(r.Replace(string(it)))
		}
	}
}

// ServeHTTP answers GET /v0.1/servers (404 for anything else).
func (s *Stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v0.1/servers" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages++
	start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	n, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	n = min(max(n, 1), s.PageMax)
	start = min(max(start, 0), len(s.items))
	end := min(start+n, len(s.items))
	var b bytes.Buffer
	b.WriteString(`{"servers": [`)
	for i, it := range s.items[start:end] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(it)
	}
	fmt.Fprintf(&b, `], "metadata": {"count": %d`, end-start)
	if end < len(s.items) {
		fmt.Fprintf(&b, `, "nextCursor": "%d"`, end)
	}
	b.WriteString("}}")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b.Bytes())
}
