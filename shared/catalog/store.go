package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// ErrNotModified is returned by Store.GetObject when the stored object's ETag equals the
// ifNoneMatch the caller gave.
var ErrNotModified = errors.New("catalog: not modified")

// ErrNotFound is returned by Store.GetObject when no object exists at the key (and by
// Load when a workspace has no index).
var ErrNotFound = errors.New("catalog: document not found")

// Store keeps the catalog's objects: per workspace an index and one part per connection
// (IndexKey, PartKey; docs/CATALOG.md). Keys are slash-separated relative paths that
// this package builds from ids; a Store never interprets them.
type Store interface {
	// GetObject returns the object's bytes and their ETag. With ifNoneMatch equal to the
	// current ETag it returns ErrNotModified; with no object, ErrNotFound.
	GetObject(ctx context.Context, key, ifNoneMatch string) (data []byte, etag string, err error)
	// PutObject writes the object whole (atomically: a reader sees the old or the new
	// bytes) and returns its new ETag.
	PutObject(ctx context.Context, key string, data []byte) (etag string, err error)
	// DeleteObject removes the object; a missing one is not an error.
	DeleteObject(ctx context.Context, key string) error
}

// DiskStore is the local Store: files under Dir, ETag = quoted hex SHA-256 of the bytes.
// Use it through a pointer.
type DiskStore struct {
	Dir string
	// seen: path → diskSeen, the file last read there by a conditional GetObject and its
	// ETag, so that the next revalidation of an unchanged file answers ErrNotModified from
	// a stat, without reading and hashing it (as S3 answers 304 without a body).
	seen sync.Map
}

type diskSeen struct {
	fi   os.FileInfo
	etag string
}

// GetObject implements Store.
func (s *DiskStore) GetObject(_ context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, "", err
	}
	if ifNoneMatch != "" {
		// Put replaces the file by a rename, so new content is a new file (os.SameFile
		// compares device and inode); size and modification time guard an in-place edit.
		if v, ok := s.seen.Load(p); ok {
			if fi, err := os.Stat(p); err == nil {
				prev := v.(diskSeen)
				if prev.etag == ifNoneMatch && os.SameFile(prev.fi, fi) && prev.fi.Size() == fi.Size() && prev.fi.ModTime().Equal(fi.ModTime()) {
					return nil, prev.etag, ErrNotModified
				}
			}
		}
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", ErrNotFound
	}
	if err != nil {
		return nil, "", fmt.Errorf("catalog: disk get: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("catalog: disk get: %w", err)
	}
	data, err := io.ReadAll(f)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", ErrNotFound
	}
	if err != nil {
		return nil, "", fmt.Errorf("catalog: disk get: %w", err)
	}
	etag := etagOf(data)
	if ifNoneMatch != "" {
		// Remembered for revalidated keys only (the index): parts are read unconditionally
		// under ever new keys, and remembering them would grow without bound.
		s.seen.Store(p, diskSeen{fi: fi, etag: etag})
	}
	if etag == ifNoneMatch {
		return nil, etag, ErrNotModified
	}
	return data, etag, nil
}

// PutObject implements Store: it writes atomically (temp file + rename).
func (s *DiskStore) PutObject(_ context.Context, key string, data []byte) (string, error) {
	p, err := s.path(key)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("catalog: disk put: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("catalog: disk put: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("catalog: disk put: %w", err)
	}
	tmp.Close()
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("catalog: disk put: %w", err)
	}
	return etagOf(data), nil
}

// DeleteObject implements Store.
func (s *DiskStore) DeleteObject(_ context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("catalog: disk delete: %w", err)
	}
	s.seen.Delete(p)
	return nil
}

// path maps key to a file under Dir; a key that is not a clean relative path (absolute,
// "..", empty) is refused.
func (s *DiskStore) path(key string) (string, error) {
	if !fs.ValidPath(key) || key == "." {
		return "", fmt.Errorf("catalog: invalid object key %q", key)
	}
	return filepath.Join(s.Dir, filepath.FromSlash(key)), nil
}

func etagOf(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}
