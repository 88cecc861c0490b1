package gateway

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentpack/gateway/shared/budget"
)

// CacheStats returns the counters of the process's caches bounded by bytes, by name:
// "catalog" (parsed catalog snapshots per workspace), "servers" (server items per server
// key), "targets" (connection rows for forwarding) and "sessions" (the upstream sessions
// the pool keeps; evictions and bytes only, at mcpclient.SessionBytes each). GET /health reports them (aggregate
// figures only) and an EMF line per cache goes out at most every cacheMetricsEvery
// (docs/CATALOG.md "Many workspaces per instance").
func (g *Gateway) CacheStats() map[string]budget.Stats {
	out := map[string]budget.Stats{"servers": g.servers.stats(), "targets": g.forward.TargetStats()}
	if g.o.Catalog != nil {
		out["catalog"] = g.o.Catalog.Stats()
	}
	if g.o.Upstreams != nil {
		n, b, maxB, ev := g.o.Upstreams.SessionStats()
		out["sessions"] = budget.Stats{Entries: n, Bytes: uint64(b), MaxBytes: uint64(max(maxB, 0)), Evictions: uint64(ev)}
	}
	return out
}

// cacheMetricsEvery is the interval of the caches' EMF lines: a request that finds the
// last lines older than this writes new ones (so an idle process writes none).
const cacheMetricsEvery = time.Minute

// cacheMetrics remembers the counters last written, so that each line carries deltas.
type cacheMetrics struct {
	due  atomic.Int64 // unix ns before which no line is due (the per-request check)
	mu   sync.Mutex
	at   time.Time
	last map[string]budget.Stats
}

// emitCacheMetrics writes one EMF line per cache when the last ones are older than
// cacheMetricsEvery (the first request of a process writes them too).
func (g *Gateway) emitCacheMetrics() {
	cm := &g.cacheMetrics
	now := time.Now()
	if now.UnixNano() < cm.due.Load() {
		return
	}
	cm.mu.Lock()
	if !cm.at.IsZero() && now.Sub(cm.at) < cacheMetricsEvery {
		cm.mu.Unlock()
		return
	}
	cm.at = now
	cm.due.Store(now.Add(cacheMetricsEvery).UnixNano())
	prev := cm.last
	cur := g.CacheStats()
	cm.last = cur
	cm.mu.Unlock()
	for name, s := range cur {
		p := prev[name]
		g.metrics.Cache(name, s.Hits-p.Hits, s.Misses-p.Misses, s.Evictions-p.Evictions, s.Bytes)
	}
}
