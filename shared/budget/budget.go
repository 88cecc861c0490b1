// Package budget derives the gateway's in-memory cache bounds from the memory the function
// is given, and holds the counters every bounded cache reports (docs/CATALOG.md "Many
// workspaces per instance").
//
// Each cache that grows with the number of workspaces or connections a warm process serves
// is bounded by bytes — an estimate of each entry's size, documented where the entry is —
// not by a count of entries: ten thousand one-tool workspaces and ten workspaces of two
// thousand tools weigh what they hold, not what they number.
package budget

import (
	"os"
	"strconv"
	"strings"

	"github.com/maypok86/otter/v2"
	"github.com/maypok86/otter/v2/stats"
)

// DefaultMemoryMB is the function memory assumed when AWS_LAMBDA_FUNCTION_MEMORY_SIZE is
// absent or unusable (template.yaml Globals.Function.MemorySize), so that make run and
// tests run under the deployed bounds. MinMemoryMB is Lambda's smallest memory size.
const (
	DefaultMemoryMB = 512
	MinMemoryMB     = 128
)

// The share of the function's memory each cache may hold, in percent. Together 42 %: the
// soft memory limit is 80 % of the memory (functions/mcp/gateway/runtime.go), and the rest
// of the live heap is requests in flight, upstream sessions and the runtime.
const (
	CatalogPercent = 15 // parsed catalog snapshots (package catalog)
	ServersPercent = 15 // built servers and tools/list answers (package gateway)
	TargetsPercent = 2  // connection rows for forwarding (package gateway/forward)
	// SessionsPercent bounds the upstream sessions the pool keeps (package mcpclient).
	SessionsPercent = 10
)

// Env variables that set a cache's bound in bytes instead of its share of the memory
// (a positive integer; anything else is ignored).
const (
	EnvCatalogBytes  = "CATALOG_CACHE_BYTES"
	EnvServersBytes  = "SERVER_CACHE_BYTES"
	EnvTargetsBytes  = "TARGET_CACHE_BYTES"
	EnvSessionsBytes = "UPSTREAM_SESSION_BYTES"
)

// MemoryMB is the function's memory in MiB from getenv: AWS_LAMBDA_FUNCTION_MEMORY_SIZE
// (Lambda sets it, in MB that are in fact MiB), or DefaultMemoryMB when it is absent, not an
// integer, or under MinMemoryMB.
func MemoryMB(getenv func(string) string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"))); err == nil && n >= MinMemoryMB {
		return n
	}
	return DefaultMemoryMB
}

// Caches are the byte bounds of the gateway's caches.
type Caches struct {
	Catalog  int64
	Servers  int64
	Targets  int64
	Sessions int64
}

// FromEnv returns the bounds for the process's environment (os.Getenv).
func FromEnv() Caches { return Derive(os.Getenv) }

// Derive returns each cache's bound: its env variable when that is a positive integer,
// else its percentage of MemoryMB(getenv).
func Derive(getenv func(string) string) Caches {
	mem := int64(MemoryMB(getenv)) << 20
	pick := func(env string, percent int64) int64 {
		if n, err := strconv.ParseInt(strings.TrimSpace(getenv(env)), 10, 64); err == nil && n > 0 {
			return n
		}
		return mem * percent / 100
	}
	return Caches{
		Catalog:  pick(EnvCatalogBytes, CatalogPercent),
		Servers:  pick(EnvServersBytes, ServersPercent),
		Targets:  pick(EnvTargetsBytes, TargetsPercent),
		Sessions: pick(EnvSessionsBytes, SessionsPercent),
	}
}

// Stats are one cache's counters since the process started, and its present weight.
// Hits and Misses count lookups that found / did not find an entry; Evictions count the
// entries dropped to stay under MaxBytes (not explicit removals).
type Stats struct {
	Hits      uint64  `json:"hits"`
	Misses    uint64  `json:"misses"`
	HitRate   float64 `json:"hitRate"`
	Evictions uint64  `json:"evictions"`
	Entries   int     `json:"entries"`
	Bytes     uint64  `json:"bytes"`
	MaxBytes  uint64  `json:"maxBytes"`
}

// New returns a cache bounded to maxBytes of entries weighed by weigh (bytes; clamped to
// 1..2³²−1), recording hits, misses and evictions. Maintenance (eviction included) runs on
// the calling goroutine, so the bound holds when Set returns and the cache starts no
// goroutine. The policy is otter's W-TinyLFU: what goes first is what is least likely to
// be used again — an entry neither recent nor frequent. gone, when not nil, is called
// after an entry left the cache (evicted or invalidated; not when its value was replaced);
// it runs under the cache's eviction lock and must not call the cache.
func New[K comparable, V any](maxBytes int64, weigh func(V) int64, gone func(K, V)) *otter.Cache[K, V] {
	if maxBytes < 1 {
		maxBytes = 1
	}
	var onDeletion func(otter.DeletionEvent[K, V])
	if gone != nil {
		onDeletion = func(e otter.DeletionEvent[K, V]) {
			if e.Cause != otter.CauseReplacement {
				gone(e.Key, e.Value)
			}
		}
	}
	return otter.Must(&otter.Options[K, V]{
		OnDeletion:    onDeletion,
		MaximumWeight: uint64(maxBytes),
		Weigher: func(_ K, v V) uint32 {
			return uint32(min(max(weigh(v), 1), 1<<32-1))
		},
		StatsRecorder: stats.NewCounter(),
		Executor:      func(fn func()) { fn() },
	})
}

// StatsOf reads c's counters (HitRate 0 before the first lookup).
func StatsOf[K comparable, V any](c *otter.Cache[K, V]) Stats {
	s := c.Stats()
	out := Stats{
		Hits: s.Hits, Misses: s.Misses, Evictions: s.Evictions,
		Entries: c.EstimatedSize(), Bytes: c.WeightedSize(), MaxBytes: c.GetMaximum(),
	}
	if s.Requests() > 0 {
		out.HitRate = s.HitRatio()
	}
	return out
}
