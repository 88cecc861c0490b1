package catalog_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/agentpack/gateway/shared/catalog"
)

// TestDiskStoreRevalidation: an unchanged document revalidates as ErrNotModified, a new
// one is read whatever the caller's ETag, a removed one is ErrNotFound, and an ETag
// this process never saw reads the file.
func TestDiskStoreRevalidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &catalog.DiskStore{Dir: t.TempDir()}
	ws := "90000000-0000-4000-8000-000000000009"
	tag1, err := s.PutObject(ctx, ws, []byte(`{"v":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetObject(ctx, ws, tag1); !errors.Is(err, catalog.ErrNotModified) {
		t.Errorf("first revalidation: %v, want not modified (hash of the read file)", err)
	}
	data, tag, err := s.GetObject(ctx, ws, "")
	if err != nil || string(data) != `{"v":1}` || tag != tag1 {
		t.Fatalf("get: %q %q %v", data, tag, err)
	}
	for range 2 { // from the stat
		if _, tag, err := s.GetObject(ctx, ws, tag1); !errors.Is(err, catalog.ErrNotModified) || tag != tag1 {
			t.Errorf("unchanged: %q %v", tag, err)
		}
	}
	tag2, err := s.PutObject(ctx, ws, []byte(`{"v":2}`)) // same size, new file
	if err != nil {
		t.Fatal(err)
	}
	if data, tag, err := s.GetObject(ctx, ws, tag1); err != nil || string(data) != `{"v":2}` || tag != tag2 {
		t.Errorf("changed: %q %q %v", data, tag, err)
	}
	if _, _, err := s.GetObject(ctx, ws, `"other"`); err != nil {
		t.Errorf("unknown etag: %v", err)
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetObject(ctx, ws, tag2); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("removed: %v", err)
	}
}
