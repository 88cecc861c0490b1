package rules

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// firstChangesTolerance is how far a row's line count in docs/ARCHITECTURE.md "First
// changes" may drift from the files before this test asks for the table to be redone: the
// counts tell a newcomer how much there is to read, so 15 % is precise enough, and loose
// enough that an ordinary edit does not break the build.
const firstChangesTolerance = 0.15

// firstChangeRow is one row of the table: the change, the files to open, and the counts the
// doc claims (files, lines).
type firstChangeRow struct {
	change       string
	files        []string
	claimedFiles int
	claimedLines int
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	countCell  = regexp.MustCompile(`^(\d+) files?, ([\d,]+) lines$`)
)

// parseFirstChanges reads the table under the heading "## First changes" of doc: rows of
// "| change | `file` … | N files, M lines |".
func parseFirstChanges(doc []byte) ([]firstChangeRow, error) {
	_, after, ok := bytes.Cut(doc, []byte("\n## First changes"))
	if !ok {
		return nil, fmt.Errorf(`no "## First changes" section`)
	}
	if end := bytes.Index(after, []byte("\n## ")); end >= 0 {
		after = after[:end]
	}
	var rows []firstChangeRow
	for _, line := range strings.Split(string(after), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) != 3 || cells[0] == "change" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		m := countCell.FindStringSubmatch(strings.TrimSpace(cells[2]))
		if m == nil {
			return nil, fmt.Errorf("row %q: the last cell must read \"N files, M lines\"", cells[0])
		}
		r := firstChangeRow{change: cells[0]}
		r.claimedFiles, _ = strconv.Atoi(m[1])
		r.claimedLines, _ = strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
		for _, f := range backticked.FindAllStringSubmatch(cells[1], -1) {
			if strings.Contains(f[1], "/") {
				r.files = append(r.files, f[1])
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf(`"## First changes" has no rows`)
	}
	return rows, nil
}

// checkRow compares a row's claims with lines (path → line count), returning what is off.
func checkRow(r firstChangeRow, lines map[string]int) []string {
	var problems []string
	total := 0
	for _, f := range r.files {
		n, ok := lines[f]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: %s does not exist", r.change, f))
			continue
		}
		total += n
	}
	if len(r.files) != r.claimedFiles {
		problems = append(problems, fmt.Sprintf("%s: names %d files, claims %d", r.change, len(r.files), r.claimedFiles))
	}
	if d := float64(total-r.claimedLines) / float64(max(total, 1)); d > firstChangesTolerance || d < -firstChangesTolerance {
		problems = append(problems, fmt.Sprintf("%s: the files have %d lines, the doc claims %d", r.change, total, r.claimedLines))
	}
	return problems
}

// TestFirstChangesCounts keeps docs/ARCHITECTURE.md "First changes" true: every file it
// names exists, and each row's file and line counts match the files (lines within
// firstChangesTolerance).
func TestFirstChangesCounts(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parseFirstChanges(doc)
	if err != nil {
		t.Fatalf("docs/ARCHITECTURE.md: %v", err)
	}
	lines := map[string]int{}
	for _, r := range rows {
		for _, f := range r.files {
			b, err := os.ReadFile(filepath.Join("../..", f))
			if err == nil {
				lines[f] = bytes.Count(b, []byte("\n"))
			}
		}
	}
	for _, r := range rows {
		for _, p := range checkRow(r, lines) {
			t.Errorf("docs/ARCHITECTURE.md \"First changes\": %s", p)
		}
	}
}

func TestFirstChangesRuleCatches(t *testing.T) {
	doc := []byte("# A\n\n## First changes\n\n| change | open | count |\n| --- | --- | --- |\n" +
		"| add a thing | `a/b.go`, `a/c.go` | 2 files, 100 lines |\n" +
		"| move a thing | `a/gone.go` | 1 file, 10 lines |\n\n## Next\n")
	rows, err := parseFirstChanges(doc)
	if err != nil || len(rows) != 2 {
		t.Fatalf("parseFirstChanges = %v, %v; want 2 rows", rows, err)
	}
	if p := checkRow(rows[0], map[string]int{"a/b.go": 60, "a/c.go": 45}); len(p) != 0 {
		t.Errorf("within tolerance: %v", p)
	}
	if p := checkRow(rows[0], map[string]int{"a/b.go": 160, "a/c.go": 45}); len(p) != 1 {
		t.Errorf("205 lines against a claim of 100: %v, want one problem", p)
	}
	if p := checkRow(rows[1], map[string]int{}); len(p) == 0 {
		t.Error("a missing file passed")
	}
	if _, err := parseFirstChanges([]byte("| x | `a/b` | about 3 |\n")); err == nil {
		t.Error("a doc without the section parsed")
	}
}
