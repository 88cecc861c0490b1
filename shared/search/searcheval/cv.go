package searcheval

import "github.com/agentpack/gateway/shared/search"

// Folds cuts qs into k folds for cross-validation, stratified by kind: the i-th query
// of a kind goes to fold i mod k.
func Folds(qs []Query, k int) [][]Query {
	folds := make([][]Query, k)
	seen := map[string]int{}
	for _, q := range qs {
		folds[seen[q.Kind]%k] = append(folds[seen[q.Kind]%k], q)
		seen[q.Kind]++
	}
	return folds
}

// TablesHeldOut is, per fold, the word-table entries (search.SetTableFilter's
// "table:key") that the fold's queries use and no query of another fold does: entries
// that were, in all likelihood, written for those queries. Scoring a fold without them
// (QualityWithout) estimates how the ranker does on asks whose words the tables were not
// written for, as a new ask's may not be. It sets and clears the process-wide table
// filter.
func TablesHeldOut(folds [][]Query) []map[string]bool {
	used := make([]map[string]bool, len(folds))
	for k, f := range folds {
		u := map[string]bool{}
		used[k] = u
		search.SetTableFilter(func(table, key string) bool { u[table+":"+key] = true; return false })
		for _, q := range f {
			search.Analyze(q.Text)
			for _, c := range search.Clauses(q.Text) {
				search.Analyze(c)
			}
		}
		search.SetTableFilter(nil)
	}
	out := make([]map[string]bool, len(folds))
	for k := range folds {
		out[k] = map[string]bool{}
		for e := range used[k] {
			other := false
			for j := range folds {
				other = other || (j != k && used[j][e])
			}
			if !other {
				out[k][e] = true
			}
		}
	}
	return out
}

// QualityWithout is Quality with the table entries of without ("table:key") skipped. It
// sets and clears the process-wide table filter, so it must not run beside another
// search.
func QualityWithout(without map[string]bool, r Ranker, tools []Tool, qs []Query) Result {
	search.SetTableFilter(func(table, key string) bool { return without[table+":"+key] })
	defer search.SetTableFilter(nil)
	return Quality(r, tools, qs)
}
