package rules

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docPath is a backticked repository path in a doc: a file with an extension the project
// keeps, or a folder of one of the top-level code folders (`shared/dbtest`).
var docPath = regexp.MustCompile("`((?:shared|functions|cmd|infra|migrations|test|scripts|docs|web|third_party|mk)/[A-Za-z0-9_./-]+)`")

// TestArchitecturePathsExist holds docs/ARCHITECTURE.md's file and folder references to the
// tree: a file moved or renamed without its line in the doc fails here, so the doc cannot
// place a rule in a file that no longer holds it.
func TestArchitecturePathsExist(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range docPath.FindAllStringSubmatch(string(doc), -1) {
		p := strings.TrimSuffix(m[1], "/")
		if strings.ContainsAny(p, "*{}") || strings.HasSuffix(p, "...") {
			continue // a pattern, not a path
		}
		n++
		if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
			t.Errorf("docs/ARCHITECTURE.md names %s, which does not exist", p)
		}
	}
	if n < 30 {
		t.Fatalf("found %d paths in docs/ARCHITECTURE.md; the pattern no longer matches its style", n)
	}
}
