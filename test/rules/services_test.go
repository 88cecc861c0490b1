package rules

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// serviceTypes are the type names that make a shared package's type a service.
var serviceTypes = []string{"Service", "Importer"}

// mayConstructServices reports whether the file at p (slash-separated, relative to the
// repository root) may construct a service: the composition (shared/deps, and
// shared/services whose NewServices it calls), the commands (cmd/: the local entry point,
// its stack and stack tests, the bench) and each function's main.go, and tests.
func mayConstructServices(p string) bool {
	if strings.HasSuffix(p, "_test.go") || strings.HasPrefix(p, "shared/deps/") || strings.HasPrefix(p, "shared/services/") ||
		strings.HasPrefix(p, "cmd/") {
		return true
	}
	parts := strings.Split(p, "/")
	return len(parts) == 3 && parts[0] == "functions" && parts[2] == "main.go"
}

// serviceConstructions returns "file:line pkg.Name" for each construction of a service
// outside the places mayConstructServices allows, in files (path → Go source): a
// composite literal of a type named Service or Importer declared in a package under
// shared/ (`&pkg.Service{…}`, `pkg.Importer{…}`), or a call of such a package's exported
// function named New… that returns one (upstreamauth.New). A file that does not parse is
// reported as such.
func serviceConstructions(files map[string]string) []string {
	fset := token.NewFileSet()
	parsed := map[string]*ast.File{}
	var out []string
	for p, src := range files {
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		parsed[p] = f
	}
	// The services: import path → names that construct one (the types, the New… functions).
	ctors := map[string]map[string]bool{}
	for p, f := range parsed {
		if !strings.HasPrefix(p, "shared/") || strings.HasSuffix(p, "_test.go") {
			continue
		}
		pkg := module + "/" + path.Dir(p)
		add := func(name string) {
			if ctors[pkg] == nil {
				ctors[pkg] = map[string]bool{}
			}
			ctors[pkg][name] = true
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && slices.Contains(serviceTypes, ts.Name.Name) {
						add(ts.Name.Name)
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil && strings.HasPrefix(d.Name.Name, "New") && returnsService(d.Type) {
					add(d.Name.Name)
				}
			}
		}
	}
	for p, f := range parsed {
		if mayConstructServices(p) {
			continue
		}
		names := map[string]string{} // local package name → import path, for service packages
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if ctors[ip] == nil {
				continue
			}
			local := path.Base(ip)
			if im.Name != nil {
				local = im.Name.Name
			}
			names[local] = ip
		}
		if len(names) == 0 {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var sel ast.Expr
			switch n := n.(type) {
			case *ast.CompositeLit:
				sel = n.Type
			case *ast.CallExpr:
				sel = n.Fun
			default:
				return true
			}
			s, ok := sel.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := s.X.(*ast.Ident)
			if !ok || names[x.Name] == "" || !ctors[names[x.Name]][s.Sel.Name] {
				return true
			}
			// A literal of the type, or a call of a New… function (not a call of the type).
			if _, lit := n.(*ast.CompositeLit); lit == strings.HasPrefix(s.Sel.Name, "New") {
				return true
			}
			out = append(out, fmt.Sprintf("%s:%d %s.%s", p, fset.Position(n.Pos()).Line, x.Name, s.Sel.Name))
			return true
		})
	}
	slices.Sort(out)
	return out
}

// returnsService reports whether ft has a result of type Service, *Service, Importer or
// *Importer (unqualified: the package's own).
func returnsService(ft *ast.FuncType) bool {
	if ft.Results == nil {
		return false
	}
	for _, r := range ft.Results.List {
		t := r.Type
		if s, ok := t.(*ast.StarExpr); ok {
			t = s.X
		}
		if id, ok := t.(*ast.Ident); ok && slices.Contains(serviceTypes, id.Name) {
			return true
		}
	}
	return false
}

// goFiles reads every .go file of the repository (path relative to its root → source).
func goFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == ".state" || d.Name() == "cdk.out") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[filepath.ToSlash(strings.TrimPrefix(p, "../../"))] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestServicesComposedOnce: the domain services are built once per process, in
// shared/services (services.NewServices, which deps.Build calls) or a composition root
// (cmd/, a function's main.go), and handed to the handlers and built-ins that use them
// (issue 35: the same wiring was copied into two to four handlers, built on every request).
func TestServicesComposedOnce(t *testing.T) {
	files := goFiles(t)
	if _, ok := files["shared/services/services.go"]; !ok {
		t.Fatal("shared/services/services.go not found from the test's folder; did it move?")
	}
	for _, v := range serviceConstructions(files) {
		t.Errorf("%s: a service is constructed outside shared/deps, shared/services, cmd/ and the functions' main.go; take it from services.Services", v)
	}
}

func TestServicesRuleCatches(t *testing.T) {
	const svc = "package foo\n\ntype Service struct{ N int }\n\nfunc New() *Service { return &Service{} }\n\nfunc NewView() int { return 0 }\n"
	const use = "package x\n\nimport (\n\t\"github.com/agentpack/gateway/shared/foo\"\n\tbar \"github.com/agentpack/gateway/shared/foo\"\n)\n\n" +
		"var a = &foo.Service{N: 1}\nvar b = bar.New()\nvar c = foo.NewView()\nvar d = []foo.Service{}\n"
	got := serviceConstructions(map[string]string{
		"shared/foo/foo.go":           svc,
		"functions/x/api/handler.go":  use,
		"functions/x/main.go":         strings.Replace(use, "package x", "package main", 1),
		"functions/x/api/h_test.go":   use,
		"cmd/local/stack/stack.go":    use,
		"shared/deps/deps.go":         use,
		"shared/services/services.go": use,
	})
	want := []string{"functions/x/api/handler.go:8 foo.Service", "functions/x/api/handler.go:9 bar.New"}
	if !slices.Equal(got, want) {
		t.Errorf("serviceConstructions = %q, want %q", got, want)
	}
}
