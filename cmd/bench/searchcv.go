package main

import (
	"fmt"
	"os"
	"time"

	"github.com/agentpack/gateway/shared/search"
	"github.com/agentpack/gateway/shared/search/searcheval"
)

// The search leg's cross-validation (docs/SEARCH.md "Tuning"): k-fold cross-validation
// WITHIN the dev half, so that a constant is judged by queries it was not chosen on. The
// dev half is cut into cvFolds folds, stratified by kind (the i-th query of a kind goes
// to fold i mod cvFolds); for each fold the constants are chosen on the other folds
// (objective Recall@5 + nDCG@10 at 4,000 tools) and scored on the fold; the CV figure is
// the held-out scores over all folds, weighted by queries. The test half is never read.

const cvFolds = 5

// cvScore is a held-out tally: Recall@1/@5, nDCG@10 summed over queries.
type cvScore struct {
	n              int
	r1, r5, ndcg10 float64
}

func (s *cvScore) add(r searcheval.Result) {
	s.n += r.Queries
	s.r1 += r.Recall1 * float64(r.Queries)
	s.r5 += r.Recall5 * float64(r.Queries)
	s.ndcg10 += r.NDCG10 * float64(r.Queries)
}

func (s cvScore) String() string {
	n := float64(max(s.n, 1))
	return fmt.Sprintf("Recall@1 %.3f Recall@5 %.3f nDCG@10 %.3f (%d queries)", s.r1/n, s.r5/n, s.ndcg10/n, s.n)
}

func objective(r searcheval.Result) float64 { return r.Recall5 + r.NDCG10 }

// cvCandidate is one setting of the query-side constants tried on one index.
type cvCandidate struct {
	name string
	p    search.Params
}

// runSearchCV prints, for each experiment, the dev half's figures of each candidate and
// the cross-validated figure of choosing among them (see above).
func runSearchCV(distractors string) error {
	dev, folds, tools, err := cvSet(distractors)
	if err != nil {
		return err
	}
	fmt.Printf("### Cross-validation within the dev half (%d queries, %d folds stratified by kind), %d tools, distractors %q\n\n", len(dev), cvFolds, len(tools), distractors)
	base := search.DefaultParams
	ix := searcheval.NewIndex(tools, base)

	heldOut := searcheval.TablesHeldOut(folds)
	for k, h := range heldOut {
		fmt.Printf("fold %d: %d queries, %d table entries used by its queries only\n", k, len(folds[k]), len(h))
	}
	fmt.Println()
	experiment := func(title string, cands []cvCandidate) {
		start := time.Now()
		fmt.Printf("#### %s\n\n| candidate | dev Recall@1 | dev Recall@5 | dev nDCG@10 | tables held out: Recall@1 | Recall@5 | nDCG@10 |\n|---|---:|---:|---:|---:|---:|---:|\n", title)
		// Per candidate, per fold: the fold's result, with the tables whole and with the
		// fold's own entries held out.
		res := make([][]searcheval.Result, len(cands))
		resH := make([][]searcheval.Result, len(cands))
		for ci, c := range cands {
			r := searcheval.IndexRanker(ix.WithParams(c.p))
			var all, allH cvScore
			for k := range folds {
				res[ci] = append(res[ci], searcheval.Quality(r, tools, folds[k]))
				all.add(res[ci][k])
				resH[ci] = append(resH[ci], searcheval.QualityWithout(heldOut[k], r, tools, folds[k]))
				if ci == 0 && os.Getenv("SEARCH_CV_MISSES") != "" {
					for _, pq := range resH[ci][k].PerQuery {
						if pq.Recall5 < 1 {
							fmt.Fprintf(os.Stderr, "held-out miss %s [%s] %q want %v got %v\n", pq.Query.ID, pq.Query.Kind, pq.Query.Text, pq.Query.Needs, pq.Top[:min(5, len(pq.Top))])
						}
					}
				}
				allH.add(resH[ci][k])
			}
			n := float64(all.n)
			fmt.Printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", c.name, all.r1/n, all.r5/n, all.ndcg10/n, allH.r1/n, allH.r5/n, allH.ndcg10/n)
		}
		cvChoose(cands, folds, res, nil, "tables whole")
		cvChoose(cands, folds, resH, nil, "tables held out")
		cvChoose(cands, folds, res, resH, "chosen on both, scored with the tables whole")
		cvChoose(cands, folds, resH, res, "chosen on both, scored with the tables held out")
		fmt.Printf("(%s)\n\n", time.Since(start).Round(time.Millisecond))
	}
	// Character-prefix stem fallback.
	var cands []cvCandidate
	for _, w := range []float64{0, 0.15, 0.3, 0.5, 0.7, 1} {
		p := base
		p.Fallback = w
		cands = append(cands, cvCandidate{fmt.Sprintf("Fallback %.2f", w), p})
	}
	experiment("Character-prefix stem fallback (Params.Fallback)", cands)

	// The query-side constants of DefaultParams, around their values.
	cands = []cvCandidate{{"DefaultParams", base}}
	for _, k := range []struct {
		name string
		set  func(p *search.Params, m float64)
	}{
		{"K1", func(p *search.Params, m float64) { p.K1 *= m }},
		{"Synonym", func(p *search.Params, m float64) { p.Synonym = min(1, p.Synonym*m) }},
		{"Coverage", func(p *search.Params, m float64) { p.Coverage *= m }},
		{"Novelty", func(p *search.Params, m float64) { p.Novelty *= m }},
	} {
		for _, m := range []float64{0, 0.5, 0.75, 1.25, 1.5, 2} {
			p := base
			k.set(&p, m)
			cands = append(cands, cvCandidate{fmt.Sprintf("%s ×%.2f", k.name, m), p})
		}
	}
	experiment("Query-side constants of DefaultParams", cands)
	return nil
}

// runSearchCVWeights cross-validates the tuning of the field weights and length
// normalisations (runSearchTune's coordinate ascent, one pass) from a neutral start
// (every weight 1, every b 0.75, K1 1.2): tuned on 4 folds, scored on the 5th. It also
// prints the neutral start's and DefaultParams' figures on the same folds
// (DefaultParams were tuned on the whole dev half, so theirs are not held-out figures).
func runSearchCVWeights(distractors string, rounds int) error {
	_, folds, tools, err := cvSet(distractors)
	if err != nil {
		return err
	}
	neutral := search.DefaultParams
	neutral.K1 = 1.2
	for f := range neutral.Weight {
		neutral.Weight[f], neutral.B[f] = 1, 0.75
	}
	var held, start, def cvScore
	for k := range folds {
		train := cvRest(folds, k)
		p := coordinateAscent(tools, train, neutral, rounds, nil)
		held.add(searcheval.Quality(searcheval.After(tools, p), tools, folds[k]))
		start.add(searcheval.Quality(searcheval.After(tools, neutral), tools, folds[k]))
		def.add(searcheval.Quality(searcheval.After(tools, search.DefaultParams), tools, folds[k]))
		fmt.Printf("fold %d: tuned %+v\n", k, p)
	}
	fmt.Printf("\nField weights, %d folds, %d pass(es) of coordinate ascent from the neutral start:\n", cvFolds, rounds)
	fmt.Printf("  neutral start (held-out):      %s\n  tuned on 4 folds (held-out):   %s\n  DefaultParams (not held-out):  %s\n", start, held, def)
	return nil
}

// coordinateAscent is the tuning's search on qs from p (runSearchTune,
// runSearchCVWeights): each constant in turn at 0, ½, ¾, 1¼, 1½ and 2 times its value,
// kept where Recall@5 + nDCG@10 is best, for rounds passes; each (nil: none) is told the
// best figure and constants after each pass.
func coordinateAscent(tools []searcheval.Tool, qs []searcheval.Query, p search.Params, rounds int, each func(best float64, p search.Params)) search.Params {
	eval := func(p search.Params) float64 {
		return objective(searcheval.Quality(searcheval.After(tools, p), tools, qs))
	}
	best := eval(p)
	knobs := []*float64{&p.K1, &p.Synonym, &p.Coverage}
	for f := range p.Weight {
		knobs = append(knobs, &p.Weight[f], &p.B[f])
	}
	for range rounds {
		for _, k := range knobs {
			orig := *k
			for _, m := range []float64{0, 0.5, 0.75, 1.25, 1.5, 2} {
				*k = orig * m
				if orig == 0 {
					*k = m / 2
				}
				if v := eval(p); v > best+1e-9 {
					best, orig = v, *k
				}
			}
			*k = orig
		}
		if each != nil {
			each(best, p)
		}
	}
	return p
}

// cvChoose prints the cross-validated figure of choosing among cands: for each fold, the
// candidate best on the other folds (res[candidate][fold], plus also[candidate][fold]
// when also is not nil: both lenses) scored on the fold (res).
func cvChoose(cands []cvCandidate, folds [][]searcheval.Query, res, also [][]searcheval.Result, label string) {
	var held, first cvScore
	var chosen []string
	for k := range folds {
		best, bestV := 0, -1.0
		for ci := range cands {
			var train cvScore
			for j := range folds {
				if j != k {
					train.add(res[ci][j])
					if also != nil {
						train.add(also[ci][j])
					}
				}
			}
			if v := (train.r5 + train.ndcg10) / float64(train.n); v > bestV+1e-9 {
				best, bestV = ci, v
			}
		}
		chosen = append(chosen, cands[best].name)
		held.add(res[best][k])
		first.add(res[0][k])
	}
	fmt.Printf("\nCV, %s (chosen on 4 folds, scored on the 5th): %s; chosen per fold: %v\n", label, held, chosen)
	fmt.Printf("  the first candidate on the same folds:  %s\n", first)
}

// cvRest is every fold but k, joined.
func cvRest(folds [][]searcheval.Query, k int) []searcheval.Query {
	var out []searcheval.Query
	for i, f := range folds {
		if i != k {
			out = append(out, f...)
		}
	}
	return out
}

// cvSet is the cross-validation's material: the dev half, its folds, and the 4,000-tool
// workspace with distractors.
func cvSet(distractors string) (dev []searcheval.Query, folds [][]searcheval.Query, tools []searcheval.Tool, err error) {
	dumps, qs, err := loadSearchSet()
	if err != nil {
		return nil, nil, nil, err
	}
	dev = searcheval.Split(qs, "dev")
	return dev, searcheval.Folds(dev, cvFolds), searcheval.Workspace(dumps, 4000, distractors), nil
}
