package catalog

// Reading the stored layout: Load fetches a workspace's index, then only the parts a
// previous snapshot lacks (a bounded number at once), and assembles the document; a part
// gone under a new index makes it re-read the index once.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
)

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
