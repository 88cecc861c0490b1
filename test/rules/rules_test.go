// Package rules holds the repository's import rules as a test (docs/ARCHITECTURE.md
// "Import rules"), in the manner of go-sdk's copyright_test.go: one walk over what the
// toolchain reports (`go list`), one error per broken rule, naming the package, the import
// and the rule's reason.
package rules

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/agentpack/gateway"

// A rule forbids packages matching From from reaching To (a package path, or a prefix
// ending in "/..."), unless the importing package is in Except.
type rule struct {
	name   string
	From   string   // a package path or prefix ("/..."); "" = every package of the module
	To     []string // forbidden imports
	Direct bool     // only the package's own imports (else every non-test dependency)
	Except []string // packages allowed to break the rule, each for a reason given below
	Why    string
}

var testOnly = []string{module + "/shared/testpeer", module + "/shared/dbtest", module + "/cmd/local/stacktest"}

var rules = []rule{
	{
		name: "test-only packages stay out of non-test code",
		To:   testOnly,
		// The test-only packages may build on each other; cmd/bench is the `make bench`
		// load driver (never deployed), which starts the same npm peers as the tests.
		Except: append(slices.Clone(testOnly), module+"/cmd/bench"),
		Why:    "shared/testpeer, shared/dbtest and cmd/local/stacktest are for tests; code that ships (and `make run`) must not carry them",
	},
	{
		name:   "SQL only in shared/db",
		To:     []string{"github.com/jackc/pgx/v5/..."},
		Direct: true,
		// dbtest and cmd/bench create and drop databases; telemetry hands pgx a tracer.
		Except: []string{module + "/shared/db", module + "/shared/dbtest", module + "/cmd/bench", module + "/shared/telemetry"},
		Why:    "the storage boundary: queries live in shared/db (docs/ARCHITECTURE.md)",
	},
	{
		name: "the functions do not import each other",
		From: module + "/functions/mcp/...",
		To:   []string{module + "/functions/marketplace/...", module + "/functions/pins/...", module + "/functions/healthcheck/..."},
		Why:  "each function is its own deployable; what they share lives in shared/",
	},
	{
		name: "the catalog does not reach the upstream client",
		From: module + "/shared/catalog/...",
		To:   []string{module + "/shared/mcpclient"},
		Why:  "the catalog edits JSON with shared/jsonobj; shared/mcpclient is the pool of upstream sessions, which the catalog has no use for (issue 35)",
	},
	{
		name: "shared/jsonobj is a leaf",
		From: module + "/shared/jsonobj/...",
		To:   []string{"github.com/...", "golang.org/..."},
		Why:  "the JSON member helpers import only the standard library, so any package may use them",
	},
}

func matches(pattern, path string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == p || strings.HasPrefix(path, p+"/")
	}
	return path == pattern
}

// listed maps each package of the module to its direct imports and its non-test
// dependencies, as `go list` reports them.
type listed struct {
	imports, deps []string
}

func goList(t *testing.T) map[string]listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]listed{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 3)
		if len(parts) != 3 {
			t.Fatalf("go list: unexpected line %q", sc.Text())
		}
		pkgs[parts[0]] = listed{imports: strings.Fields(parts[1]), deps: strings.Fields(parts[2])}
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; is the test running inside the module?", len(pkgs))
	}
	return pkgs
}

// violations returns "pkg imports dep" for every break of r in pkgs.
func violations(r rule, pkgs map[string]listed) []string {
	var out []string
	for pkg, l := range pkgs {
		if r.From != "" && !matches(r.From, pkg) {
			continue
		}
		if slices.ContainsFunc(r.Except, func(e string) bool { return matches(e, pkg) }) {
			continue
		}
		reach := l.deps
		if r.Direct {
			reach = l.imports
		}
		for _, dep := range reach {
			if slices.ContainsFunc(r.To, func(to string) bool { return matches(to, dep) }) {
				out = append(out, pkg+" imports "+dep)
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestImportRules(t *testing.T) {
	pkgs := goList(t)
	for _, r := range rules {
		for _, v := range violations(r, pkgs) {
			t.Errorf("%s: %s (%s)", r.name, v, r.Why)
		}
	}
}

// TestRulesCatch: each rule reports a package that breaks it, so a rule that matches
// nothing (a renamed package, a typo in a path) cannot pass silently.
func TestRulesCatch(t *testing.T) {
	for _, r := range rules {
		from := r.From
		if from == "" {
			from = module + "/functions/mcp"
		}
		from = strings.TrimSuffix(from, "/...") + "/offender"
		bad := map[string]listed{from: {imports: []string{strings.TrimSuffix(r.To[0], "/...")}, deps: []string{strings.TrimSuffix(r.To[0], "/...")}}}
		if v := violations(r, bad); len(v) != 1 {
			t.Errorf("%s: a package importing %s gives %v, want one violation", r.name, r.To[0], v)
		}
	}
}
