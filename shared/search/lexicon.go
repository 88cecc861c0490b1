package search

import (
	"embed"
	"fmt"
	"strings"
)

// The tables of the query side (docs/SEARCH.md "Synonyms and other languages") are data, in
// lexicon/*.txt beside this file, embedded and parsed once: written by hand for the domain of
// MCP tools — files, code hosting, chat, browsers, maps, payments, databases, deployments,
// search, CRM — and kept small: a word missing there still matches itself. Each file holds one
// entry a line; blank lines and lines starting with "#" are comments.
//
//	synonyms.txt      a group of English words that answer for each other
//	phrases.txt       "two words = the English words that answer them"
//	translations.txt  "pt|es|de word = english words" ("word*": a stem; two words: a phrase)
//	stopwords.txt     stop words beyond Snowball's English list
//
//go:embed lexicon/*.txt
var lexiconFiles embed.FS

// lexiconTables are the parsed tables: synonyms by stem, phrases by their two words, the
// lexicon by folded word and by stem prefix, the extra stop words.
type lexiconTables struct {
	synonyms, phrases, lexicon, lexiconStems map[string][]string
	stopWords                                map[string]bool
}

// The tables, parsed once from lexiconFiles (a malformed line there fails TestLexiconLoads
// and, at start-up, panics: the files are part of the binary, not input).
var (
	synonyms, phrases, lexicon, lexiconStems map[string][]string
	extraStopWords                           map[string]bool
)

func init() {
	t, err := loadLexicon(func(name string) (string, error) {
		b, err := lexiconFiles.ReadFile("lexicon/" + name)
		return string(b), err
	})
	if err != nil {
		panic(err)
	}
	synonyms, phrases, lexicon, lexiconStems, extraStopWords = t.synonyms, t.phrases, t.lexicon, t.lexiconStems, t.stopWords
}

// dataLines are the entries of a table file: its lines without comments and blank lines,
// each with its 1-based line number.
func dataLines(text string) (lines []string, numbers []int) {
	for i, line := range strings.Split(text, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			lines, numbers = append(lines, l), append(numbers, i+1)
		}
	}
	return lines, numbers
}

// loadLexicon parses the four table files that read returns by name. Errors: a file that
// cannot be read, a phrase or translation line without "=", a phrase key that is not two
// words, a translation whose language is not pt, es or de, or whose English side is empty;
// each names the file and line.
func loadLexicon(read func(name string) (string, error)) (*lexiconTables, error) {
	t := &lexiconTables{synonyms: map[string][]string{}, phrases: map[string][]string{},
		lexicon: map[string][]string{}, lexiconStems: map[string][]string{}, stopWords: map[string]bool{}}
	files := map[string]string{}
	for _, name := range []string{"synonyms.txt", "phrases.txt", "translations.txt", "stopwords.txt"} {
		text, err := read(name)
		if err != nil {
			return nil, fmt.Errorf("search: lexicon %s: %w", name, err)
		}
		files[name] = text
	}
	lines, _ := dataLines(files["synonyms.txt"])
	for _, line := range lines {
		var stems []string
		for _, w := range strings.Fields(line) {
			stems = append(stems, stemAll(strings.ReplaceAll(w, "-", " "))...)
		}
		for _, s := range stems {
			for _, o := range stems {
				if o != s && !contains(t.synonyms[s], o) {
					t.synonyms[s] = append(t.synonyms[s], o)
				}
			}
		}
	}
	lines, nums := dataLines(files["phrases.txt"])
	for i, line := range lines {
		k, v, ok := strings.Cut(line, "=")
		if !ok || len(strings.Fields(k)) != 2 || len(strings.Fields(v)) == 0 {
			return nil, fmt.Errorf("search: lexicon phrases.txt:%d: want \"two words = english words\", got %q", nums[i], line)
		}
		t.phrases[strings.Join(strings.Fields(k), " ")] = stemAll(v)
	}
	lines, nums = dataLines(files["translations.txt"])
	for i, line := range lines {
		k, v, ok := strings.Cut(line, "=")
		f := strings.Fields(k)
		if !ok || len(f) < 2 || len(strings.Fields(v)) == 0 || (f[0] != "pt" && f[0] != "es" && f[0] != "de") {
			return nil, fmt.Errorf("search: lexicon translations.txt:%d: want \"pt|es|de word = english words\", got %q", nums[i], line)
		}
		key := strings.Join(f[1:], " ")
		en := stemAll(v)
		switch {
		case strings.HasSuffix(key, "*"):
			stem := strings.TrimSuffix(key, "*")
			t.lexiconStems[stem] = appendNew(t.lexiconStems[stem], en)
		case strings.Contains(key, " "):
			t.phrases[key] = appendNew(t.phrases[key], en)
		default:
			t.lexicon[key] = appendNew(t.lexicon[key], en)
		}
	}
	lines, _ = dataLines(files["stopwords.txt"])
	for _, line := range lines {
		for _, w := range strings.Fields(line) {
			t.stopWords[w] = true
		}
	}
	return t, nil
}

// stemAll stems the words of s.
func stemAll(s string) []string {
	var out []string
	for _, w := range Terms(s) {
		out = append(out, Stem(w))
	}
	return out
}

func appendNew(dst, src []string) []string {
	for _, s := range src {
		if !contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
