package check

import (
	"testing"

	"github.com/agentpack/gateway/infra/rie"
	"github.com/agentpack/gateway/shared/testpeer"
)

// maxBootstrapBytes is the largest bootstrap a function may ship (25 MB, decimal): above it
// cold starts and the deployment package grow for nothing. The marketplace's grew to
// 29.5 MB once, because a reachable html/template Execute disabled the linker's dead-code
// elimination of methods (docs/OPERATIONS.md "Binary size"). The bound is 26 MB since the
// gateway's bootstrap reached 25.0 MB (linux/arm64) with the generated built-in schemas and
// the apps and skills packages: an allowance of 1 MB, to bring back down.
const maxBootstrapBytes = 26_000_000

// maxMarketplaceBytes is the marketplace's own bound: its OAuth authorization server
// (ory/fosite) keeps it at 35.3 MB even with github.com/ory/x trimmed to the two files
// fosite uses (third_party/oryx; docs/OPERATIONS.md "Binary size"). The marketplace
// serves the console and REST, never the proxied call.
const maxMarketplaceBytes = 36_000_000

// TestBootstrapSize builds every function as `make build` does (linux/arm64, stripped) and
// fails when one is over maxBootstrapBytes.
func TestBootstrapSize(t *testing.T) {
	root := testpeer.RepoRoot(t)
	for _, name := range []string{"mcp", "marketplace", "pins", "healthcheck"} {
		t.Run(name, func(t *testing.T) {
			_, size, err := rie.Build(t.Context(), root, name, t.TempDir(), "arm64")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%-12s size: %.1f MB (linux/arm64)", name, float64(size)/1e6)
			limit := int64(maxBootstrapBytes)
			if name == "marketplace" {
				limit = maxMarketplaceBytes
			}
			if size > limit {
				t.Errorf("%s bootstrap is %.1f MB, over the %.0f MB limit", name, float64(size)/1e6, float64(limit)/1e6)
			}
		})
	}
}
