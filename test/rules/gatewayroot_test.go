package rules

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gatewayRoot is the MCP gateway's root package, relative to this folder: the edge that
// composes the packages beside it (docs/ARCHITECTURE.md). Issue 45 brought it from 3,152
// lines in 17 files to what gatewayRootFiles lists; it must not grow back.
const gatewayRoot = "../../functions/mcp/gateway"

// gatewayRootFiles are the only non-test Go files the root may hold.
var gatewayRootFiles = []string{
	"audittrail.go", "caches.go", "discovery.go", "doc.go", "edge.go", "gateway.go", "http.go",
	"routes.go", "runtime.go", "server.go", "single.go", "tasks.go", "tools.go",
}

// gatewayRootBudget bounds the lines of the root's non-test Go files together, and
// gatewayRootFileMax each of them.
const (
	gatewayRootBudget  = 2300
	gatewayRootFileMax = 450
)

const nextFeature = "the next feature starts as a package (functions/mcp/gateway/<noun>/ with a package doc, as access, listing, message, response and web did), not in the root"

// gatewayRootProblems returns what breaks the rule in lines (a root non-test Go file's
// name → its line count) against allowed and the bounds: a file not allowed, a file over
// fileMax, an allowed file that is gone (the list must shrink with the root), and a total
// over budget.
func gatewayRootProblems(lines map[string]int, allowed []string, budget, fileMax int) []string {
	var out []string
	total := 0
	names := make([]string, 0, len(lines))
	for name := range lines {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		n := lines[name]
		total += n
		if !slices.Contains(allowed, name) {
			out = append(out, fmt.Sprintf("functions/mcp/gateway/%s is a new file in the gateway root: %s", name, nextFeature))
		}
		if n > fileMax {
			out = append(out, fmt.Sprintf("functions/mcp/gateway/%s has %d lines, over %d: move cohesive logic into a package; %s", name, n, fileMax, nextFeature))
		}
	}
	for _, name := range allowed {
		if _, ok := lines[name]; !ok {
			out = append(out, fmt.Sprintf("functions/mcp/gateway/%s is gone: remove it from gatewayRootFiles (test/rules/gatewayroot_test.go) so that the root cannot regrow it", name))
		}
	}
	if total > budget {
		out = append(out, fmt.Sprintf("the gateway root's non-test Go files hold %d lines, over its budget of %d: %s", total, budget, nextFeature))
	}
	return out
}

// gatewayRootLines reads the line count of each non-test Go file directly in dir.
func gatewayRootLines(t *testing.T, dir string) map[string]int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading the gateway root: %v", err)
	}
	lines := map[string]int{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines[name] = bytes.Count(b, []byte("\n"))
	}
	return lines
}

// TestGatewayRootCannotRegrow holds the gateway root to its files and line budget.
func TestGatewayRootCannotRegrow(t *testing.T) {
	t.Parallel()
	lines := gatewayRootLines(t, gatewayRoot)
	if len(lines) == 0 {
		t.Fatalf("no Go files in %s; is the test running in test/rules?", gatewayRoot)
	}
	for _, p := range gatewayRootProblems(lines, gatewayRootFiles, gatewayRootBudget, gatewayRootFileMax) {
		t.Error(p)
	}
}

// TestGatewayRootRuleCatches: the rule reports a new root file, a file over the bound, a
// listed file that is gone and a total over the budget, and passes a root within them, so
// that a broken check cannot pass silently.
func TestGatewayRootRuleCatches(t *testing.T) {
	t.Parallel()
	allowed := []string{"a.go", "b.go"}
	tests := []struct {
		name  string
		lines map[string]int
		want  []string // a substring of each problem, in order
	}{
		{"within", map[string]int{"a.go": 40, "b.go": 50}, nil},
		{"a new file", map[string]int{"a.go": 10, "b.go": 10, "feature.go": 5},
			[]string{"feature.go is a new file in the gateway root: the next feature starts as a package"}},
		{"a file over the bound", map[string]int{"a.go": 61, "b.go": 1},
			[]string{"a.go has 61 lines, over 60"}},
		{"a listed file gone", map[string]int{"a.go": 10}, []string{"b.go is gone"}},
		{"over the budget", map[string]int{"a.go": 60, "b.go": 41},
			[]string{"hold 101 lines, over its budget of 100: the next feature starts as a package"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := gatewayRootProblems(tt.lines, allowed, 100, 60)
			if len(got) != len(tt.want) {
				t.Fatalf("problems = %q, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}
