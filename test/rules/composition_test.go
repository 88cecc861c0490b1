package rules

import (
	"fmt"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// mayImportDeps reports whether the file at p (slash-separated, relative to the repository
// root) may import shared/deps, the wiring from the environment: the composition roots
// (each function's main.go, the commands under cmd/) and shared/deps itself. Handlers take
// the services as shared/services' Services instead (docs/ARCHITECTURE.md "Composition").
func mayImportDeps(p string) bool {
	if strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "shared/deps/") {
		return true
	}
	parts := strings.Split(p, "/")
	return len(parts) == 3 && parts[0] == "functions" && parts[2] == "main.go"
}

// compositionViolations returns "file: imports path (reason)" for each import, in files
// (path → Go source, tests included), that breaks a composition rule:
//
//   - shared/deps is imported only where mayImportDeps allows;
//   - a file under functions/X/ imports nothing under functions/Y/ for X ≠ Y (each
//     function is its own deployable; what two share lives in shared/);
//   - a non-test file under functions/ imports nothing under cmd/ (the commands compose
//     the functions and reach shared/deps, so such an import would go round both rules
//     above; tests may start cmd/local's stacks);
//   - a file under shared/ imports nothing under infra/, functions/ or cmd/ (shared/ is
//     the layer below them all).
//
// A file that does not parse is reported as such.
func compositionViolations(files map[string]string) []string {
	fset := token.NewFileSet()
	var out []string
	for p, src := range files {
		f, err := parser.ParseFile(fset, p, src, parser.ImportsOnly)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		parts := strings.Split(p, "/")
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			rel, ok := strings.CutPrefix(ip, module+"/")
			if !ok {
				continue
			}
			top, rest, _ := strings.Cut(rel, "/")
			switch {
			case (rel == "shared/deps" || strings.HasPrefix(rel, "shared/deps/")) && !mayImportDeps(p):
				out = append(out, fmt.Sprintf("%s: imports %s (only the functions' main.go, cmd/ and shared/deps may: take shared/services' Services)", p, ip))
			case parts[0] == "functions" && top == "functions" && len(parts) > 2 && strings.Split(rest, "/")[0] != parts[1]:
				out = append(out, fmt.Sprintf("%s: imports %s (one function imports no other's packages: move what both need to shared/, or assemble in cmd/)", p, ip))
			case parts[0] == "functions" && top == "cmd" && !strings.HasSuffix(p, "_test.go"):
				out = append(out, fmt.Sprintf("%s: imports %s (a function's code imports nothing from cmd/: the commands compose the functions, not the other way; tests may use cmd/local's stacks)", p, ip))
			case parts[0] == "shared" && (top == "infra" || top == "functions" || top == "cmd"):
				out = append(out, fmt.Sprintf("%s: imports %s (shared/ imports nothing from infra/, functions/ or cmd/)", p, ip))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestComposition: the composition rules hold over every Go file of the repository, tests
// included (issue 45: shared/deps was imported by the handlers, shared/testpeer reached
// into infra/rie, and the marketplace API into the pins function).
func TestComposition(t *testing.T) {
	files := goFiles(t)
	n := 0 // the composition roots that import shared/deps: the rule must see them
	for p, src := range files {
		if mayImportDeps(p) && strings.Contains(src, "\""+module+"/shared/deps\"") {
			n++
		}
	}
	if n < 4 {
		t.Fatalf("found %d files importing shared/deps; is the test reading the repository?", n)
	}
	for _, v := range compositionViolations(files) {
		t.Error(v)
	}
}

// TestCompositionRulesCatch: each rule reports the file that breaks it and spares the
// files it allows.
func TestCompositionRulesCatch(t *testing.T) {
	imp := func(pkg string, paths ...string) string {
		var b strings.Builder
		b.WriteString("package " + pkg + "\n\nimport (\n")
		for _, p := range paths {
			b.WriteString("\t_ \"" + module + "/" + p + "\"\n")
		}
		b.WriteString(")\n")
		return b.String()
	}
	got := compositionViolations(map[string]string{
		// Allowed.
		"functions/mcp/main.go":                  imp("main", "shared/deps", "functions/mcp/gateway"),
		"cmd/local/stack/stack.go":               imp("stack", "shared/deps", "functions/pins/api", "functions/mcp/gateway"),
		"shared/deps/deps.go":                    imp("deps", "shared/services"),
		"functions/mcp/gateway/gateway.go":       imp("gateway", "shared/services", "functions/mcp/gateway/builtin"),
		"shared/testpeer/node.go":                imp("testpeer", "shared/reporoot"),
		"infra/check/routes_test.go":             imp("check", "functions/marketplace/api", "functions/pins/api"),
		"functions/marketplace/api/api_test.go":  imp("api_test", "cmd/local/stacktest", "shared/services"),
		"functions/marketplace/console/serve.go": imp("console", "functions/marketplace/api"),
		"functions/pins/api/routes.go":           imp("api", "shared/pins"),
		"shared/bootstrap/lambda.go":             imp("bootstrap", "shared/dbsecret"),
		// Broken: shared/deps outside a composition root (a handler, its test, a shared package).
		"functions/marketplace/api/api.go":        imp("api", "shared/deps"),
		"functions/mcp/gateway/builtin/x_test.go": imp("builtin", "shared/deps"),
		"functions/mcp/tasks_test.go":             imp("main", "shared/deps/sub"),
		"infra/check/deps_test.go":                imp("check", "shared/deps"),
		"shared/bootstrap/other.go":               imp("bootstrap", "shared/deps"),
		// Broken: one function's package in another's (its test too).
		"functions/marketplace/api/openapi.go":   imp("api", "functions/pins/api"),
		"functions/pins/api/api_test.go":         imp("api_test", "functions/marketplace/api"),
		"functions/healthcheck/health/health.go": imp("health", "functions/healthcheckx"),
		// Broken: a function's code reaching into the commands.
		"functions/pins/api/stack.go": imp("api", "cmd/local/stacktest"),
		// Broken: shared/ reaching up.
		"shared/testpeer/rie.go":   imp("testpeer", "infra/rie"),
		"shared/catalog/x_test.go": imp("catalog", "functions/mcp/gateway"),
		"shared/seed/seed.go":      imp("seed", "cmd/local/stack"),
		"shared/broken/broken.go":  "package broken\n\nimport (\n",
	})
	want := []string{
		"functions/healthcheck/health/health.go: imports " + module + "/functions/healthcheckx",
		"functions/marketplace/api/api.go: imports " + module + "/shared/deps",
		"functions/marketplace/api/openapi.go: imports " + module + "/functions/pins/api",
		"functions/mcp/gateway/builtin/x_test.go: imports " + module + "/shared/deps",
		"functions/mcp/tasks_test.go: imports " + module + "/shared/deps/sub",
		"functions/pins/api/api_test.go: imports " + module + "/functions/marketplace/api",
		"functions/pins/api/stack.go: imports " + module + "/cmd/local/stacktest",
		"infra/check/deps_test.go: imports " + module + "/shared/deps",
		"shared/bootstrap/other.go: imports " + module + "/shared/deps",
		"shared/broken/broken.go: ",
		"shared/catalog/x_test.go: imports " + module + "/functions/mcp/gateway",
		"shared/seed/seed.go: imports " + module + "/cmd/local/stack",
		"shared/testpeer/rie.go: imports " + module + "/infra/rie",
	}
	if len(got) != len(want) {
		t.Fatalf("compositionViolations gave %d:\n%s\nwant %d", len(got), strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("violation %d = %q, want it to start with %q", i, got[i], want[i])
		}
	}
}
