package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentpack/gateway/shared/catalog"
)

// staleIndexStore answers the first read of the index with stale bytes (as a reader that
// read the index just before a writer replaced it and deleted a part would see).
type staleIndexStore struct {
	catalog.Store
	stale []byte
	used  atomic.Bool
}

func (s *staleIndexStore) GetObject(ctx context.Context, key, inm string) ([]byte, string, error) {
	if strings.HasSuffix(key, "/index.json") && s.stale != nil && !s.used.Swap(true) {
		return s.stale, `"stale"`, nil
	}
	return s.Store.GetObject(ctx, key, inm)
}

// TestLoadPartGone: a part the index names that is gone makes Load re-read the index once
// (a writer's replace-then-delete raced the read); a part that stays gone is an error.
func TestLoadPartGone(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	disk := &catalog.DiskStore{Dir: t.TempDir()}
	const ws = "c0000000-0000-4000-8000-0000000000c0"
	doc := scaleDoc(ws, 3, 2)
	if _, err := catalog.WriteDocument(ctx, disk, doc); err != nil {
		t.Fatal(err)
	}
	old, _, err := disk.GetObject(ctx, catalog.IndexKey(ws), "")
	if err != nil {
		t.Fatal(err)
	}
	doc.Connections[1].Name = "Renamed"
	if _, err := catalog.WriteDocument(ctx, disk, doc); err != nil { // deletes the old part of connection 1
		t.Fatal(err)
	}
	s, err := catalog.Load(ctx, &staleIndexStore{Store: disk, stale: old}, ws, nil)
	if err != nil || s.Doc.Connections[1].Name != "Renamed" {
		t.Fatalf("raced read: %v %+v", err, s)
	}
	if _, err := disk.PutObject(ctx, catalog.IndexKey(ws), old); err != nil { // an index naming a deleted part
		t.Fatal(err)
	}
	if _, err := catalog.Load(ctx, disk, ws, nil); err == nil {
		t.Fatal("an index naming a missing part loaded")
	}
}

// TestLoadRejectsBadParts: an index of another version, a part that is not JSON, a part
// holding another connection than the index names, and two parts exposing the same tool
// name are refused (never a panic); the Cache then serves its last good copy and counts
// the failure as "invalid".
func TestLoadRejectsBadParts(t *testing.T) {
	t.Parallel()
	const ws = "d0000000-0000-4000-8000-0000000000d0"
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, s catalog.Store, ix *catalog.Index)
		want  string
	}{
		{"index version", func(t *testing.T, s catalog.Store, ix *catalog.Index) {
			ix.Version = 7
			putIndex(t, s, ix)
		}, "unsupported index version 7"},
		{"part not JSON", func(t *testing.T, s catalog.Store, ix *catalog.Index) {
			ix.Parts[0].Hash = "bad" // a part the cache does not hold yet
			if _, err := s.PutObject(t.Context(), catalog.PartKey(ws, ix.Parts[0].ID, "bad"), []byte(`{"id":`)); err != nil {
				t.Fatal(err)
			}
			putIndex(t, s, ix)
		}, "decode part"},
		{"part of another connection", func(t *testing.T, s catalog.Store, ix *catalog.Index) {
			ix.Parts[0].ID, ix.Parts[0].Hash = ix.Parts[1].ID, ix.Parts[1].Hash
			ix.Parts[0].ID = "e0000000-0000-4000-8000-0000000000e0"
			data, _, _ := s.GetObject(t.Context(), catalog.PartKey(ws, ix.Parts[1].ID, ix.Parts[1].Hash), "")
			if _, err := s.PutObject(t.Context(), catalog.PartKey(ws, ix.Parts[0].ID, ix.Parts[0].Hash), data); err != nil {
				t.Fatal(err)
			}
			putIndex(t, s, ix)
		}, "holds connection"},
		{"pack range outside the pack", func(t *testing.T, s catalog.Store, ix *catalog.Index) {
			ix.Parts[0].Hash = "p1h" // a part the cache does not hold yet
			ix.Parts[0].Pack, ix.Parts[0].Off, ix.Parts[0].Len = "p1", 0, 1<<20
			if _, err := s.PutObject(t.Context(), catalog.PackKey(ws, "p1"), []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			putIndex(t, s, ix)
		}, "outside its pack"},
		{"duplicate tool name", func(t *testing.T, s catalog.Store, ix *catalog.Index) {
			data, _, _ := s.GetObject(t.Context(), catalog.PartKey(ws, ix.Parts[1].ID, ix.Parts[1].Hash), "")
			var c catalog.Connection
			_ = json.Unmarshal(data, &c)
			c.ID = "e0000000-0000-4000-8000-0000000000e1" // the same tools under another connection
			b, _ := json.Marshal(&c)
			ix.Parts = append(ix.Parts, catalog.PartRef{ID: c.ID, Handle: "zzz", Hash: "dup"})
			if _, err := s.PutObject(t.Context(), catalog.PartKey(ws, c.ID, "dup"), b); err != nil {
				t.Fatal(err)
			}
			putIndex(t, s, ix)
		}, "duplicate tool name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			store := &catalog.DiskStore{Dir: t.TempDir()}
			if _, err := catalog.WriteDocument(ctx, store, scaleDoc(ws, 2, 2)); err != nil {
				t.Fatal(err)
			}
			var metrics strings.Builder
			c := catalog.NewCache(store, 0, nil)
			c.Metrics = &metrics
			good, err := c.Get(ctx, ws)
			if err != nil {
				t.Fatal(err)
			}
			data, _, _ := store.GetObject(ctx, catalog.IndexKey(ws), "")
			var ix catalog.Index
			_ = json.Unmarshal(data, &ix)
			tc.spoil(t, store, &ix)
			if _, err := catalog.Load(ctx, store, ws, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v, want %q", err, tc.want)
			}
			if s, err := c.Get(ctx, ws); err != nil || s != good {
				t.Fatalf("cache: %v, want the last good copy", err)
			}
			if !strings.Contains(metrics.String(), `"reason":"invalid"`) {
				t.Errorf("metrics %q, want reason invalid", metrics.String())
			}
		})
	}
}

func putIndex(t *testing.T, s catalog.Store, ix *catalog.Index) {
	t.Helper()
	b, _ := json.Marshal(ix)
	if _, err := s.PutObject(t.Context(), catalog.IndexKey(ix.WorkspaceID), b); err != nil {
		t.Fatal(err)
	}
}

// TestDiskStoreKeys: keys that are not clean relative paths are refused; deleting a
// missing object is not an error.
func TestDiskStoreKeys(t *testing.T) {
	t.Parallel()
	s := &catalog.DiskStore{Dir: t.TempDir()}
	for _, k := range []string{"../x", "/etc/passwd", "", "a/../../b"} {
		if _, err := s.PutObject(t.Context(), k, []byte("x")); err == nil {
			t.Errorf("put %q accepted", k)
		}
		if _, _, err := s.GetObject(t.Context(), k, ""); err == nil || errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("get %q: %v", k, err)
		}
	}
	if err := s.DeleteObject(t.Context(), "catalog/v2/none.json"); err != nil {
		t.Errorf("delete missing: %v", err)
	}
}
