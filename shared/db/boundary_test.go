package db_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pgxAllowed are the folders, besides shared/db, whose production code may import the
// driver: dbtest and cmd/bench create and drop databases, telemetry hands the pool its
// query tracer (a pgx type). Everything else queries through shared/db.
var pgxAllowed = map[string]bool{"shared/db": true, "shared/dbtest": true, "cmd/bench": true, "shared/telemetry": true}

// TestStorageBoundary: no production Go file outside the allowed folders imports pgx or
// pgconn, so SQL stays behind shared/db's named queries (test files may keep fixtures).
func TestStorageBoundary(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" || rel == "infra/cdk" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || pgxAllowed[filepath.ToSlash(filepath.Dir(rel))] {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		seen++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/jackc/pgx") {
				t.Errorf("%s imports %s: query through shared/db instead", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 50 {
		t.Fatalf("walked only %d Go files from %s: wrong root?", seen, root)
	}
}
