package reporoot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind: from a package folder the root is the folder above holding this module's
// go.mod; from a folder under another module's go.mod (or none) it is an error.
func TestFind(t *testing.T) {
	t.Parallel()
	root, err := Find(".")
	if err != nil {
		t.Fatal(err)
	}
	here, _ := filepath.Abs(".")
	if here != filepath.Join(root, "shared", "reporoot") {
		t.Errorf("Find(.) = %s, want the folder two above %s", root, here)
	}
	if got, err := Find(filepath.Join(root, "docs")); err != nil || got != root {
		t.Errorf("Find(docs) = %q, %v; want %q", got, err, root)
	}

	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(other, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(sub); err == nil || !strings.Contains(err.Error(), "repository root not found") {
		t.Errorf("Find under another module = %q, %v; want an error", got, err)
	}
}
