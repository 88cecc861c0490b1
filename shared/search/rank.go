package search

// Scoring: BM25F over the postings of a query's concepts (rank1), the catalog-stem fallback
// for words the tables do not know, the novelty re-ranking, and the top-k heap.

import (
	"container/heap"
	"math"
	"math/bits"
	"slices"
	"strings"
)

// rank scores the documents for concepts (see Search), the catalog's fallback stems
// added to the concepts it does not know (see Params.Fallback).
func (ix *Index) rank(concepts []Concept, limit int, keep func(doc int) bool) (hits []Hit, total int) {
	return ix.rank1(ix.fallback(concepts), limit, keep)
}

// fallback adds, to each concept of one word whose alternatives the index does not know,
// the catalog stems that begin the word (accents folded; see Params.Fallback).
func (ix *Index) fallback(concepts []Concept) []Concept {
	if ix.p.Fallback <= 0 {
		return concepts
	}
	var out []Concept
	for i, c := range concepts {
		if c.Hint || strings.Contains(c.Word, " ") {
			continue
		}
		known := false
		for _, a := range c.Alternatives {
			known = known || len(ix.postings[a.Term]) > 0
		}
		w := foldAccents.Replace(c.Word)
		if known || len(w) < 5 {
			continue
		}
		var alts []Alternative
		lo, _ := slices.BinarySearch(ix.vocab, w[:4])
		for _, t := range ix.vocab[lo:] {
			if !strings.HasPrefix(t, w[:4]) {
				break
			}
			if n := commonPrefix(t, w); n == len(t) || (len(t) >= 5 && n >= len(t)-1) {
				alts = append(alts, Alternative{Term: t, Weight: ix.p.Fallback})
			}
		}
		if alts == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(concepts)
		}
		out[i].Alternatives = append(slices.Clone(c.Alternatives), alts...)
	}
	if out == nil {
		return concepts
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// rank1 is rank without the fallback.
func (ix *Index) rank1(concepts []Concept, limit int, keep func(doc int) bool) (hits []Hit, total int) {
	acc := ix.scratch.Get().(*accumulator)
	defer func() {
		for _, d := range acc.touched {
			acc.scores[d], acc.concepts[d], acc.fields[d], acc.masks[d] = 0, 0, 0, 0
		}
		acc.touched = acc.touched[:0]
		ix.scratch.Put(acc)
	}()
	k1 := ix.p.K1
	for ci, c := range concepts {
		// Each document's best alternative of this concept.
		acc.inGroup = acc.inGroup[:0]
		for _, alt := range c.Alternatives {
			ps := ix.postings[alt.Term]
			if len(ps) == 0 {
				continue
			}
			w := alt.Weight
			if w < 1 {
				w *= ix.p.Synonym / 0.7 // the tables say 0.7; the tuned constant rescales it
			}
			// BM25's idf with the +1 inside the log (Lucene's form): never negative.
			idf := math.Log(1 + (float64(ix.n)-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
			for _, p := range ps {
				f := float64(p.tf)
				s := w * idf * f * (k1 + 1) / (f + k1)
				if acc.best[p.doc] == 0 {
					acc.inGroup = append(acc.inGroup, p.doc)
				}
				if s > acc.best[p.doc] {
					acc.best[p.doc] = s
				}
				acc.fields[p.doc] |= p.fields
			}
		}
		for _, d := range acc.inGroup {
			if acc.scores[d] == 0 && acc.concepts[d] == 0 {
				acc.touched = append(acc.touched, d)
			}
			acc.scores[d] += acc.best[d]
			acc.best[d] = 0
			if c.Hint {
				continue
			}
			acc.concepts[d]++
			acc.masks[d] |= 1 << (ci % 32)
		}
	}
	// Candidates: the best `pool` by score, re-ranked for novelty below. A document that
	// matched only a hint is no candidate.
	nc := 0.0
	for _, c := range concepts {
		if !c.Hint {
			nc++
		}
	}
	pool := limit
	if ix.p.Novelty > 0 && nc > 1 {
		pool = max(limit, 30)
	}
	h := &topK{}
	for _, d := range acc.touched {
		if acc.concepts[d] == 0 || (keep != nil && !keep(int(d))) {
			continue
		}
		total++
		s := acc.scores[d]
		if ix.p.Coverage > 0 && nc > 1 {
			s *= math.Pow(float64(acc.concepts[d])/nc, ix.p.Coverage)
		}
		hit := Hit{Doc: int(d), Score: s, Matched: acc.fields[d]}
		if h.Len() < pool {
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
	if pool > limit {
		hits = ix.novel(hits, acc.masks, limit)
	}
	return hits, total
}

// novel re-ranks hits (best first) greedily: each next hit is the one whose score,
// discounted by Novelty in proportion to the share of its concepts already covered by
// the hits chosen before it, is highest. The scores reported stay the ranking scores.
func (ix *Index) novel(hits []Hit, masks []uint32, limit int) []Hit {
	out := make([]Hit, 0, limit)
	var covered uint32
	for len(out) < limit && len(hits) > 0 {
		best, bestV := 0, -1.0
		for i, h := range hits {
			m := masks[h.Doc]
			n := bits.OnesCount32(m)
			v := h.Score
			if n > 0 {
				v *= 1 - ix.p.Novelty*float64(bits.OnesCount32(m&covered))/float64(n)
			}
			if v > bestV {
				best, bestV = i, v
			}
		}
		out = append(out, hits[best])
		covered |= masks[hits[best].Doc]
		hits = append(hits[:best], hits[best+1:]...)
	}
	return out
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
