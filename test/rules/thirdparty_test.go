package rules

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// The copy of github.com/ory/x in third_party/oryx stands in for the version fosite requires,
// and only that version: go.mod's replace names it, so a fosite upgrade that requires another
// version would silently link the whole real module (or keep an old copy under a versionless
// replace). This test fails first: it compares the version fosite requires (go mod graph) with
// the replace and with the version third_party/oryx/README.md says it was copied from.
func TestVendoredOryXMatchesFosite(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "mod", "graph").Output()
	if err != nil {
		t.Fatalf("go mod graph: %v", err)
	}
	required := ""
	for _, line := range strings.Split(string(out), "\n") {
		from, to, ok := strings.Cut(line, " ")
		if ok && strings.HasPrefix(from, "github.com/ory/fosite@") && strings.HasPrefix(to, "github.com/ory/x@") {
			required = strings.TrimPrefix(to, "github.com/ory/x@")
		}
	}
	if required == "" {
		t.Fatal("fosite requires no github.com/ory/x any more: delete third_party/oryx and its replace")
	}
	raw, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse("go.mod", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	replaced := false
	for _, r := range mf.Replace {
		if r.Old.Path != "github.com/ory/x" {
			continue
		}
		replaced = true
		if r.Old.Version != required || r.New.Path != "./third_party/oryx" {
			t.Errorf("go.mod replaces github.com/ory/x %q => %s; fosite requires %s: copy errorsx and otelx from that version into third_party/oryx and name it in the replace",
				r.Old.Version, r.New.Path, required)
		}
	}
	if !replaced {
		t.Error("go.mod does not replace github.com/ory/x with third_party/oryx")
	}
	readme, err := os.ReadFile("../../third_party/oryx/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "**"+required+"**") {
		t.Errorf("third_party/oryx/README.md does not say it is ory/x %s", required)
	}
}
