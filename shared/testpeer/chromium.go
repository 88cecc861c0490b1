package testpeer

import (
	"os"
	"os/exec"
)

// Chromium returns the path of the browser the browser tests drive: CHROMIUM_PATH, else
// Debian's chromium (or chromium-browser) on PATH. Without one the test skips, unless
// REQUIRE_BROWSER=1 (make test installs it with chromium-deps and sets that), when it fails.
func Chromium(t TB) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p
	}
	for _, n := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("REQUIRE_BROWSER") == "1" {
		t.Fatalf("REQUIRE_BROWSER=1 but no chromium found (make chromium-deps installs it)")
	}
	t.Skipf("no chromium (make chromium-deps); set REQUIRE_BROWSER=1 to fail instead")
	return ""
}
