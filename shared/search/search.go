// Package search ranks tool definitions for a query written the way a user or a model
// states a need (docs/SEARCH.md). It is BM25F (Robertson, Zaragoza & Taylor, "Simple BM25
// extension to multiple weighted fields", CIKM 2004; Robertson & Zaragoza, "The
// Probabilistic Relevance Framework: BM25 and Beyond", 2009, §3.4 and §5) over seven
// fields of a tool — the parts of its name (snake_case, kebab-case and camelCase split),
// its title, its description, its parameter names, its parameter descriptions, and its
// server's name and description — each with its own weight and length normalisation,
// combined into one term frequency before BM25's saturation.
//
// Terms are stemmed with the Snowball English stemmer (github.com/kljensen/snowball), so
// "searching", "searches" and "search" meet. A query is read as a list of concepts, one
// per word that is not a stop word (English, Portuguese, Spanish, German): each concept
// is the word's stem plus its alternatives, from a synonym table ("folder" also finds
// "directory") and from a compact bilingual lexicon of the domain's common verbs and
// nouns in Portuguese, Spanish and German ("pasta" is "folder", "löschen" is "delete");
// a document scores, for each concept, its best alternative (a synonym counts a little
// less than the word itself), and the sum is scaled by the share of the query's concepts
// the document matches, so that a tool answering the whole ask outranks one that repeats
// a single common word. An ask of several clauses ("find the crash and open an issue for
// it") is also searched clause by clause, and the lists interleaved, so that a task that
// spans two tools finds both. A word that neither the tables nor the catalog know is
// matched, more weakly, by the catalog stems it begins with ("proceso" finds "process";
// Params.Fallback). The tables are in lexicon.go; the weights in DefaultParams were tuned
// on the dev half of the evaluation set (shared/search/searcheval).
//
// Nothing here does I/O; an Index is immutable once built and safe for concurrent use. A
// query touches only the postings of its own terms, so its cost follows how many tools
// match, not how many exist.
package search

import (
	"slices"
	"strings"
	"sync"
)

// The fields of a tool, in the order of Params.Weight and Params.B.
const (
	FieldName = iota
	FieldTitle
	FieldDescription
	FieldParamName
	FieldParamDescription
	FieldServer
	FieldServerDescription
	numFields
)

// fieldNames are the fields as a hit reports them (Hit.Fields).
var fieldNames = [numFields]string{"name", "title", "description", "parameters", "parameterDescriptions", "server", "serverDescription"}

// Params are the ranking's tunable constants.
type Params struct {
	// K1 is BM25's term-frequency saturation (1.2 in the literature).
	K1 float64
	// Weight multiplies a field's term frequency (BM25F's per-field boost).
	Weight [numFields]float64
	// B is each field's length normalisation (0: none, 1: full).
	B [numFields]float64
	// Synonym is how much a synonym's match counts against the word's own (0–1).
	Synonym float64
	// Coverage is the exponent of the share of query concepts a document matches (0: off).
	Coverage float64
	// Novelty re-ranks the best candidates of a query of several concepts so that the
	// next hit adds concepts the hits above it do not cover (a task that spans two tools
	// finds both): a candidate whose concepts are all covered keeps 1 − Novelty of its
	// score (0: off).
	Novelty float64
	// ClauseFusion is how the hit lists of a query's clauses are merged (see fuse).
	ClauseFusion int
	// Fallback is how much a catalog term counts for a query word the catalog does not
	// know (no posting for any of its alternatives; words of 5 letters or more, accents
	// folded): a catalog stem of 4 letters or more that begins the word ("texto" finds
	// "text", "documentos" "document"), or of 5 letters or more that begins it but for its
	// last letter ("proceso" finds "process"). A character-prefix stem fallback for
	// inflected and cognate words outside the tables (0: off); chosen by cross-validation
	// within the dev half (docs/SEARCH.md "Tuning").
	Fallback float64
}

// DefaultParams are the constants tuned on the dev half of the evaluation set at 4,000
// tools (docs/SEARCH.md "Tuning").
var DefaultParams = Params{
	K1:           2.8,
	Weight:       [numFields]float64{3, 2.5, 1.25, 0.25, 0.47, 3, 0.3},
	B:            [numFields]float64{0.5, 0.5, 0.75, 0.5, 0.56, 0.15, 0.75},
	Synonym:      0.7,
	Coverage:     0.42,
	Novelty:      0.3,
	ClauseFusion: 0,
	Fallback:     0.3,
}

// Doc is one tool to index. Params are its parameter names; ParamText its parameters'
// descriptions, joined; Server the name (and handle) of the server that serves it;
// ServerDescription what that server is for, when known.
type Doc struct {
	Name              string
	Title             string
	Description       string
	Params            []string
	ParamText         string
	Server            string
	ServerDescription string
}

// Hit is one ranked document: its position in the slice given to New, its score, and
// the fields in which a query term (or one of its alternatives) occurred, as a bit set
// over the Field constants (see Fields).
type Hit struct {
	Doc     int
	Score   float64
	Matched uint8
}

// Fields names the fields a hit matched in ("name", "description", …), in field order.
func (h Hit) Fields() []string {
	var out []string
	for f := range numFields {
		if h.Matched&(1<<f) != 0 {
			out = append(out, fieldNames[f])
		}
	}
	return out
}

type posting struct {
	doc    int32
	tf     float32 // BM25F's combined, length-normalised, weighted term frequency
	fields uint8   // the fields the term occurs in
}

// Index is an immutable BM25F index over a list of Docs.
type Index struct {
	n        int
	p        Params
	postings map[string][]posting
	vocab    []string   // the terms of postings, sorted (Fallback's prefix lookups)
	scratch  *sync.Pool // *accumulator, len n
}

// accumulator holds one query's scores (dense, by document), the concepts each document
// matched, the fields, the best alternative of the current concept, and the documents
// touched.
type accumulator struct {
	scores   []float64
	concepts []uint16
	masks    []uint32 // the concepts matched (the first 32)
	fields   []uint8
	best     []float64
	touched  []int32
	inGroup  []int32
}

// New indexes docs with DefaultParams; Hit.Doc refers to positions in docs.
func New(docs []Doc) *Index { return NewWithParams(docs, DefaultParams) }

// NewWithParams indexes docs with the given constants (the evaluation's tuning uses it).
func NewWithParams(docs []Doc, p Params) *Index {
	ix := &Index{n: len(docs), p: p, postings: map[string][]posting{}, scratch: &sync.Pool{}}
	// Each field of each document analysed once (stems memoised: a catalog repeats its
	// words), then the average field lengths, then the postings.
	memo := map[string]string{}
	fields := make([][numFields][]string, len(docs))
	var avg [numFields]float64
	for i := range docs {
		for f, text := range docFields(&docs[i]) {
			fields[i][f] = analyzeMemo(text, memo)
			avg[f] += float64(len(fields[i][f]))
		}
	}
	for f := range avg {
		if len(docs) > 0 {
			avg[f] /= float64(len(docs))
		}
		if avg[f] == 0 {
			avg[f] = 1
		}
	}
	type acc struct {
		tf     float32
		fields uint8
	}
	terms := map[string]acc{}
	for i := range docs {
		clear(terms)
		for f, ts := range fields[i] {
			if p.Weight[f] == 0 || len(ts) == 0 {
				continue
			}
			b := min(max(p.B[f], 0), 1)
			norm := 1 - b + b*float64(len(ts))/avg[f]
			w := float32(p.Weight[f] / norm)
			for _, t := range ts {
				a := terms[t]
				a.tf += w
				a.fields |= 1 << f
				terms[t] = a
			}
		}
		for t, a := range terms {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), tf: a.tf, fields: a.fields})
		}
		fields[i] = [numFields][]string{}
	}
	ix.vocab = make([]string, 0, len(ix.postings))
	for t := range ix.postings {
		ix.vocab = append(ix.vocab, t)
	}
	slices.Sort(ix.vocab)
	ix.scratch.New = func() any {
		return &accumulator{scores: make([]float64, ix.n), concepts: make([]uint16, ix.n), masks: make([]uint32, ix.n),
			fields: make([]uint8, ix.n), best: make([]float64, ix.n)}
	}
	return ix
}

// docFields returns a document's text per field.
func docFields(d *Doc) [numFields]string {
	return [numFields]string{d.Name, d.Title, d.Description, strings.Join(d.Params, " "), d.ParamText, d.Server, d.ServerDescription}
}

// WithParams returns an index over the same postings that ranks with p's query-side
// constants (K1, Synonym, Coverage, Novelty, ClauseFusion, Fallback); the field weights
// and length normalisations stay those the index was built with. For the evaluation's
// cross-validation, which tries many query-side constants over one index.
func (ix *Index) WithParams(p Params) *Index {
	c := *ix
	c.p.K1, c.p.Synonym, c.p.Coverage, c.p.Novelty, c.p.ClauseFusion = p.K1, p.Synonym, p.Coverage, p.Novelty, p.ClauseFusion
	c.p.Fallback = p.Fallback
	return &c
}

// Len is the number of indexed documents.
func (ix *Index) Len() int { return ix.n }

// Search returns the documents matching any concept of query that keep accepts (nil
// keeps all), best first (ties: lower position first), at most limit of them, and how
// many matched in all. A query without terms matches nothing.
func (ix *Index) Search(query string, limit int, keep func(doc int) bool) (hits []Hit, total int) {
	concepts := Analyze(query)
	if len(concepts) == 0 || ix.n == 0 || limit <= 0 {
		return nil, 0
	}
	hits, total = ix.rank(concepts, limit, keep)
	clauses := Clauses(query)
	if len(clauses) < 2 {
		return hits, total
	}
	lists := [][]Hit{hits}
	for _, c := range clauses {
		if cc := Analyze(c); len(cc) > 0 {
			h, _ := ix.rank(cc, limit, keep)
			lists = append(lists, h)
		}
	}
	if len(lists) < 3 {
		return hits, total
	}
	return fuse(lists, limit, ix.p.ClauseFusion), total
}
