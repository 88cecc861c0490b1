package catalog

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
)

// Lazy snapshots: a cold start that does not grow with the workspace (docs/CATALOG.md
// "Cold start"). A process that holds no snapshot of a workspace reads its index (one
// GET), answers what the index and a few parts can answer — the first tools/list page,
// through FirstTools and the index's per-part summaries — and then reads and decodes the
// whole document in the background (ReadAll), which everything else waits for (Complete).

// Pending reports whether s is a lazy snapshot whose document is still being read: then
// s.Doc is nil, and only ETag, Head, Size (an estimate from the index) and FirstTools may
// be used until Complete returns nil.
func (s *Snapshot) Pending() bool {
	if s.ready == nil {
		return false
	}
	select {
	case <-s.ready:
		return false
	default:
		return true
	}
}

// Complete waits until s's document is read and returns nil, after which s.Doc and every
// method may be used; the read's error when it failed (a store failure, an index or part
// that does not decode: Load's errors); ctx's error when ctx ends first. A snapshot that
// was never lazy is complete at once.
func (s *Snapshot) Complete(ctx context.Context) error {
	if s.ready == nil {
		return nil
	}
	s.ReadAll()
	select {
	case <-s.ready:
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// failed reports whether s is a lazy snapshot whose background read failed.
func (s *Snapshot) failed() bool { return s.ready != nil && !s.Pending() && s.err != nil }

// wait blocks until s is complete (failed or not).
func (s *Snapshot) wait() {
	if s.ready != nil {
		s.ReadAll()
		<-s.ready
	}
}

// Head is the stored index s was made from (its workspace fields and part refs, with the
// summaries), nil for a snapshot built outside the store. It is usable while s is
// pending. Never modify it.
func (s *Snapshot) Head() *Index {
	if s.head != nil {
		return s.head
	}
	s.wait()
	return s.index
}

// lazySnapshotSize estimates a pending snapshot's Size from its index's summaries (each
// part's bytes stand for its strings), so that a cache bound counts it before its parts
// are read; a ref without summaries counts as an average 10 kB part.
func lazySnapshotSize(ix *Index) int64 {
	n := int64(snapshotOverhead + len(ix.WorkspaceID))
	for _, p := range ix.Parts {
		size := p.Size
		if !p.summarized() {
			size = 10 << 10
		}
		n += snapshotConnOverhead + int64(size) + int64(p.Tools)*snapshotToolOverhead
	}
	return n
}

// loadLazy reads workspace ws's index and returns a pending snapshot of it whose parts
// are read by a goroutine that ReadAll (or Complete) starts; done is called once that read ends (its error, nil
// on success) after the snapshot is complete or failed. A part gone under the read (a
// writer replaced the index and deleted it) makes the read start over from the then
// current index, as Load does: the snapshot then holds that newer document under the
// first index's ETag, so that the next revalidation fetches the index again and reuses
// every part. Errors (before any goroutine starts): ErrNotFound when ws has no index; a
// store failure; a *decodeError for an index that does not decode.
func loadLazy(ctx context.Context, store Store, ws string, done func(*Snapshot, error)) (*Snapshot, error) {
	data, etag, err := store.GetObject(ctx, IndexKey(ws), "")
	if err != nil {
		return nil, err
	}
	ix, err := decodeIndex(data)
	if err != nil {
		return nil, &decodeError{err}
	}
	s := &Snapshot{ETag: etag, head: ix, store: store, ws: ws, ready: make(chan struct{})}
	s.size.Store(lazySnapshotSize(ix))
	s.read = func() {
		// One part decoded at a time: the requests beside it (a FirstTools) keep a core.
		doc, err := assemble(ctx, store, ws, ix, nil, &sync.Mutex{})
		used := ix
		if errors.Is(err, errPartGone) {
			var fresh *Snapshot
			if fresh, err = Load(ctx, store, ws, nil); err == nil {
				doc, used = fresh.Doc, fresh.index
			}
		}
		if err == nil {
			s.fill(doc)
			s.index = used
		} else {
			s.err = err
		}
		close(s.ready)
		if done != nil {
			done(s, err)
		}
	}
	return s, nil
}

// ReadAll starts reading s's whole document in the background, when s is pending and the
// read has not started: Complete (and every method that needs the document) starts it
// too. The gateway calls it once a cold first page is answered, so that the read does not
// take the CPU from that answer and the next pages find it under way.
func (s *Snapshot) ReadAll() {
	if s.ready != nil {
		s.readOnce.Do(func() { go s.read() })
	}
}

// FirstTools returns, in exposed-name order, the n served tools (Tool.Served) with the
// smallest exposed names among the connections visible reports true for, and the counts
// of served and of all tools of those connections — reading only the parts that can hold
// them: the parts are taken in the order of their smallest served name (the index's
// summaries), in batches, until the n-th name found sorts before every part not yet read.
// visible is given a Connection holding only ID, Scope and ProjectID. n ≤ 0 reads no part
// (the counts only). ok is false when the snapshot has no index with summaries for every
// visible part, or a part is gone (a writer replaced the index): the caller then waits
// for the whole document (Complete). Errors: a store failure; a part that does not decode.
// The tools point into connections decoded for this call (not s.Doc's); each is the same
// part, by hash, as the whole document holds.
func (s *Snapshot) FirstTools(ctx context.Context, n int, visible func(*Connection) bool) (tools []ToolRef, served, all int, ok bool, err error) {
	ix := s.head
	if ix == nil {
		return nil, 0, 0, false, nil
	}
	var cand []PartRef
	for _, p := range ix.Parts {
		if !p.summarized() {
			return nil, 0, 0, false, nil
		}
		if !visible(&Connection{ID: p.ID, Scope: p.Scope, ProjectID: p.Project}) {
			continue
		}
		all += p.Tools
		served += p.Tools - p.Unserved
		if p.Tools > p.Unserved {
			cand = append(cand, p)
		}
	}
	if n <= 0 {
		return nil, served, all, true, nil
	}
	slices.SortFunc(cand, func(a, b PartRef) int { return strings.Compare(a.First, b.First) })
	next := 0 // cand[:next] are read
	for next < len(cand) {
		// The next batch: enough parts to reach n tools; then every part whose smallest
		// name sorts before the n-th name found (each may hold a smaller one).
		end := next
		if len(tools) < n {
			have := len(tools)
			for end < len(cand) && (end == next || have < n) {
				have += cand[end].Tools - cand[end].Unserved
				end++
			}
		} else {
			for end < len(cand) && cand[end].First < tools[n-1].Tool.ExposedName {
				end++
			}
		}
		if end == next {
			break
		}
		got, err := s.readParts(ctx, cand[next:end])
		if err != nil {
			if errors.Is(err, errPartGone) {
				return nil, 0, 0, false, nil
			}
			return nil, 0, 0, false, err
		}
		next = end
		for _, c := range got {
			for j := range c.Tools {
				if c.Tools[j].Served() {
					tools = append(tools, ToolRef{Conn: c, Tool: &c.Tools[j]})
				}
			}
		}
		slices.SortFunc(tools, func(a, b ToolRef) int { return strings.Compare(a.Tool.ExposedName, b.Tool.ExposedName) })
		if len(tools) > n {
			tools = tools[:n]
		}
	}
	return tools, served, all, true, nil
}

// readParts fetches and decodes the parts refs name (each object once).
func (s *Snapshot) readParts(ctx context.Context, refs []PartRef) ([]*Connection, error) {
	want := map[string][]int{}
	var keys []string
	for i, ref := range refs {
		k := ref.objectKey(s.ws)
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
		want[k] = append(want[k], i)
	}
	out := make([]*Connection, len(refs))
	var mu sync.Mutex
	err := fetchParts(ctx, s.store, s.ws, refs, keys, want, nil, func(i int, c Connection) {
		mu.Lock()
		out[i] = &c
		mu.Unlock()
	})
	return out, err
}
