package rules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// unannotated returns "file:line Type.Method" for each exported method of a type named in
// types (the service types) in f that returns an error but does not start with
// `defer derrors.Wrap(&<its error result>, …)` (docs/ARCHITECTURE.md "Errors").
func unannotated(fset *token.FileSet, f *ast.File, types map[string]bool) []string {
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || !fn.Name.IsExported() || fn.Body == nil {
			continue
		}
		t := fn.Recv.List[0].Type
		if s, ok := t.(*ast.StarExpr); ok {
			t = s.X
		}
		id, ok := t.(*ast.Ident)
		if !ok || !types[id.Name] {
			continue
		}
		res := fn.Type.Results
		if res == nil || len(res.List) == 0 {
			continue
		}
		last := res.List[len(res.List)-1]
		if id, ok := last.Type.(*ast.Ident); !ok || id.Name != "error" {
			continue
		}
		if !startsWithWrap(fn, last) {
			out = append(out, fset.Position(fn.Pos()).String()+" "+id.Name+"."+fn.Name.Name)
		}
	}
	return out
}

func startsWithWrap(fn *ast.FuncDecl, last *ast.Field) bool {
	if len(last.Names) == 0 || len(fn.Body.List) == 0 {
		return false
	}
	ds, ok := fn.Body.List[0].(*ast.DeferStmt)
	if !ok || len(ds.Call.Args) < 2 {
		return false
	}
	sel, ok := ds.Call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Wrap" {
		return false
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "derrors" {
		return false
	}
	u, ok := ds.Call.Args[0].(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		return false
	}
	id, ok := u.X.(*ast.Ident)
	return ok && id.Name == last.Names[len(last.Names)-1].Name
}

// servicesStructTypes reads the service types from the composition's Services struct
// (shared/services/services.go): for each field of type *pkg.Type, the package directory
// under shared/ and the type name. The rule follows that struct, so a service added there
// (or one not named Service, such as registry.Importer) is held to it without a list kept
// here.
func servicesStructTypes(t *testing.T) map[string]map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), inRepo("shared/services/services.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Services" {
			return true
		}
		for _, fl := range ts.Type.(*ast.StructType).Fields.List {
			star, ok := fl.Type.(*ast.StarExpr)
			if !ok {
				continue
			}
			if sel, ok := star.X.(*ast.SelectorExpr); ok {
				pkg := sel.X.(*ast.Ident).Name
				if out[pkg] == nil {
					out[pkg] = map[string]bool{}
				}
				out[pkg][sel.Sel.Name] = true
			}
		}
		return false
	})
	if len(out) < 8 || !out["registry"]["Importer"] || !out["connections"]["Service"] {
		t.Fatalf("service types read from shared/services/services.go: %v", out)
	}
	return out
}

// TestServiceMethodsAnnotateErrors: every exported method of a shared service (a type of
// the Services struct) that can fail names its operation on the way out, with one deferred
// derrors.Wrap.
func TestServiceMethodsAnnotateErrors(t *testing.T) {
	types := servicesStructTypes(t)
	fset := token.NewFileSet()
	n := 0
	err := filepath.WalkDir(inRepo("shared"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		pkg := filepath.Base(filepath.Dir(p))
		if types[pkg] == nil {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, v := range unannotated(fset, f, types[pkg]) {
			t.Errorf("%s: an exported service method must start with defer derrors.Wrap(&err, …)", v)
		}
		n++
		return nil
	})
	if err != nil || n < 20 {
		t.Fatalf("walked %d files of the service packages: %v", n, err)
	}
}

// TestDerrorsRuleCatches: a method without the annotation, with it on another variable,
// or with a plain defer is reported; an annotated one and a method that cannot fail are not.
func TestDerrorsRuleCatches(t *testing.T) {
	src := `package x
type Service struct{}
func (s *Service) Bare() error { return nil }
func (s *Service) Other() (err error) { var e error; defer derrors.Wrap(&e, "x"); return nil }
func (s *Service) Plain() (err error) { defer println(); return nil }
func (s *Service) Local() (err error) { defer wrapErr(&err, "x"); return nil }
func (s *Service) Good(id string) (_ int, err error) { defer derrors.Wrap(&err, "x: good %s", id); return 0, nil }
func (s *Service) NoError() int { return 0 }
func (s *Service) unexported() error { return nil }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "offender.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := unannotated(fset, f, map[string]bool{"Service": true})
	want := []string{"Bare", "Other", "Plain", "Local"}
	if len(got) != len(want) {
		t.Fatalf("reported %v, want %v", got, want)
	}
	for i, w := range want {
		if !strings.HasSuffix(got[i], "Service."+w) {
			t.Errorf("report %d = %s, want Service.%s", i, got[i], w)
		}
	}
}
