package main

import (
	"testing"

	"github.com/agentpack/gateway/shared/search/searcheval"
)

// TestCVFolds: the folds hold every dev query once, each kind spread across them;
// cvRest is the other folds.
func TestCVFolds(t *testing.T) {
	qs, err := searcheval.Queries()
	if err != nil {
		t.Fatal(err)
	}
	dev := searcheval.Split(qs, "dev")
	folds := searcheval.Folds(dev, cvFolds)
	seen := map[string]int{}
	for _, f := range folds {
		kinds := map[string]bool{}
		for _, q := range f {
			seen[q.ID]++
			kinds[q.Kind] = true
			if q.Split != "dev" {
				t.Errorf("%s of split %s in a fold", q.ID, q.Split)
			}
		}
		if len(kinds) != 5 {
			t.Errorf("a fold has kinds %v; want all five", kinds)
		}
	}
	if len(seen) != len(dev) {
		t.Errorf("%d queries in the folds, %d in dev", len(seen), len(dev))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s in %d folds", id, n)
		}
	}
	if got := len(cvRest(folds, 0)); got != len(dev)-len(folds[0]) {
		t.Errorf("cvRest: %d queries, want %d", got, len(dev)-len(folds[0]))
	}
}
