package gateway

import (
	"fmt"
	"slices"
	"testing"
)

// TestServerCacheRetiresSuperseded: a new catalog ETag of a workspace drops that
// workspace's items of other ETags (every role class, toolset and endpoint) and leaves
// other workspaces' items alone.
func TestServerCacheRetiresSuperseded(t *testing.T) {
	t.Parallel()
	c := newServerCache(1 << 20)
	for _, k := range []string{"w1|e1|admin||||", "w1|e1|member|meta|||", "w1|e1|admin||||conn", "w2|e1|admin||||", "w2|e9|admin||||"} {
		c.get(k, 0)
	}
	// w2's second ETag already retired its first.
	if got, want := c.keys(), []string{"w1|e1|admin||||", "w1|e1|admin||||conn", "w1|e1|member|meta|||", "w2|e9|admin||||"}; !slices.Equal(got, want) {
		t.Fatalf("keys %q, want %q", got, want)
	}
	it := c.get("w1|e2|admin||||", 0)
	if got, want := c.keys(), []string{"w1|e2|admin||||", "w2|e9|admin||||"}; !slices.Equal(got, want) {
		t.Fatalf("after a new ETag of w1: keys %q, want %q", got, want)
	}
	if c.get("w1|e2|admin||||", 0) != it {
		t.Error("a hit returned another item")
	}
	// A key without the separators (never made by serverKey) is kept as it is.
	c.get("odd", 0)
	if c.len() != 3 {
		t.Errorf("len %d, want 3", c.len())
	}
}

// TestServerCacheBoundedByBytes: items are weighed (their snapshot's size plus what they
// built, re-weighed as they build) and the cache holds at most its budget of bytes: an
// item read again and again stays while cold ones go; hits and misses are counted.
func TestServerCacheBoundedByBytes(t *testing.T) {
	t.Parallel()
	const snap = 10_000
	budget := int64(20 * (snap + itemOverhead))
	c := newServerCache(budget)
	hot := c.get("hot|e|admin||||", snap)
	for i := range 60 {
		if c.get("hot|e|admin||||", snap) != hot {
			t.Fatal("the hot item was replaced")
		}
		c.get(fmt.Sprintf("w%02d|e|admin||||", i), snap)
		if st := c.stats(); int64(st.Bytes) > budget {
			t.Fatalf("after %d items: %d bytes, budget %d", i+1, st.Bytes, budget)
		}
	}
	st := c.stats()
	if st.Evictions == 0 || st.Misses != 61 || st.Hits != 60 {
		t.Errorf("stats %+v: want evictions, 61 misses, 60 hits", st)
	}
	// Building grows the item's weight in the cache.
	hot.grew(builtServerBytes)
	var sum int64
	for _, it := range c.c.All() {
		sum += it.weight()
	}
	if got := int64(c.stats().Bytes); got != sum {
		t.Errorf("cache weighs %d bytes, its items %d: a growth was not re-weighed", got, sum)
	}
	if int64(c.stats().Bytes) > budget {
		t.Errorf("%d bytes over the budget %d after a growth", c.stats().Bytes, budget)
	}
	// The index by workspace forgets evicted keys (it does not grow with the churn).
	c.mu.Lock()
	n := len(c.byWS)
	c.mu.Unlock()
	if n > c.len()+1 {
		t.Errorf("index holds %d workspaces for %d items", n, c.len())
	}
}
