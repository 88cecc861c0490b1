package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/search"
	"github.com/agentpack/gateway/shared/search/searcheval"
)

// The search leg (make bench-search; docs/SEARCH.md): the tool search's quality and
// latency on the evaluation set (shared/search/searcheval: the recorded tools/list of
// real npm servers, the labelled queries split dev/test), at about 500, 4,000 and 20,000
// tools (the real tools alone, then padded with the synthetic distractors), for the
// ranker before issue 32 and the current one, in process. No database, no network.

// searchLevels are the workspace sizes (0: the real tools alone).
var searchLevels = []int{0, 4000, 20000}

// runSearchLeg prints the table. distractors is a searcheval distractor set; misses > 0
// also prints that many missed dev queries per level to stderr (the test half's misses
// are never printed: it is not for reading while tuning).
func runSearchLeg(distractors string, misses int) error {
	dumps, qs, err := loadSearchSet()
	if err != nil {
		return err
	}
	real := 0
	for _, d := range dumps {
		real += len(d.Tools)
	}
	fmt.Printf("\n### Tool search (make bench-search): %d real tools from %d npm servers, %d queries (%d dev, %d test); distractors %q; %s, GOMAXPROCS %d\n\n",
		real, len(dumps), len(qs), len(searcheval.Split(qs, "dev")), len(searcheval.Split(qs, "test")), distractors, runtime.Version(), runtime.GOMAXPROCS(0))
	fmt.Println("| tools | ranker | split | queries | Recall@1 | Recall@5 | nDCG@10 | MRR | p50 | p95 | index build |")
	fmt.Println("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, level := range searchLevels {
		tools := searcheval.Workspace(dumps, level, distractors)
		for _, which := range []string{"before", "after"} {
			start := time.Now()
			var r searcheval.Ranker
			if which == "before" {
				r = searcheval.Before(tools)
			} else {
				r = searcheval.After(tools, search.DefaultParams)
			}
			build := time.Since(start)
			// One warm-up pass (the index's scratch pools), then the measured passes.
			searcheval.Evaluate(r, tools, qs)
			for _, split := range []string{"dev", "test"} {
				res := searcheval.Evaluate(r, tools, searcheval.Split(qs, split))
				if len(res.Unresolved) > 0 {
					return fmt.Errorf("labels name tools not in the set: %v", res.Unresolved)
				}
				fmt.Printf("| %d | %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %s | %s | %s |\n", len(tools), which, split, res.Queries,
					res.Recall1, res.Recall5, res.NDCG10, res.MRR, fmtDur(res.P50), fmtDur(res.P95), build.Round(time.Millisecond))
				if which == "after" && split == "dev" && misses > 0 {
					printMisses(res, misses)
				}
			}
		}
	}
	byKind(dumps, qs, distractors)
	return nil
}

// byKind prints the test half's Recall@5 per kind of query at 4,000 tools.
func byKind(dumps []searcheval.Dump, qs []searcheval.Query, distractors string) {
	tools := searcheval.Workspace(dumps, 4000, distractors)
	before, after := searcheval.Before(tools), searcheval.After(tools, search.DefaultParams)
	test := searcheval.Split(qs, "test")
	var kinds []string
	for _, q := range test {
		if !slices.Contains(kinds, q.Kind) {
			kinds = append(kinds, q.Kind)
		}
	}
	slices.Sort(kinds)
	fmt.Printf("\nTest half at %d tools, by kind of query:\n\n| kind | queries | Recall@5 before | Recall@5 after | nDCG@10 before | nDCG@10 after |\n|---|---:|---:|---:|---:|---:|\n", len(tools))
	for _, k := range kinds {
		var sub []searcheval.Query
		for _, q := range test {
			if q.Kind == k {
				sub = append(sub, q)
			}
		}
		b, a := searcheval.Evaluate(before, tools, sub), searcheval.Evaluate(after, tools, sub)
		fmt.Printf("| %s | %d | %.3f | %.3f | %.3f | %.3f |\n", k, len(sub), b.Recall5, a.Recall5, b.NDCG10, a.NDCG10)
	}
}

func printMisses(res searcheval.Result, n int) {
	shown := 0
	for _, pq := range res.PerQuery {
		if pq.Recall5 == 1 || shown >= n {
			continue
		}
		shown++
		top := pq.Top
		if len(top) > 5 {
			top = top[:5]
		}
		fmt.Fprintf(os.Stderr, "  miss %s [%s] %q want %v got %s\n", pq.Query.ID, pq.Query.Kind, pq.Query.Text, pq.Query.Needs, strings.Join(top, ", "))
	}
}

func fmtDur(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// runSearchTune is how DefaultParams were chosen (docs/SEARCH.md "Tuning"): coordinate
// ascent on the dev half only, at 4,000 tools, maximising Recall@5 + nDCG@10; each
// constant in turn is tried at a few multiples of its value and kept where the dev
// figure is best, for rounds passes. It prints the constants found; the test half is
// never read.
func runSearchTune(distractors string, rounds int) error {
	dumps, qs, err := loadSearchSet()
	if err != nil {
		return err
	}
	dev := searcheval.Split(qs, "dev")
	tools := searcheval.Workspace(dumps, 4000, distractors)
	start := objective(searcheval.Quality(searcheval.After(tools, search.DefaultParams), tools, dev))
	fmt.Printf("start: %.4f %+v\n", start, search.DefaultParams)
	coordinateAscent(tools, dev, search.DefaultParams, rounds, func(best float64, p search.Params) {
		fmt.Printf("round: %.4f %+v\n", best, p)
	})
	return nil
}

// loadSearchSet is the evaluation set: the recorded servers and the labelled queries.
func loadSearchSet() ([]searcheval.Dump, []searcheval.Query, error) {
	dumps, err := searcheval.Servers()
	if err != nil {
		return nil, nil, err
	}
	qs, err := searcheval.Queries()
	return dumps, qs, err
}
