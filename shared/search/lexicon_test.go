package search

import (
	"errors"
	"strings"
	"testing"
)

// The embedded tables load, and hold what the ranker relies on: a synonym, a phrase, a
// translation by word and by stem, a stop word of each language.
func TestLexiconLoads(t *testing.T) {
	t.Parallel()
	if !contains(synonyms[Stem("folder")], Stem("directory")) {
		t.Errorf("synonyms: folder → %v, want directory", synonyms[Stem("folder")])
	}
	if got := phrases["sea level"]; !contains(got, Stem("elevation")) {
		t.Errorf("phrases: sea level → %v", got)
	}
	if got := lexicon["novo"]; !contains(got, Stem("new")) {
		t.Errorf("lexicon: novo → %v", got)
	}
	if got := lexiconStems["arquivo"]; !contains(got, Stem("file")) {
		t.Errorf("lexicon stems: arquivo* → %v", got)
	}
	for _, w := range []string{"please", "quero", "quiero", "bitte"} {
		if !extraStopWords[w] {
			t.Errorf("stop word %q missing", w)
		}
	}
	if len(synonyms) < 300 || len(lexicon)+len(lexiconStems) < 500 {
		t.Errorf("tables smaller than the files: %d synonyms, %d+%d lexicon entries", len(synonyms), len(lexicon), len(lexiconStems))
	}
}

// A malformed line fails the load with the file and line; a file that cannot be read too.
func TestLexiconErrors(t *testing.T) {
	t.Parallel()
	good := map[string]string{"synonyms.txt": "a b\n", "phrases.txt": "# c\nsea level = elevation\n",
		"translations.txt": "pt novo = new\n", "stopwords.txt": "please\n"}
	for _, tc := range []struct{ file, text, want string }{
		{"phrases.txt", "# c\n\nsea level elevation\n", "phrases.txt:3"},
		{"phrases.txt", "one = x\n", "phrases.txt:1"},
		{"phrases.txt", "sea level =\n", "phrases.txt:1"},
		{"translations.txt", "fr fichier = file\n", "translations.txt:1"},
		{"translations.txt", "pt novo\n", "translations.txt:1"},
		{"translations.txt", "pt = new\n", "translations.txt:1"},
	} {
		read := func(name string) (string, error) {
			if name == tc.file {
				return tc.text, nil
			}
			return good[name], nil
		}
		if _, err := loadLexicon(read); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: err %v, want one naming %s", tc.file, tc.text, err, tc.want)
		}
	}
	gone := errors.New("gone")
	if _, err := loadLexicon(func(name string) (string, error) { return "", gone }); !errors.Is(err, gone) {
		t.Errorf("unreadable file: %v", err)
	}
	if _, err := loadLexicon(func(name string) (string, error) { return good[name], nil }); err != nil {
		t.Errorf("good tables: %v", err)
	}
}
