package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDeriveRuntime: the GC settings follow AWS_LAMBDA_FUNCTION_MEMORY_SIZE (80 % of it as
// the soft limit, GOGC 400), fall back to the template's 512 MB without a usable value, and
// an explicit GOGC / GOMEMLIMIT is never overridden.
func TestDeriveRuntime(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	tests := []struct {
		name string
		env  map[string]string
		want runtimeSettings
	}{
		{"no variable: template default", nil, runtimeSettings{GCPercent: 400, MemoryLimit: 512 * mib * 80 / 100, MemoryMB: 512}},
		{"lambda 1024", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"},
			runtimeSettings{GCPercent: 400, MemoryLimit: 1024 * mib * 80 / 100, MemoryMB: 1024}},
		{"lambda 128 (smallest)", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128"},
			runtimeSettings{GCPercent: 400, MemoryLimit: 128 * mib * 80 / 100, MemoryMB: 128}},
		{"lambda 10240 (largest)", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "10240"},
			runtimeSettings{GCPercent: 400, MemoryLimit: 10240 * mib * 80 / 100, MemoryMB: 10240}},
		{"not a number", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "lots"},
			runtimeSettings{GCPercent: 400, MemoryLimit: 512 * mib * 80 / 100, MemoryMB: 512}},
		{"below Lambda's minimum", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "64"},
			runtimeSettings{GCPercent: 400, MemoryLimit: 512 * mib * 80 / 100, MemoryMB: 512}},
		{"negative", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "-1024"},
			runtimeSettings{GCPercent: 400, MemoryLimit: 512 * mib * 80 / 100, MemoryMB: 512}},
		{"explicit GOMEMLIMIT wins", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024", "GOMEMLIMIT": "1GiB"},
			runtimeSettings{GCPercent: 400, MemoryLimit: 0, MemoryMB: 1024}},
		{"explicit GOGC wins", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024", "GOGC": "100"},
			runtimeSettings{GCPercent: 0, MemoryLimit: 1024 * mib * 80 / 100, MemoryMB: 1024}},
		{"both explicit", map[string]string{"GOGC": "off", "GOMEMLIMIT": "200MiB"},
			runtimeSettings{MemoryMB: 512}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := deriveRuntime(func(k string) string { return tc.env[k] })
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("deriveRuntime (-want +got):\n%s", d)
			}
		})
	}
}
