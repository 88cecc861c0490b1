package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// The stored layout (docs/CATALOG.md): per workspace one index and one part per visible
// connection.
//
//	catalog/v2/workspaces/<ws>/index.json              the Index
//	catalog/v2/workspaces/<ws>/parts/<conn>.<hash>.json one Connection (JSON)
//
// A part's key carries the hash of its bytes, so a part object never changes once
// written: a reader that holds an index can fetch every part it names and gets exactly
// what the writer meant, and a reader that already holds a part with that hash needs not
// fetch it at all. A writer writes the changed parts first, then the index, then deletes
// the parts the new index no longer names; a reader that finds a part gone re-reads the
// index once.

// LayoutVersion is the index format version written in Index.Version.
const LayoutVersion = 2

// Index is the small object that names a workspace's parts in document order (by handle,
// bytewise), with the workspace-level fields of the Document.
type Index struct {
	Version            int         `json:"version"`
	WorkspaceID        string      `json:"workspaceId"`
	GeneratedAt        time.Time   `json:"generatedAt"`
	DiscoveryThreshold *int        `json:"discoveryThreshold,omitempty"`
	Policies           *Policies   `json:"policies,omitempty"`
	RateLimits         []RateLimit `json:"rateLimits,omitempty"`
	Parts              []PartRef   `json:"parts"`
}

// PartRef names one connection's part: the connection id, its handle (the sort key) and
// the hash of the part's bytes. A part stands alone at PartKey, or — when Pack is set —
// is bytes [Off, Off+Len) of the pack object at PackKey(ws, Pack), which a whole rebuild
// writes so that a cold read is one GET rather than one per connection.
//
// The summary fields let a reader serve the first tools/list page of a workspace without
// reading every part (Snapshot.FirstTools): Size is the part's bytes (0: the ref was
// written before summaries, and the reader falls back to the whole document), Tools its
// tool count, Unserved how many of them are not served (input schema without "type":
// "object", Tool.Served), First the smallest exposed name of a served tool ("" when none),
// Scope "project" and Project the project of a project-scoped connection (both empty
// otherwise: visible in every project).
type PartRef struct {
	ID       string `json:"id"`
	Handle   string `json:"handle"`
	Hash     string `json:"hash"`
	Pack     string `json:"pack,omitempty"`
	Off      int    `json:"off,omitempty"`
	Len      int    `json:"len,omitempty"`
	Size     int    `json:"size,omitempty"`
	Tools    int    `json:"tools,omitempty"`
	Unserved int    `json:"unserved,omitempty"`
	First    string `json:"first,omitempty"`
	Scope    string `json:"scope,omitempty"`
	Project  string `json:"project,omitempty"`
}

// summarized reports whether ref carries the summary fields (see PartRef).
func (ref PartRef) summarized() bool { return ref.Size > 0 }

// summarize sets ref's summary fields from c, whose part is size bytes.
func summarize(ref *PartRef, c *Connection, size int) {
	ref.Size, ref.Tools, ref.Unserved, ref.First, ref.Scope, ref.Project = size, len(c.Tools), 0, "", "", ""
	for i := range c.Tools {
		t := &c.Tools[i]
		if !t.Served() {
			ref.Unserved++
			continue
		}
		if ref.First == "" || t.ExposedName < ref.First {
			ref.First = t.ExposedName
		}
	}
	if c.Scope == "project" {
		ref.Scope, ref.Project = c.Scope, c.ProjectID
	}
}

// objectKey is the key of the object that holds ref's bytes in workspace ws.
func (ref PartRef) objectKey(ws string) string {
	if ref.Pack != "" {
		return PackKey(ws, ref.Pack)
	}
	return PartKey(ws, ref.ID, ref.Hash)
}

// IndexKey is the object key of workspace ws's index.
func IndexKey(ws string) string { return "catalog/v2/workspaces/" + path.Base(ws) + "/index.json" }

// PartKey is the object key of the part of connection id in workspace ws with content
// hash hash.
func PartKey(ws, id, hash string) string {
	return "catalog/v2/workspaces/" + path.Base(ws) + "/parts/" + path.Base(id) + "." + path.Base(hash) + ".json"
}

// PackKey is the object key of workspace ws's pack with content hash hash.
func PackKey(ws, hash string) string {
	return "catalog/v2/workspaces/" + path.Base(ws) + "/packs/" + path.Base(hash) + ".json"
}

// encodePart returns connection c's part bytes and their hash (hex SHA-256, 32 digits).
func encodePart(c *Connection) ([]byte, string, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, "", fmt.Errorf("catalog: encode part %s: %w", c.ID, err)
	}
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:16]), nil
}

// decodePart parses and checks one part: its id must be ref's, its tool names non-empty
// and unique, its input schemas objects.
func decodePart(data []byte, ref PartRef) (Connection, error) {
	var c Connection
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("catalog: decode part %s: %w", ref.ID, err)
	}
	if c.ID != ref.ID {
		return c, fmt.Errorf("catalog: part %s holds connection %q", ref.ID, c.ID)
	}
	if c.Tools == nil {
		c.Tools = []Tool{}
	}
	if err := validate(&Document{Connections: []Connection{c}}); err != nil {
		return c, err
	}
	return c, nil
}

// decodeIndex parses and checks an index: version LayoutVersion, unique non-empty ids
// and hashes present.
func decodeIndex(data []byte) (*Index, error) {
	var ix Index
	if err := json.Unmarshal(data, &ix); err != nil {
		return nil, fmt.Errorf("catalog: decode index: %w", err)
	}
	if ix.Version != LayoutVersion {
		return nil, fmt.Errorf("catalog: unsupported index version %d", ix.Version)
	}
	seen := make(map[string]bool, len(ix.Parts))
	for _, p := range ix.Parts {
		if p.ID == "" || p.Hash == "" || seen[p.ID] {
			return nil, fmt.Errorf("catalog: index: missing or duplicate part %q", p.ID)
		}
		if p.Pack != "" && (p.Off < 0 || p.Len <= 0) {
			return nil, fmt.Errorf("catalog: index: part %q has a bad pack range", p.ID)
		}
		seen[p.ID] = true
	}
	return &ix, nil
}

// sortParts orders parts as documents are: by handle, bytewise (then id, for a total
// order).
func sortParts(parts []PartRef) {
	slices.SortFunc(parts, func(a, b PartRef) int {
		if c := strings.Compare(a.Handle, b.Handle); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// sortConnections orders a document's connections like sortParts.
func sortConnections(cs []Connection) {
	slices.SortStableFunc(cs, func(a, b Connection) int {
		if c := strings.Compare(a.Handle, b.Handle); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// partFetchConcurrency bounds the part reads of one Load (S3 serves thousands of GETs a
// second per prefix; a cold read of 1,000 parts is latency-bound).
const partFetchConcurrency = 32

// Load reads workspace ws's document from store and returns its snapshot, whose ETag is
// the index's. With prev (the caller's current snapshot, or nil) it revalidates: prev
// itself when the index is unchanged, else a new snapshot that reuses every part of prev
// whose hash the new index names again and fetches only the others. Errors: ErrNotFound
// when ws has no index; a store failure; an index or part that does not decode, or parts
// that together break Decode's rules (duplicate ids or tool names).
func Load(ctx context.Context, store Store, ws string, prev *Snapshot) (*Snapshot, error) {
	snap, err := load(ctx, store, ws, prev)
	if errors.Is(err, errPartGone) {
		// A writer replaced the index and deleted a part between our two reads: the new
		// index names only parts that exist.
		snap, err = load(ctx, store, ws, nil)
	}
	return snap, err
}

// decodeError marks a Load failure of the stored bytes (an index or part that does not
// decode, parts that conflict), as opposed to a failure of the store.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

var errPartGone = errors.New("catalog: part named by the index is gone")

func load(ctx context.Context, store Store, ws string, prev *Snapshot) (*Snapshot, error) {
	if prev != nil && prev.Complete(ctx) != nil {
		prev = nil // a lazy snapshot whose parts could not be read: nothing to reuse
	}
	inm := ""
	if prev != nil && prev.index != nil {
		inm = prev.ETag
	}
	data, etag, err := store.GetObject(ctx, IndexKey(ws), inm)
	if errors.Is(err, ErrNotModified) {
		return prev, nil
	}
	if err != nil {
		return nil, err
	}
	ix, err := decodeIndex(data)
	if err != nil {
		return nil, &decodeError{err}
	}
	doc, err := assemble(ctx, store, ws, ix, prev, nil)
	if err != nil {
		return nil, err
	}
	s := NewSnapshot(doc, etag)
	s.index = ix
	return s, nil
}

// assemble reads the parts ix names — reusing those prev (complete, or nil) holds with the
// same id and hash — checks them and returns the document. errPartGone when a named object
// is missing.
//
// With decodeMu set, one part is decoded at a time (the reads stay concurrent): a lazy
// snapshot's background read then takes at most one core from the requests beside it.
func assemble(ctx context.Context, store Store, ws string, ix *Index, prev *Snapshot, decodeMu *sync.Mutex) (*Document, error) {
	have := map[string]*Connection{}
	if prev != nil && prev.index != nil {
		for i, p := range prev.index.Parts {
			have[p.ID+"."+p.Hash] = &prev.Doc.Connections[i]
		}
	}
	doc := &Document{Version: SchemaVersion, WorkspaceID: ix.WorkspaceID, GeneratedAt: ix.GeneratedAt,
		DiscoveryThreshold: ix.DiscoveryThreshold, Policies: ix.Policies, RateLimits: ix.RateLimits, Connections: make([]Connection, len(ix.Parts))}
	// The objects to fetch: each standalone part, and each pack once for all the parts
	// wanted from it.
	want := map[string][]int{} // object key → indexes into ix.Parts
	var keys []string
	for i, ref := range ix.Parts {
		if c, ok := have[ref.ID+"."+ref.Hash]; ok {
			doc.Connections[i] = *c
			continue
		}
		k := ref.objectKey(ws)
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
		want[k] = append(want[k], i)
	}
	err := fetchParts(ctx, store, ws, ix.Parts, keys, want, decodeMu, func(i int, c Connection) { doc.Connections[i] = c })
	if err != nil {
		return nil, err
	}
	if err := checkUnique(doc); err != nil {
		return nil, &decodeError{err}
	}
	return doc, nil
}

// fetchParts reads each object of keys once (partFetchConcurrency at a time), cuts and
// decodes the parts of refs that want names in it, and calls put with each part's index
// in refs and its connection (concurrently, for distinct indexes; decodeMu, when set, held
// while decoding). errPartGone when an object is missing; a *decodeError when a part does
// not decode or lies outside its pack.
func fetchParts(ctx context.Context, store Store, ws string, refs []PartRef, keys []string, want map[string][]int, decodeMu *sync.Mutex, put func(int, Connection)) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(partFetchConcurrency)
	for _, k := range keys {
		g.Go(func() error {
			b, _, err := store.GetObject(gctx, k, "")
			if errors.Is(err, ErrNotFound) {
				return errPartGone
			}
			if err != nil {
				return err
			}
			for _, i := range want[k] {
				ref := refs[i]
				part := b
				if ref.Pack != "" {
					if ref.Off+ref.Len > len(b) || ref.Off+ref.Len < ref.Off {
						return &decodeError{fmt.Errorf("catalog: part %s lies outside its pack", ref.ID)}
					}
					part = b[ref.Off : ref.Off+ref.Len]
				}
				if decodeMu != nil {
					decodeMu.Lock()
				}
				c, err := decodePart(part, ref)
				if decodeMu != nil {
					decodeMu.Unlock()
				}
				if err != nil {
					return &decodeError{err}
				}
				put(i, c)
			}
			return nil
		})
	}
	return g.Wait()
}

// checkUnique is validate's cross-part half (each part was validated alone): connection
// ids and exposed tool names unique over the document.
func checkUnique(d *Document) error {
	conns := make(map[string]bool, len(d.Connections))
	tools := make(map[string]bool)
	for _, c := range d.Connections {
		if conns[c.ID] {
			return fmt.Errorf("catalog: missing or duplicate connection id %q", c.ID)
		}
		conns[c.ID] = true
		for _, t := range c.Tools {
			if tools[t.ExposedName] {
				return fmt.Errorf("catalog: missing or duplicate tool name %q", t.ExposedName)
			}
			tools[t.ExposedName] = true
		}
	}
	return nil
}

// ReadDocument is Load without a previous snapshot: workspace ws's assembled document and
// its index's ETag.
func ReadDocument(ctx context.Context, store Store, ws string) (*Document, string, error) {
	s, err := Load(ctx, store, ws, nil)
	if err != nil {
		return nil, "", err
	}
	return s.Doc, s.ETag, nil
}

// WriteDocument stores doc as workspace doc.WorkspaceID's document and returns the
// index's ETag: the parts the stored index does not already name (all of them when there
// is no readable index), then the index, then it deletes the parts no longer named. It
// is the writer of tests and tools that make documents outside Postgres; Rebuild and
// RebuildConnections write the same way from Postgres.
func WriteDocument(ctx context.Context, store Store, doc *Document) (string, error) {
	old, oldTag, err := readIndex(ctx, store, doc.WorkspaceID)
	if err != nil {
		old, oldTag = nil, ""
	}
	return writeParts(ctx, store, doc.WorkspaceID, old, oldTag, docIndex(doc), doc.Connections, false)
}

// WritePacked is WriteDocument writing every part into one pack object (as Rebuild does):
// a cold read is then the index and one GET.
func WritePacked(ctx context.Context, store Store, doc *Document) (string, error) {
	old, oldTag, err := readIndex(ctx, store, doc.WorkspaceID)
	if err != nil {
		old, oldTag = nil, ""
	}
	return writeParts(ctx, store, doc.WorkspaceID, old, oldTag, docIndex(doc), doc.Connections, true)
}

// readIndex returns workspace ws's stored index and its ETag; ErrNotFound when none.
func readIndex(ctx context.Context, store Store, ws string) (*Index, string, error) {
	data, etag, err := store.GetObject(ctx, IndexKey(ws), "")
	if err != nil {
		return nil, "", err
	}
	ix, err := decodeIndex(data)
	if err != nil {
		return nil, "", err
	}
	return ix, etag, nil
}

// docIndex is doc's index without its parts (writeParts fills them).
func docIndex(doc *Document) *Index {
	return &Index{Version: LayoutVersion, WorkspaceID: doc.WorkspaceID, GeneratedAt: doc.GeneratedAt,
		DiscoveryThreshold: doc.DiscoveryThreshold, Policies: doc.Policies, RateLimits: doc.RateLimits}
}

// writeParts makes ix (whose Parts it sets) name exactly conns plus keep, then writes:
// with pack, all of conns into one new pack object (unless old already names every one of
// them with the same bytes, all in one pack: then their old refs are kept); without, each of conns as a
// standalone part unless old already names that part (its old ref is kept). Then the
// index (unless it equals old but for its generation time: then nothing is written and
// oldTag returned), then it deletes the objects of old that ix no longer names. keep are
// refs of old carried over unchanged (the incremental path); conns are the connections
// rebuilt. A deletion that fails leaves an unreferenced object behind, never a broken
// index, so it is ignored.
func writeParts(ctx context.Context, store Store, ws string, old *Index, oldTag string, ix *Index, conns []Connection, pack bool, keep ...PartRef) (string, error) {
	had := map[string]PartRef{}
	if old != nil {
		for _, p := range old.Parts {
			had[p.ID+"."+p.Hash] = p
		}
	}
	type encoded struct {
		ref  PartRef
		data []byte
		kept bool
	}
	parts := make([]encoded, len(conns))
	allKept := true
	for i := range conns {
		data, hash, err := encodePart(&conns[i])
		if err != nil {
			return "", err
		}
		ref, ok := had[conns[i].ID+"."+hash]
		if ok && ref.Handle != conns[i].Handle {
			ok = false
		}
		if !ok {
			ref = PartRef{ID: conns[i].ID, Handle: conns[i].Handle, Hash: hash}
			allKept = false
		}
		summarize(&ref, &conns[i], len(data)) // also upgrades a kept ref written before summaries
		parts[i] = encoded{ref: ref, data: data, kept: ok}
	}
	// A pack is (re)written unless every part is already in one and the same pack.
	onePack := allKept && len(parts) > 0 && parts[0].ref.Pack != ""
	for _, p := range parts {
		onePack = onePack && p.ref.Pack == parts[0].ref.Pack
	}
	ix.Parts = append(make([]PartRef, 0, len(keep)+len(conns)), keep...)
	switch {
	case pack && !onePack && len(parts) > 0:
		var buf []byte
		for i := range parts {
			ref := parts[i].ref
			ref.Off, ref.Len, ref.Pack = len(buf), len(parts[i].data), ""
			parts[i].ref = ref
			buf = append(append(buf, parts[i].data...), '\n')
		}
		sum := sha256.Sum256(buf)
		packHash := hex.EncodeToString(sum[:16])
		for i := range parts {
			parts[i].ref.Pack = packHash
			ix.Parts = append(ix.Parts, parts[i].ref)
		}
		if _, err := store.PutObject(ctx, PackKey(ws, packHash), buf); err != nil {
			return "", err
		}
	default:
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(partFetchConcurrency)
		for _, p := range parts {
			ix.Parts = append(ix.Parts, p.ref)
			if p.kept {
				continue
			}
			g.Go(func() error {
				_, err := store.PutObject(gctx, PartKey(ws, p.ref.ID, p.ref.Hash), p.data)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return "", err
		}
	}
	sortParts(ix.Parts)
	if sameIndex(old, ix) {
		return oldTag, nil
	}
	data, err := json.Marshal(ix)
	if err != nil {
		return "", fmt.Errorf("catalog: encode index: %w", err)
	}
	etag, err := store.PutObject(ctx, IndexKey(ws), data)
	if err != nil {
		return "", err
	}
	if old != nil {
		now := map[string]bool{}
		for _, p := range ix.Parts {
			now[p.objectKey(ws)] = true
		}
		gone := map[string]bool{}
		for _, p := range old.Parts {
			if k := p.objectKey(ws); !now[k] && !gone[k] {
				gone[k] = true
				_ = store.DeleteObject(ctx, k)
			}
		}
	}
	return etag, nil
}

// sameIndex reports whether a and b name the same parts and settings (GeneratedAt aside).
func sameIndex(a, b *Index) bool {
	if a == nil || b == nil || a.Version != b.Version || a.WorkspaceID != b.WorkspaceID {
		return false
	}
	if (a.DiscoveryThreshold == nil) != (b.DiscoveryThreshold == nil) ||
		(a.DiscoveryThreshold != nil && *a.DiscoveryThreshold != *b.DiscoveryThreshold) {
		return false
	}
	if !samePolicies(a.Policies, b.Policies) {
		return false
	}
	if !reflect.DeepEqual(a.RateLimits, b.RateLimits) {
		return false
	}
	return slices.Equal(a.Parts, b.Parts)
}
