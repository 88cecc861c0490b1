// Package search ranks short documents — tool definitions — for a keyword query with
// Okapi BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
// Beyond", 2009; k1 = 1.2, b = 0.75) over weighted fields: a term in a tool's name counts
// three times, in its title or a parameter name twice, in its description once (the
// BM25F idea of per-field weights folded into one term frequency). The gateway's
// progressive discovery (docs/ARCHITECTURE.md "Decisions worth knowing") builds one Index
// per catalog snapshot; a query touches only the postings of its own terms, so its cost
// follows how many tools match, not how many exist.
//
// Terms are lower-cased runs of letters and digits, split at snake_case, kebab-case and
// camelCase boundaries ("listPullRequests" → list, pull, requests), with a plural "s" /
// "ies" folded so that "issue" finds "issues". Nothing here does I/O; an Index is
// immutable once built and safe for concurrent use.
package search

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
	k1 = 1.2
	b  = 0.75
)

// Field weights (term frequency multipliers).
const (
	weightName        = 3
	weightTitle       = 2
	weightParam       = 2
	weightDescription = 1
)

// Doc is one document to index: a tool's name, title, description and parameter names.
type Doc struct {
	Name        string
	Title       string
	Description string
	Params      []string
}

// Hit is one ranked document: its position in the slice given to New and its score.
type Hit struct {
	Doc   int
	Score float64
}

type posting struct {
	doc int32
	tf  float32 // weighted term frequency
}

// Index is an immutable BM25 index over a list of Docs.
type Index struct {
	n        int
	norms    []float32 // per document: k1 · (1 − b + b · length / average length)
	postings map[string][]posting
	scratch  sync.Pool // *accumulator, len n
}

// accumulator holds one query's scores (dense, by document) and the documents touched.
type accumulator struct {
	scores  []float64
	touched []int32
}

// New indexes docs; Hit.Doc refers to positions in docs.
func New(docs []Doc) *Index {
	ix := &Index{n: len(docs), norms: make([]float32, len(docs)), postings: map[string][]posting{}}
	lengths := make([]float32, len(docs))
	tf := map[string]float32{}
	var total float64
	for i, d := range docs {
		clear(tf)
		add := func(s string, w float32) {
			for _, t := range Terms(s) {
				tf[t] += w
			}
		}
		add(d.Name, weightName)
		add(d.Title, weightTitle)
		add(d.Description, weightDescription)
		for _, p := range d.Params {
			add(p, weightParam)
		}
		var l float32
		for t, f := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), tf: f})
			l += f
		}
		lengths[i] = l
		total += float64(l)
	}
	if len(docs) > 0 {
		avg := total / float64(len(docs))
		for i, l := range lengths {
			ix.norms[i] = float32(k1 * (1 - b + b*float64(l)/avg))
		}
	}
	ix.scratch.New = func() any { return &accumulator{scores: make([]float64, ix.n)} }
	return ix
}

// Len is the number of indexed documents.
func (ix *Index) Len() int { return ix.n }

// Search returns the documents matching any term of query that keep accepts (nil keeps
// all), best first (ties: lower position first), at most limit of them, and how many
// matched in all. A query without terms matches nothing.
func (ix *Index) Search(query string, limit int, keep func(doc int) bool) (hits []Hit, total int) {
	terms := Terms(query)
	if len(terms) == 0 || ix.n == 0 || limit <= 0 {
		return nil, 0
	}
	acc := ix.scratch.Get().(*accumulator)
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
			acc.scores[p.doc] += idf * f * (k1 + 1) / (f + float64(ix.norms[p.doc]))
		}
	}
	h := &topK{}
	for _, d := range acc.touched {
		s := acc.scores[d]
		if keep != nil && !keep(int(d)) {
			continue
		}
		total++
		hit := Hit{Doc: int(d), Score: s}
		if h.Len() < limit {
			heap.Push(h, hit)
		} else if better(hit, (*h)[0]) {
			(*h)[0] = hit
			heap.Fix(h, 0)
		}
	}
	hits = make([]Hit, h.Len())
	for i := len(hits) - 1; i >= 0; i-- {
		hits[i] = heap.Pop(h).(Hit)
	}
	return hits, total
}

// better orders hits: higher score first, then lower position.
func better(a, c Hit) bool {
	if a.Score != c.Score {
		return a.Score > c.Score
	}
	return a.Doc < c.Doc
}

// topK is a min-heap of the best hits so far (its root is the worst kept).
type topK []Hit

func (h topK) Len() int           { return len(h) }
func (h topK) Less(i, j int) bool { return better(h[j], h[i]) }
func (h topK) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topK) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *topK) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Terms splits s into index terms (see the package comment).
func Terms(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, fold(string(cur)))
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

// fold reduces a plural to its singular the simple English way: "ies" → "y", a final "s"
// after a letter other than "s" (issues → issue, repos → repo; class stays).
func fold(t string) string {
	switch {
	case len(t) > 4 && strings.HasSuffix(t, "ies"):
		return t[:len(t)-3] + "y"
	case len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") && !strings.HasSuffix(t, "us"):
		return t[:len(t)-1]
	}
	return t
}
