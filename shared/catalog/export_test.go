package catalog

import "context"

// LoadLazy is loadLazy without a cache (tests).
func LoadLazy(ctx context.Context, store Store, ws string) (*Snapshot, error) {
	return loadLazy(ctx, store, ws, nil)
}
