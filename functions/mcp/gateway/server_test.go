package gateway

import (
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
