package budget

import "testing"

// TestDerive: each bound is its share of AWS_LAMBDA_FUNCTION_MEMORY_SIZE (the default 512
// MiB when absent, unparsable or under 128), unless its env variable gives bytes.
func TestDerive(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want Caches
	}{
		{"default", nil, Caches{512 << 20 * 15 / 100, 512 << 20 * 15 / 100, 512 << 20 * 2 / 100, 512 << 20 * 10 / 100}},
		{"1024", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"}, Caches{1024 << 20 * 15 / 100, 1024 << 20 * 15 / 100, 1024 << 20 * 2 / 100, 1024 << 20 * 10 / 100}},
		{"too small", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "64"}, Caches{512 << 20 * 15 / 100, 512 << 20 * 15 / 100, 512 << 20 * 2 / 100, 512 << 20 * 10 / 100}},
		{"overrides", map[string]string{EnvCatalogBytes: "1000", EnvServersBytes: "-5", EnvTargetsBytes: "x"},
			Caches{1000, 512 << 20 * 15 / 100, 512 << 20 * 2 / 100, 512 << 20 * 10 / 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Derive(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("Derive = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestStatsOf: hits, misses, evictions and bytes are read from the cache; the hit rate
// is 0 before any lookup.
func TestStatsOf(t *testing.T) {
	t.Parallel()
	c := New[string](100, func(v int) int64 { return int64(v) }, nil)
	if s := StatsOf(c); s.HitRate != 0 || s.MaxBytes != 100 {
		t.Fatalf("fresh: %+v", s)
	}
	var gone []string
	c = New[string](100, func(v int) int64 { return int64(v) }, func(k string, _ int) { gone = append(gone, k) })
	c.Set("a", 60)
	c.GetIfPresent("a")
	c.GetIfPresent("b")
	c.Set("a", 70) // a replacement is not a deletion
	c.Set("c", 50) // over the budget: one goes
	s := StatsOf(c)
	if s.Hits != 1 || s.Misses != 1 || s.HitRate != 0.5 || s.Evictions != 1 || s.Bytes > 100 || len(gone) != 1 {
		t.Errorf("stats %+v, gone %q", s, gone)
	}
}
