package rules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// queryFree lists directories (from the repository root) whose non-test code makes no
// query of its own: it calls no function of shared/db that takes a context (every query
// does; pure helpers such as db.IsUUID do not). The gateway's HTTP edge resolves and
// routes; its queries belong to the packages behind it (tasks, forward, builtin, the
// shared services). docs/ARCHITECTURE.md "Import rules".
var queryFree = []string{"functions/mcp/gateway"}

// dbQueries returns the names of shared/db's exported functions whose first parameter is
// a context.Context, read from its source.
func dbQueries(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(inRepo("shared", "db", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("shared/db sources: %v (%d files)", err, len(files))
	}
	out := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || fn.Type.Params.NumFields() == 0 {
				continue
			}
			if sel, ok := fn.Type.Params.List[0].Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Context" {
				out[fn.Name.Name] = true
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found %d query functions in shared/db; has the package moved?", len(out))
	}
	return out
}

// queryCalls returns "file:line db.Func" for each call in f of a query function of
// shared/db (under whatever name f imports it).
func queryCalls(fset *token.FileSet, f *ast.File, queries map[string]bool) []string {
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == module+"/shared/db" {
			local = "db"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local && queries[sel.Sel.Name] {
				out = append(out, fset.Position(call.Pos()).String()+" db."+sel.Sel.Name)
			}
		}
		return true
	})
	return out
}

func TestEdgeMakesNoQueries(t *testing.T) {
	queries := dbQueries(t)
	for _, dir := range queryFree {
		entries, err := os.ReadDir(inRepo(dir))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		n := 0
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, inRepo(dir, e.Name()), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			n++
			for _, c := range queryCalls(fset, f, queries) {
				t.Errorf("%s makes a query of its own: %s (queries belong to the packages behind the edge)", dir, c)
			}
		}
		if n == 0 {
			t.Errorf("%s: no Go files; has it moved?", dir)
		}
	}
}

// TestEdgeRuleCatches: a query call under the default or a renamed import is reported; a
// pure helper is not.
func TestEdgeRuleCatches(t *testing.T) {
	queries := dbQueries(t)
	src := `package gateway
import (
	"context"
	store "` + module + `/shared/db"
)
func f(ctx context.Context) { _, _ = store.ChatGet(ctx, nil, "x"); _ = store.IsUUID("x") }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "offender.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := queryCalls(fset, f, queries)
	if len(got) != 1 || !strings.HasSuffix(got[0], "db.ChatGet") {
		t.Fatalf("violations %v, want exactly the ChatGet call", got)
	}
	if !queries["ChatGet"] || queries["IsUUID"] || !slices.Contains(queryFree, "functions/mcp/gateway") {
		t.Fatal("the rule's inputs changed: ChatGet must count as a query, IsUUID must not")
	}
}

// inRepo is the path of parts below the repository's root (this package is test/rules).
func inRepo(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}
