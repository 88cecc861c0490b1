package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentpack/gateway/shared/budget"
	"github.com/agentpack/gateway/shared/emf"
	"github.com/maypok86/otter/v2"
	"golang.org/x/sync/singleflight"
)

// Snapshot is an immutable parsed document with its ETag and an index by exposed name.
// Snapshots are shared between requests: never modify one.
type Snapshot struct {
	Doc  *Document
	ETag string
	// index is the stored index this snapshot was assembled from (nil: built outside the
	// store), so that the next Load reuses the parts it names again.
	index  *Index
	byName map[string]ToolRef
	byConn map[string]*Connection
	memo   sync.Map     // key → *memoValue (Memo)
	size   atomic.Int64 // estimated bytes held (Size)

	// A lazy snapshot (Cache.GetLazy, lazy.go) is made from its index alone; its parts are
	// read in the background (ReadAll). Until ready is closed, Doc is nil and only ETag, Head, Size
	// (an estimate) and FirstTools may be used; Complete waits for it. ready is nil for a
	// snapshot complete from the start.
	ready    chan struct{}
	err      error  // why the background read failed (set before ready is closed)
	head     *Index // the index a lazy snapshot was made from
	store    Store
	ws       string
	read     func() // reads the whole document and closes ready (ReadAll runs it once)
	readOnce sync.Once
}

// Size is the estimated number of bytes the snapshot holds: the bytes of every string and
// raw JSON field of its document, plus a fixed overhead per tool (snapshotToolOverhead: the
// Tool struct and its entry in the by-name index), per connection (snapshotConnOverhead:
// the Connection struct and its two by-reference entries) and per snapshot. Parts shared
// with an earlier snapshot (Load) are counted in each, so the estimate errs high. Values
// derived later (Memo, e.g. a search index) are not counted: they exist only for workspaces
// above the discovery threshold. The Cache weighs its entries with it (docs/CATALOG.md
// "Many workspaces per instance").
func (s *Snapshot) Size() int64 { return s.size.Load() }

const (
	snapshotOverhead     = 512
	snapshotConnOverhead = 512
	snapshotToolOverhead = 256
)

func snapshotSize(doc *Document) int64 {
	n := int64(snapshotOverhead + len(doc.WorkspaceID))
	for i := range doc.Connections {
		c := &doc.Connections[i]
		n += snapshotConnOverhead + int64(len(c.ID)+len(c.Name)+len(c.Handle)+len(c.Scope)+len(c.ProjectID)+
			len(c.Source)+len(c.CatalogEntryID)+len(c.URL)+len(c.TransportType)+len(c.WorkingTransport)+
			len(c.ProtocolVersion)+len(c.Capabilities))
		for _, r := range c.UIResources {
			n += int64(len(r)) + 24
		}
		for j := range c.Tools {
			t := &c.Tools[j]
			n += snapshotToolOverhead + int64(len(t.ExposedName)+len(t.UpstreamName)+len(t.Title)+
				len(t.Description)+len(t.InputSchema)+len(t.OutputSchema)+len(t.Annotations)+len(t.Definition))
		}
	}
	return n
}

type memoValue struct {
	once sync.Once
	v    any
}

// Memo returns the value build made for key on this snapshot, calling build once per key
// (concurrent callers wait for the first). What a snapshot derives lazily — the search
// index of its tools — lives exactly as long as the snapshot: a superseded document takes
// its derived values with it.
func (s *Snapshot) Memo(key any, build func() any) any {
	s.wait()
	m, _ := s.memo.LoadOrStore(key, &memoValue{})
	mv := m.(*memoValue)
	mv.once.Do(func() { mv.v = build() })
	return mv.v
}

// ToolRef locates a proxied tool in a snapshot.
type ToolRef struct {
	Conn *Connection
	Tool *Tool
}

// Lookup returns the proxied tool exposed as name.
func (s *Snapshot) Lookup(name string) (ToolRef, bool) {
	s.wait()
	r, ok := s.byName[name]
	return r, ok
}

// ConnectionByRef returns the connection whose id or handle is ref.
func (s *Snapshot) ConnectionByRef(ref string) (*Connection, bool) {
	s.wait()
	c, ok := s.byConn[ref]
	return c, ok
}

// NewSnapshot indexes doc.
func NewSnapshot(doc *Document, etag string) *Snapshot {
	s := &Snapshot{ETag: etag}
	s.fill(doc)
	return s
}

// fill sets s's document and its indexes.
func (s *Snapshot) fill(doc *Document) {
	s.Doc, s.byName, s.byConn = doc, map[string]ToolRef{}, map[string]*Connection{}
	for i := range doc.Connections {
		c := &doc.Connections[i]
		s.byConn[c.ID] = c
		s.byConn[c.Handle] = c
		for j := range c.Tools {
			s.byName[c.Tools[j].ExposedName] = ToolRef{Conn: c, Tool: &c.Tools[j]}
		}
	}
	s.size.Store(snapshotSize(doc))
}

// Cache serves workspace snapshots from memory, revalidating against the store with a
// conditional GET of the workspace's index (its ETag) at most every TTL (docs/DESIGN.md
// §6, CATALOG_TTL; docs/CATALOG.md). A changed index is assembled by Load, which fetches
// only the parts the previous snapshot does not hold. When the store fails, the last good snapshot is served and the failure
// logged. A workspace with no document yet (created after the last rebuild) is built by
// Missing when set — so it still sees the global connections — else it is an empty catalog.
//
// The snapshots held are bounded by bytes (Snapshot.Size), DefaultMaxBytes unless
// SetMaxBytes says otherwise: past the bound the entry least likely to be used again is
// dropped (otter's W-TinyLFU), and that workspace's next request loads it again. Stats
// counts hits, misses and evictions.
type Cache struct {
	store  Store
	ttl    time.Duration
	logger *slog.Logger

	// Missing, when set, builds the document of a workspace the store has none for (e.g.
	// Build on the database). Its snapshot's ETag is a content hash, so an unchanged result
	// reuses the previous snapshot (and the servers cached for it).
	Missing func(ctx context.Context, ws string) (*Document, error)

	// Metrics, when set, receives one CloudWatch EMF line per failed revalidation
	// (RevalidationMetrics); os.Stdout in Lambda.
	Metrics io.Writer

	metricsOnce   sync.Once
	metrics       *emf.Writer // over Metrics, made at the first failure
	entries       *otter.Cache[string, *cacheEntry]
	storeFailures atomic.Int64
	group         singleflight.Group
}

// DefaultMaxBytes bounds a Cache's snapshots until SetMaxBytes (64 MiB).
const DefaultMaxBytes = 64 << 20

// SetMaxBytes bounds the snapshots held to n bytes of Snapshot.Size (the gateway derives n
// from the function's memory: package budget). Entries over the new bound are dropped.
func (c *Cache) SetMaxBytes(n int64) { c.entries.SetMaximum(uint64(max(n, 1))) }

// Stats returns the cache's counters: a hit is a Get that found the workspace's snapshot in
// memory (whatever its age: a stale one then revalidated or reloaded counts as a hit too),
// a miss one that found none and had to load it.
func (c *Cache) Stats() budget.Stats { return budget.StatsOf(c.entries) }

type cacheEntry struct {
	snap    *Snapshot
	checked time.Time
}

// NewCache returns a cache over store revalidating every ttl (0 = every request).
func NewCache(store Store, ttl time.Duration, logger *slog.Logger) *Cache {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Cache{store: store, ttl: ttl, logger: logger,
		entries: budget.New[string](DefaultMaxBytes, func(e *cacheEntry) int64 { return e.snap.Size() }, nil)}
}

// Get returns workspace ws's current snapshot, complete (its document read). It returns
// an error only when the store fails and there is no earlier good copy.
func (c *Cache) Get(ctx context.Context, ws string) (*Snapshot, error) {
	s, err := c.get(ctx, ws, false)
	if err != nil {
		return nil, err
	}
	if err := s.Complete(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// GetLazy is Get that, when the process holds no snapshot of ws (a cold start, or one
// evicted), returns a pending one made from the index alone (Snapshot.Pending, lazy.go),
// whose parts are read in the background once Snapshot.ReadAll or Complete is called.
// The caller must call Complete before it uses s.Doc or anything but ETag, Head, Size and
// FirstTools. A background read that fails
// drops the snapshot from the cache (the next Get loads again), logs and counts the
// failure like a failed load, and is Complete's error.
func (c *Cache) GetLazy(ctx context.Context, ws string) (*Snapshot, error) {
	return c.get(ctx, ws, true)
}

func (c *Cache) get(ctx context.Context, ws string, lazy bool) (*Snapshot, error) {
	e, _ := c.entries.GetIfPresent(ws)
	if e != nil && e.snap.failed() {
		e = nil // a lazy read failed just after it was remembered: load again
	}
	if e != nil && time.Since(e.checked) < c.ttl {
		return e.snap, nil
	}
	v, err, _ := c.group.Do(ws, func() (any, error) { return c.refresh(ctx, ws, e, lazy) })
	if err != nil {
		return nil, err
	}
	return v.(*Snapshot), nil
}

func (c *Cache) refresh(ctx context.Context, ws string, prev *cacheEntry, lazy bool) (*Snapshot, error) {
	if prev != nil && prev.snap.Complete(ctx) != nil {
		prev = nil // a lazy snapshot whose read failed is no good copy
	}
	var last *Snapshot
	if prev != nil {
		last = prev.snap
	}
	var loaded *Snapshot
	var err error
	if lazy && last == nil {
		loaded, err = loadLazy(context.WithoutCancel(ctx), c.store, ws, c.lazyDone)
	} else {
		loaded, err = Load(context.WithoutCancel(ctx), c.store, ws, last)
	}
	var snap *Snapshot
	var invalid *decodeError
	switch {
	case err == nil:
		snap = loaded
	case errors.Is(err, ErrNotFound):
		doc := &Document{Version: SchemaVersion, WorkspaceID: ws, Connections: []Connection{}}
		if c.Missing != nil {
			built, berr := c.Missing(context.WithoutCancel(ctx), ws)
			if berr != nil {
				c.revalidationFailed("build")
				if prev != nil {
					c.logger.WarnContext(ctx, "catalog document missing and build failed; serving last good copy",
						"workspace_id", ws, "err", berr)
					c.remember(ws, prev.snap)
					return prev.snap, nil
				}
				return nil, berr
			}
			doc = built
		}
		tag := contentTag(doc)
		if prev != nil && prev.snap.ETag == tag {
			snap = prev.snap
		} else {
			snap = NewSnapshot(doc, tag)
		}
	case errors.As(err, &invalid):
		c.revalidationFailed("invalid")
		if prev != nil {
			c.logger.ErrorContext(ctx, "catalog document invalid; serving last good copy", "workspace_id", ws, "err", err)
			c.remember(ws, prev.snap)
			return prev.snap, nil
		}
		return nil, err
	default:
		c.storeFailures.Add(1)
		c.revalidationFailed("store")
		if prev != nil {
			c.logger.WarnContext(ctx, "catalog store failed; serving last good copy",
				"workspace_id", ws, "etag", prev.snap.ETag, "err", err)
			c.remember(ws, prev.snap) // back off for one TTL before trying again
			return prev.snap, nil
		}
		return nil, err
	}
	c.remember(ws, snap)
	return snap, nil
}

// RevalidationMetrics is the EMF namespace and metric of a failed catalog revalidation:
// Agentpack/Catalog RevalidationFailures (Count), dimension reason = "store" (the store
// failed), "build" (a missing document could not be built from Postgres) or "invalid"
// (the document does not decode). The last good copy is served in each case when there
// is one.
const (
	RevalidationNamespace = "Agentpack/Catalog"
	RevalidationMetric    = "RevalidationFailures"
)

var revalidationSchema = emf.NewSchema(RevalidationNamespace, [][]string{{"reason"}},
	emf.Metric{Name: RevalidationMetric, Unit: emf.Count})

func (c *Cache) revalidationFailed(reason string) {
	c.metricsOnce.Do(func() { c.metrics = emf.NewWriter(c.Metrics) })
	c.metrics.Write(revalidationSchema, []emf.Prop{{Key: "reason", Value: reason}}, 1)
}

// contentTag is the ETag of a document built outside the store: "built-" and a hash of
// its content without the generation time.
func contentTag(d *Document) string {
	cp := *d
	cp.GeneratedAt = time.Time{}
	b, _ := json.Marshal(&cp)
	sum := sha256.Sum256(b)
	return "built-" + hex.EncodeToString(sum[:12])
}

// lazyDone ends a lazy snapshot's background read: on success its entry is weighed again
// (its Size is now the document's); on failure the entry is dropped, so that the next
// request loads again, and the failure is counted and logged as a failed load is.
func (c *Cache) lazyDone(s *Snapshot, err error) {
	op := otter.WriteOp
	if err != nil {
		op = otter.InvalidateOp
		var invalid *decodeError
		reason := "store"
		if errors.As(err, &invalid) {
			reason = "invalid"
		} else if !errors.Is(err, ErrNotFound) {
			c.storeFailures.Add(1)
		}
		c.revalidationFailed(reason)
		c.logger.Error("catalog document could not be read", "workspace_id", s.ws, "etag", s.ETag, "err", err)
	}
	c.entries.ComputeIfPresent(s.ws, func(e *cacheEntry) (*cacheEntry, otter.ComputeOp) {
		if e.snap != s {
			return e, otter.CancelOp
		}
		return e, op
	})
}

func (c *Cache) remember(ws string, s *Snapshot) {
	c.entries.Set(ws, &cacheEntry{snap: s, checked: time.Now()})
}

// Invalidate forgets workspace ws (the next Get goes to the store). The local entry
// point calls it after a write in the same process so that changes show at once.
func (c *Cache) Invalidate(ws string) {
	c.entries.ComputeIfPresent(ws, func(e *cacheEntry) (*cacheEntry, otter.ComputeOp) {
		return &cacheEntry{snap: e.snap}, otter.WriteOp
	})
}

// Health is the cache's aggregate state for GET /health. It names no workspace:
// /health is unauthenticated.
type Health struct {
	CachedWorkspaces int   `json:"cachedWorkspaces"`
	TTLMs            int64 `json:"ttlMs"`
	// OldestAgeMs is the age of the least recently revalidated document, in ms: how stale
	// the staleest catalog this process would serve is (bounded by TTL while the store is
	// reachable and traffic flows).
	OldestAgeMs int64 `json:"oldestAgeMs"`
	// StoreFailures counts the times the store failed and the last good copy was served
	// (or, with none, the request failed) since the process started.
	StoreFailures int64 `json:"storeFailures"`
}

// Health returns the aggregate state.
func (c *Cache) Health() Health {
	h := Health{CachedWorkspaces: c.entries.EstimatedSize(), TTLMs: c.ttl.Milliseconds(), StoreFailures: c.storeFailures.Load()}
	now := time.Now()
	for _, e := range c.entries.All() {
		h.OldestAgeMs = max(h.OldestAgeMs, now.Sub(e.checked).Milliseconds())
	}
	return h
}
