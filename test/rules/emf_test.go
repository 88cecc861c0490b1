package rules

import (
	"strings"
	"testing"
)

// emfOwner is the one package that writes CloudWatch Embedded Metric Format lines.
const emfOwner = "shared/emf/"

// emfWriters returns the non-test Go files of files (path → source) outside emfOwner that
// spell out an EMF directive themselves.
func emfWriters(files map[string]string) []string {
	var out []string
	for path, src := range files {
		if strings.HasPrefix(path, emfOwner) || strings.HasSuffix(path, "_test.go") {
			continue
		}
		if strings.Contains(src, `"_aws"`) || strings.Contains(src, `"CloudWatchMetrics"`) {
			out = append(out, path)
		}
	}
	return out
}

// TestOneEMFWriter: EMF lines are written by shared/emf alone, so their shape is right in
// one place (three hand-written copies existed before it).
func TestOneEMFWriter(t *testing.T) {
	files := goFiles(t)
	if _, ok := files[emfOwner+"emf.go"]; !ok {
		t.Fatalf("%semf.go not found from the test's folder; did it move?", emfOwner)
	}
	for _, p := range emfWriters(files) {
		t.Errorf("%s writes an EMF directive itself; use shared/emf", p)
	}
}

func TestEMFRuleCatches(t *testing.T) {
	got := emfWriters(map[string]string{
		"shared/emf/emf.go":            `"_aws"`,
		"shared/catalog/cache.go":      `line := map[string]any{"_aws": 1}`,
		"shared/catalog/cache_test.go": `"_aws"`,
	})
	if len(got) != 1 || got[0] != "shared/catalog/cache.go" {
		t.Errorf("emfWriters = %v, want [shared/catalog/cache.go]", got)
	}
}
