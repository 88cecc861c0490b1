package rules

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedBytes bounds every file git tracks: a build output (a 28.7 MB conformance
// client binary once) must never be committed again. The console's bundle is the one
// generated output the repository keeps on purpose (docs/CONSOLE.md), so its dist/ is exempt.
const maxTrackedBytes = 1 << 20

// bigFileExempt reports whether path (slash-separated, relative to the repository root) may
// exceed maxTrackedBytes.
func bigFileExempt(path string) bool {
	return strings.HasPrefix(path, "functions/marketplace/console/dist/")
}

// oversized returns "path (N bytes)" for each file of sizes over the bound and not exempt.
func oversized(sizes map[string]int64) []string {
	var out []string
	for path, n := range sizes {
		if n > maxTrackedBytes && !bigFileExempt(path) {
			out = append(out, fmt.Sprintf("%s (%d bytes)", path, n))
		}
	}
	return out
}

func TestNoLargeTrackedFiles(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git work tree: %v", err)
	}
	top := strings.TrimSpace(string(root))
	out, err := exec.Command("git", "-C", top, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	sizes := map[string]int64{}
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) == 0 {
			continue
		}
		fi, err := os.Lstat(filepath.Join(top, string(p)))
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		sizes[string(p)] = fi.Size()
	}
	if len(sizes) < 100 {
		t.Fatalf("git ls-files listed %d files; is the test running inside the repository?", len(sizes))
	}
	for _, v := range oversized(sizes) {
		t.Errorf("tracked file over %d bytes: %s (build outputs belong in .gitignore)", maxTrackedBytes, v)
	}
}

// TestLargeFileRuleCatches: the rule reports a large binary at the root and spares the
// console bundle, so a broken exemption or bound cannot pass silently.
func TestLargeFileRuleCatches(t *testing.T) {
	got := oversized(map[string]int64{
		"conformance-client":                        28_678_923,
		"functions/marketplace/console/dist/app.js": 2 << 20,
		"functions/marketplace/api/openapi.json":    200_000,
	})
	if len(got) != 1 || !strings.HasPrefix(got[0], "conformance-client ") {
		t.Errorf("oversized = %v, want just the root binary", got)
	}
}
