package catalog

// Writing the stored layout: the changed parts (or one pack of them) first, then the index,
// then deleting the parts the new index no longer names.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"golang.org/x/sync/errgroup"
)

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
