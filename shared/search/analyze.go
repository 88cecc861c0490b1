package search

import (
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// Concept is one word of a query that is not a stop word (or a two-word phrase of the
// synonym table), with the index terms that answer it: the word's own stem (weight 1),
// its translations when it is a Portuguese, Spanish or German word of the lexicon
// (weight 1), and their synonyms (weight 0.7, rescaled by Params.Synonym).
type Concept struct {
	Word         string
	Alternatives []Alternative
	// Hint marks a concept read from the shape of the ask rather than its words ("which
	// pods are running" asks for a list): it adds to a tool's score but does not count in
	// the share of concepts matched.
	Hint bool
}

// Alternative is one index term that answers a concept, with how much it counts.
type Alternative struct {
	Term   string
	Weight float64
}

// synonymWeight is how much a synonym counts in the tables (Params.Synonym rescales it).
const synonymWeight = 0.7

// Terms splits s into words: lower-cased runs of letters and digits, split at
// snake_case, kebab-case and camelCase boundaries ("listPullRequests" → list, pull,
// requests; "HTTPServer" → http, server). No stemming, no stop words.
func Terms(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
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

// Stem is the index term of one lower-case word: its Snowball English stem.
func Stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	return english.Stem(w, true)
}

// analyzeMemo is the index side: the stems of s's words that are not English stop
// words, with memo caching stems by word.
func analyzeMemo(s string, memo map[string]string) []string {
	ws := Terms(s)
	out := ws[:0]
	for _, w := range ws {
		if english.IsStopWord(w) {
			continue
		}
		st, ok := memo[w]
		if !ok {
			st = Stem(w)
			memo[w] = st
		}
		out = append(out, st)
	}
	return out
}

// Analyze reads a query as concepts (see Concept): stop words of the four languages
// dropped (unless nothing else is left), two-word phrases of the synonym table joined,
// translations and synonyms added. Concepts with the same stem are merged.
func Analyze(query string) []Concept {
	words := Terms(query)
	var kept []string
	for _, w := range words {
		if !isStopWord(w) && !isNumber(w) {
			kept = append(kept, w)
		}
	}
	content := len(kept) > 0
	if !content {
		kept = words
	}
	// "#general" names a chat channel, "@lisa" a user: the sign is the evidence.
	for _, f := range strings.Fields(query) {
		if len(f) > 1 && (f[0] == '#' || f[0] == '@') && !isNumber(f[1:]) {
			if f[0] == '#' {
				kept = append(kept, "channel")
			} else {
				kept = append(kept, "user")
			}
		}
	}
	var out []Concept
	seen := map[string]bool{}
	for i := 0; i < len(kept); i++ {
		w := kept[i]
		var c Concept
		if i+1 < len(kept) {
			if alts, ok := phrases[foldAccents.Replace(w+" "+kept[i+1])]; ok && !skip("phrase", foldAccents.Replace(w+" "+kept[i+1])) {
				c = Concept{Word: w + " " + kept[i+1]}
				for _, a := range alts {
					c.add(a, 1)
					for _, s := range synonyms[a] {
						if !skip("synonym", a+">"+s) {
							c.add(s, synonymWeight)
						}
					}
				}
				i++
				out = appendConcept(out, c, seen)
				continue
			}
		}
		c = Concept{Word: w}
		stem := Stem(w)
		c.add(stem, 1)
		if f := foldAccents.Replace(w); f != w {
			c.add(Stem(f), 1) // "área" is "area"
		}
		for _, s := range synonyms[stem] {
			if !skip("synonym", stem+">"+s) {
				c.add(s, synonymWeight)
			}
		}
		for _, en := range translate(w) {
			c.add(en, 1)
			for _, s := range synonyms[en] {
				if !skip("synonym", en+">"+s) {
					c.add(s, synonymWeight)
				}
			}
		}
		out = appendConcept(out, c, seen)
	}
	// "open an issue", "file a bug", "raise a ticket": the verb creates the object.
	for i := range out {
		verb := false
		for _, a := range out[i].Alternatives {
			verb = verb || (a.Weight == 1 && createVerbs[a.Term])
		}
		if !verb || readsBefore(out[:i]) {
			continue // "list the open issues": open is the state
		}
		for _, o := range out[i+1 : min(i+3, len(out))] {
			if createObjects[o.Alternatives[0].Term] || (len(o.Alternatives) > 1 && createObjects[o.Alternatives[1].Term]) {
				out[i].add(Stem("create"), 1)
				break
			}
		}
	}
	if content && listQuestions[foldAccents.Replace(words[0])] {
		out = append(out, Concept{Word: words[0], Alternatives: []Alternative{{Term: "list", Weight: hintWeight}}, Hint: true})
	}
	return out
}

// createVerbs and createObjects (stems): a verb of createVerbs (or its translation)
// followed, within two concepts, by an object of createObjects asks to create it ("open
// a GitHub issue", "raise a ticket", "abrir um ticket").
var (
	createVerbs   = setOfWords(stemAll(`open raise submit`)...)
	createObjects = setOfWords(stemAll(`issue ticket bug pr pull merge incident case defect`)...)
)

// readsBefore reports whether one of concepts asks to read (list, search, show, get,
// count): a later "open" is then a state, not a verb.
func readsBefore(concepts []Concept) bool {
	for _, c := range concepts {
		for _, a := range c.Alternatives {
			if a.Weight == 1 && readVerbs[a.Term] {
				return true
			}
		}
	}
	return false
}

var readVerbs = setOfWords(stemAll(`list search find show get count fetch`)...)

// listQuestions are the question words that, opening an ask, ask for a list or a look
// ("which pods are running", "what indexes do we have"), in the four languages.
var listQuestions = setOf(`which what welche welcher welches quais qual cuales cual que`)

// hintWeight is how much a Hint concept's term counts.
var hintWeight = 0.5

func appendConcept(out []Concept, c Concept, seen map[string]bool) []Concept {
	key := c.Alternatives[0].Term
	if seen[key] {
		return out
	}
	seen[key] = true
	return append(out, c)
}

// add puts term t among c's alternatives with weight w, keeping the larger weight.
func (c *Concept) add(t string, w float64) {
	for i := range c.Alternatives {
		if c.Alternatives[i].Term == t {
			c.Alternatives[i].Weight = max(c.Alternatives[i].Weight, w)
			return
		}
	}
	c.Alternatives = append(c.Alternatives, Alternative{Term: t, Weight: w})
}

// foldAccents maps the accented letters of Portuguese, Spanish and German to their base
// letters (ß to ss), for lexicon lookups.
var foldAccents = strings.NewReplacer(
	"á", "a", "à", "a", "â", "a", "ã", "a", "ä", "a",
	"é", "e", "ê", "e", "è", "e",
	"í", "i", "î", "i",
	"ó", "o", "ô", "o", "õ", "o", "ö", "o",
	"ú", "u", "ü", "u", "ç", "c", "ñ", "n", "ß", "ss",
)

// translate returns the English stems of a Portuguese, Spanish or German word: the
// lexicon's entry for the word (accents folded), else for its longest prefix that is a
// stem entry ("arquiv" for arquivos), else — for German compounds — for two parts that
// are entries themselves ("Wetter" + "vorhersage"). Nil for a word the lexicon does not
// know.
func translate(w string) []string {
	w = foldAccents.Replace(w)
	if en, ok := lexicon[w]; ok && !skip("lexicon", w) {
		return en
	}
	if en := prefixLookup(w); en != nil {
		return en
	}
	// A German compound: head + (linking s) + tail, both known.
	for i := 4; i+4 <= len(w); i++ {
		head, tail := w[:i], w[i:]
		h := lookupPart(head)
		if h == nil && strings.HasSuffix(head, "s") {
			h = lookupPart(head[:len(head)-1])
		}
		if h == nil {
			continue
		}
		if t := lookupPart(tail); t != nil {
			return append(append([]string(nil), h...), t...)
		}
	}
	return nil
}

func lookupPart(w string) []string {
	if en, ok := lexicon[w]; ok && !skip("lexicon", w) {
		return en
	}
	return prefixLookup(w)
}

// prefixLookup finds the longest stem entry (at least 4 letters) that w starts with.
func prefixLookup(w string) []string {
	for n := len(w); n >= 4; n-- {
		if en, ok := lexiconStems[w[:n]]; ok && !skip("lexicon", w[:n]+"*") {
			return en
		}
	}
	return nil
}

// tableFilter, when set (SetTableFilter), is asked before each use of a table entry.
var tableFilter atomic.Pointer[func(table, key string) bool]

// SetTableFilter makes Analyze skip every entry of the word tables for which f returns
// true (nil: none skipped): table is "synonym" (key "stem>synonym"), "phrase" (the two
// words) or "lexicon" (the word, or the stem entry with its "*"). For the evaluation
// only (cmd/bench's cross-validation holds out the entries that only the held-out
// queries use, and records which entries a query uses); it applies to every Index of
// the process, so it must not be set while the gateway serves.
func SetTableFilter(f func(table, key string) bool) {
	if f == nil {
		tableFilter.Store(nil)
		return
	}
	tableFilter.Store(&f)
}

func skip(table, key string) bool {
	f := tableFilter.Load()
	return f != nil && (*f)(table, key)
}

// isNumber reports whether w is all digits: a value in an ask ("close issue 88"), not a
// word that says which tool.
func isNumber(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return w != ""
}

func setOfWords(ws ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		m[w] = true
	}
	return m
}

func isStopWord(w string) bool {
	return english.IsStopWord(w) || extraStopWords[foldAccents.Replace(w)]
}

// ToolDoc is the document of one tool as the gateway indexes it: its name (the
// upstream's own; the server's handle is in Server), title and description, the names
// and descriptions of its input schema's top-level properties, and its server's name
// (and handle, and description when known). ok is false when the input schema is not a
// JSON object schema with type "object" (such tools are not served, as in tools/list).
func ToolDoc(server, serverDescription, name, title, description string, inputSchema []byte) (d Doc, ok bool) {
	var s struct {
		Type       any `json:"type"`
		Properties map[string]struct {
			Description string `json:"description"`
			Title       string `json:"title"`
		} `json:"properties"`
	}
	if json.Unmarshal(inputSchema, &s) != nil || s.Type != "object" {
		return Doc{}, false
	}
	d = Doc{Name: name, Title: title, Description: description, Server: server, ServerDescription: serverDescription}
	var text []string
	for k, p := range s.Properties {
		d.Params = append(d.Params, k)
		if p.Description != "" {
			text = append(text, p.Description)
		}
		if p.Title != "" {
			text = append(text, p.Title)
		}
	}
	slices.Sort(d.Params)
	slices.Sort(text)
	d.ParamText = strings.Join(text, "\n")
	return d, true
}
