package catalog

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Snapshot is an immutable parsed document with its ETag and an index by exposed name.
// Snapshots are shared between requests: never modify one.
type Snapshot struct {
	Doc    *Document
	ETag   string
	byName map[string]ToolRef
	byConn map[string]*Connection
}

// ToolRef locates a proxied tool in a snapshot.
type ToolRef struct {
	Conn *Connection
	Tool *Tool
}

// Lookup returns the proxied tool exposed as name.
func (s *Snapshot) Lookup(name string) (ToolRef, bool) {
	r, ok := s.byName[name]
	return r, ok
}

// ConnectionByRef returns the connection whose id or handle is ref.
func (s *Snapshot) ConnectionByRef(ref string) (*Connection, bool) {
	c, ok := s.byConn[ref]
	return c, ok
}

// NewSnapshot indexes doc.
func NewSnapshot(doc *Document, etag string) *Snapshot {
	s := &Snapshot{Doc: doc, ETag: etag, byName: map[string]ToolRef{}, byConn: map[string]*Connection{}}
	for i := range doc.Connections {
		c := &doc.Connections[i]
		s.byConn[c.ID] = c
		s.byConn[c.Handle] = c
		for j := range c.Tools {
			s.byName[c.Tools[j].ExposedName] = ToolRef{Conn: c, Tool: &c.Tools[j]}
		}
	}
	return s
}

// Cache serves workspace snapshots from memory, revalidating against the store with a
// conditional GET (ETag) at most every TTL (DESIGN §6, CATALOG_TTL). A document is parsed
// once per ETag. When the store fails, the last good snapshot is served and the failure
// logged; a workspace with no document yet is an empty catalog.
type Cache struct {
	store  Store
	ttl    time.Duration
	logger *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]*cacheEntry
	group   singleflight.Group
}

type cacheEntry struct {
	snap    *Snapshot
	checked time.Time
}

// NewCache returns a cache over store revalidating every ttl (0 = every request).
func NewCache(store Store, ttl time.Duration, logger *slog.Logger) *Cache {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Cache{store: store, ttl: ttl, logger: logger, now: time.Now, entries: map[string]*cacheEntry{}}
}

// Get returns workspace ws's current snapshot. It returns an error only when the store
// fails and there is no earlier good copy.
func (c *Cache) Get(ctx context.Context, ws string) (*Snapshot, error) {
	c.mu.Lock()
	e := c.entries[ws]
	c.mu.Unlock()
	if e != nil && c.now().Sub(e.checked) < c.ttl {
		return e.snap, nil
	}
	v, err, _ := c.group.Do(ws, func() (any, error) { return c.refresh(ctx, ws, e) })
	if err != nil {
		return nil, err
	}
	return v.(*Snapshot), nil
}

func (c *Cache) refresh(ctx context.Context, ws string, prev *cacheEntry) (*Snapshot, error) {
	etag := ""
	if prev != nil {
		etag = prev.snap.ETag
	}
	data, newTag, err := c.store.Get(context.WithoutCancel(ctx), ws, etag)
	var snap *Snapshot
	switch {
	case errors.Is(err, ErrNotModified):
		snap = prev.snap
	case errors.Is(err, ErrNotFound):
		snap = NewSnapshot(&Document{Version: SchemaVersion, WorkspaceID: ws, Connections: []Connection{}}, "")
	case err != nil:
		if prev != nil {
			c.logger.WarnContext(ctx, "catalog store failed; serving last good copy",
				"workspace_id", ws, "etag", prev.snap.ETag, "err", err)
			c.remember(ws, prev.snap) // back off for one TTL before trying again
			return prev.snap, nil
		}
		return nil, err
	default:
		doc, derr := Decode(data)
		if derr != nil {
			if prev != nil {
				c.logger.ErrorContext(ctx, "catalog document invalid; serving last good copy", "workspace_id", ws, "err", derr)
				c.remember(ws, prev.snap)
				return prev.snap, nil
			}
			return nil, derr
		}
		snap = NewSnapshot(doc, newTag)
	}
	c.remember(ws, snap)
	return snap, nil
}

func (c *Cache) remember(ws string, s *Snapshot) {
	c.mu.Lock()
	c.entries[ws] = &cacheEntry{snap: s, checked: c.now()}
	c.mu.Unlock()
}

// Invalidate forgets workspace ws (the next Get goes to the store). The local entry
// point calls it after a write in the same process so that changes show at once.
func (c *Cache) Invalidate(ws string) {
	c.mu.Lock()
	if e := c.entries[ws]; e != nil {
		e.checked = time.Time{}
	}
	c.mu.Unlock()
}

// Stats reports, per cached workspace, the ETag and the age of the last revalidation in
// ms (for GET /health; no document content).
func (c *Cache) Stats() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]any, len(c.entries))
	now := c.now()
	for ws, e := range c.entries {
		out[ws] = map[string]any{"etag": e.snap.ETag, "ageMs": now.Sub(e.checked).Milliseconds(),
			"connections": len(e.snap.Doc.Connections), "tools": len(e.snap.byName)}
	}
	return map[string]any{"workspaces": out, "ttlMs": c.ttl.Milliseconds()}
}
