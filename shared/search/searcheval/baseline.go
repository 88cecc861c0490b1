// The ranker as it was before issue 32 (a copy of shared/search at that time, renamed),
// kept so that make bench-search prints the figures before and after side by side: BM25
// (k1 1.2, b 0.75) over the exposed name ×3, title ×2, parameter names ×2 and
// description ×1, with a plural "s" folded. Only the evaluation uses it.
package searcheval

import (
	"container/heap"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// BM25 parameters (Robertson & Zaragoza 2009, §3.4: the usual values).
const (
	legacyK1 = 1.2
	legacyB  = 0.75
)

// Field weights (term frequency multipliers).
const (
	legacyWeightName        = 3
	legacyWeightTitle       = 2
	legacyWeightParam       = 2
	legacyWeightDescription = 1
)

// legacyDoc is one document to index: a tool's name, title, description and parameter names.
type legacyDoc struct {
	Name        string
	Title       string
	Description string
	Params      []string
}

// legacyHit is one ranked document: its position in the slice given to newLegacy and its score.
type legacyHit struct {
	Doc   int
	Score float64
}

type legacyPosting struct {
	doc int32
	tf  float32 // weighted term frequency
}

// legacyIndex is an immutable BM25 index over a list of Docs.
type legacyIndex struct {
	n        int
	norms    []float32 // per document: legacyK1 · (1 − b + b · length / average length)
	postings map[string][]legacyPosting
	scratch  sync.Pool // *legacyAccumulator, len n
}

// legacyAccumulator holds one query's scores (dense, by document) and the documents touched.
type legacyAccumulator struct {
	scores  []float64
	touched []int32
}

// newLegacy indexes docs; legacyHit.Doc refers to positions in docs.
func newLegacy(docs []legacyDoc) *legacyIndex {
	ix := &legacyIndex{n: len(docs), norms: make([]float32, len(docs)), postings: map[string][]legacyPosting{}}
	lengths := make([]float32, len(docs))
	tf := map[string]float32{}
	var total float64
	for i, d := range docs {
		clear(tf)
		add := func(s string, w float32) {
			for _, t := range legacyTerms(s) {
				tf[t] += w
			}
		}
		add(d.Name, legacyWeightName)
		add(d.Title, legacyWeightTitle)
		add(d.Description, legacyWeightDescription)
		for _, p := range d.Params {
			add(p, legacyWeightParam)
		}
		var l float32
		for t, f := range tf {
			ix.postings[t] = append(ix.postings[t], legacyPosting{doc: int32(i), tf: f})
			l += f
		}
		lengths[i] = l
		total += float64(l)
	}
	if len(docs) > 0 {
		avg := total / float64(len(docs))
		for i, l := range lengths {
			ix.norms[i] = float32(legacyK1 * (1 - legacyB + legacyB*float64(l)/avg))
		}
	}
	ix.scratch.New = func() any { return &legacyAccumulator{scores: make([]float64, ix.n)} }
	return ix
}

// Len is the number of indexed documents.
func (ix *legacyIndex) Len() int { return ix.n }

// Search returns the documents matching any term of query that keep accepts (nil keeps
// all), best first (ties: lower position first), at most limit of them, and how many
// matched in all. A query without terms matches nothing.
func (ix *legacyIndex) Search(query string, limit int, keep func(doc int) bool) (hits []legacyHit, total int) {
	terms := legacyTerms(query)
	if len(terms) == 0 || ix.n == 0 || limit <= 0 {
		return nil, 0
	}
	acc := ix.scratch.Get().(*legacyAccumulator)
	defer func() {
		for _, d := range acc.touched {
			acc.scores[d] = 0
		}
		acc.touched = acc.touched[:0]
		ix.scratch.Put(acc)
	}()
	slices.Sort(terms)
	for _, t := range slices.Compact(terms) {
		ps := ix.postings[t]
		if len(ps) == 0 {
			continue
		}
		// BM25's idf with the +1 inside the log (Lucene's form): never negative.
		idf := math.Log(1 + (float64(ix.n)-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			f := float64(p.tf)
			if acc.scores[p.doc] == 0 {
				acc.touched = append(acc.touched, p.doc)
			}
			acc.scores[p.doc] += idf * f * (legacyK1 + 1) / (f + float64(ix.norms[p.doc]))
		}
	}
	h := &legacyTopK{}
	for _, d := range acc.touched {
		s := acc.scores[d]
		if keep != nil && !keep(int(d)) {
			continue
		}
		total++
		hit := legacyHit{Doc: int(d), Score: s}
		if h.Len() < limit {
			heap.Push(h, hit)
		} else if legacyBetter(hit, (*h)[0]) {
			(*h)[0] = hit
			heap.Fix(h, 0)
		}
	}
	hits = make([]legacyHit, h.Len())
	for i := len(hits) - 1; i >= 0; i-- {
		hits[i] = heap.Pop(h).(legacyHit)
	}
	return hits, total
}

// legacyBetter orders hits: higher score first, then lower position.
func legacyBetter(a, c legacyHit) bool {
	if a.Score != c.Score {
		return a.Score > c.Score
	}
	return a.Doc < c.Doc
}

// legacyTopK is a min-heap of the best hits so far (its root is the worst kept).
type legacyTopK []legacyHit

func (h legacyTopK) Len() int           { return len(h) }
func (h legacyTopK) Less(i, j int) bool { return legacyBetter(h[j], h[i]) }
func (h legacyTopK) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *legacyTopK) Push(x any)        { *h = append(*h, x.(legacyHit)) }
func (h *legacyTopK) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// legacyTerms splits s into index terms (see the package comment).
func legacyTerms(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, legacyFold(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// camelCase: a capital after a lower-case letter, or the last capital of an
			// acronym before a lower-case letter ("HTTPServer" → http, server), starts a term.
			if unicode.IsUpper(r) && len(cur) > 0 {
				prev := rs[i-1]
				if unicode.IsLower(prev) || unicode.IsDigit(prev) ||
					(unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
					flush()
				}
			}
			cur = append(cur, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return out
}

// legacyFold reduces a plural to its singular the simple English way: "ies" → "y", a final "s"
// after a letter other than "s" (issues → issue, repos → repo; class stays).
func legacyFold(t string) string {
	switch {
	case len(t) > 4 && strings.HasSuffix(t, "ies"):
		return t[:len(t)-3] + "y"
	case len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") && !strings.HasSuffix(t, "us"):
		return t[:len(t)-1]
	}
	return t
}
