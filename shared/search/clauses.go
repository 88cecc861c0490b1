package search

// Asks of several clauses: splitting a query into its clauses and fusing the whole query's
// hit list with each clause's.

import (
	"slices"
	"strings"
)

// fuse merges the hit lists of a query of several clauses: the whole query's list first,
// then each clause's. mode 0 interleaves them (the whole query's first hit, each clause's
// first, the whole query's second, …); mode 1 is reciprocal rank fusion (Cormack, Clarke &
// Büttcher, SIGIR 2009, k = 60). A document already placed is skipped.
func fuse(lists [][]Hit, limit int, mode int) []Hit {
	out := make([]Hit, 0, limit)
	seen := map[int]bool{}
	if mode == 1 {
		type agg struct {
			h Hit
			s float64
		}
		m := map[int]*agg{}
		var order []int
		for li, l := range lists {
			w := 1.0
			if li == 0 {
				w = 1.0
			}
			for r, h := range l {
				a := m[h.Doc]
				if a == nil {
					a = &agg{h: h}
					m[h.Doc] = a
					order = append(order, h.Doc)
				}
				a.h.Matched |= h.Matched
				a.s += w / float64(60+r+1)
			}
		}
		hs := make([]Hit, 0, len(order))
		for _, d := range order {
			h := m[d].h
			h.Score = m[d].s
			hs = append(hs, h)
		}
		slices.SortStableFunc(hs, func(a, b Hit) int {
			if a.Score != b.Score {
				if a.Score > b.Score {
					return -1
				}
				return 1
			}
			return 0
		})
		return hs[:min(limit, len(hs))]
	}
	for r := 0; len(out) < limit; r++ {
		any := false
		for _, l := range lists {
			if r >= len(l) {
				continue
			}
			any = true
			if h := l[r]; !seen[h.Doc] && len(out) < limit {
				seen[h.Doc] = true
				out = append(out, h)
			}
		}
		if !any {
			break
		}
	}
	return out
}

// clauseSeparators are the words that join the parts of a task that spans tools ("find
// the crash and open an issue for it"), in English, Portuguese, Spanish and German.
var clauseSeparators = setOf(`and then afterwards after e depois entao y luego despues und dann danach anschliessend`)

// Clauses splits a query into its parts at commas, semicolons, colons and the words of
// clauseSeparators; a part without a word that is not a stop word is dropped. A query
// of one part returns one clause.
func Clauses(query string) []string {
	var out []string
	var cur []string
	flush := func() {
		content := false
		for _, w := range cur {
			for _, t := range Terms(w) {
				if !isStopWord(t) {
					content = true
				}
			}
		}
		if content {
			out = append(out, strings.Join(cur, " "))
		}
		cur = cur[:0]
	}
	for _, f := range strings.Fields(query) {
		w := strings.TrimRight(f, ",;:")
		end := w != f
		if clauseSeparators[foldAccents.Replace(strings.ToLower(w))] {
			flush()
			continue
		}
		cur = append(cur, w)
		if end {
			flush()
		}
	}
	flush()
	return out
}
