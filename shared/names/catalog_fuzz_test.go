package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// FuzzCatalogUnique builds the exposed names of a whole catalog the way the connection
// tool sync does (names.Unique per connection, first listing wins for repeated upstream
// names) from fuzzed handles (comma-separated, reduced to [a-z0-9]{1,16}, deduplicated)
// and fuzzed tool lists (newline-separated, shared by every connection): every name is
// Valid, starts with its connection's prefix and is unique in the catalog — also when an
// upstream lists a clean twin of another tool's hashed name.
func FuzzCatalogUnique(f *testing.F) {
	sum := sha256.Sum256([]byte("a.b"))
	twin := "a_b_" + hex.EncodeToString(sum[:4])
	f.Add("gh,linear,a", "echo\nadd\na.b\n"+twin)
	f.Add("x", twin+"\na.b\na_b")
	f.Add("h1,h2", strings.Repeat("y", 70)+"1\n"+strings.Repeat("y", 70)+"2\n\n\n")
	f.Add("deepwiki,deepwik1", "read_wiki\nread.wiki\nread wiki\nünï\n")
	f.Fuzz(func(t *testing.T, handles, tools string) {
		var hs []string
		seenH := map[string]bool{}
		for _, h := range strings.Split(handles, ",") {
			h = strings.Map(func(r rune) rune {
				if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
					return r
				}
				return -1
			}, h)
			if h == "" || len(h) > 16 || seenH[h] {
				continue
			}
			seenH[h] = true
			hs = append(hs, h)
		}
		ts := strings.Split(tools, "\n")
		if len(hs) > 8 || len(ts) > 64 {
			return
		}
		all := map[string]string{} // exposed name → handle/upstream
		for _, h := range hs {
			taken := map[string]bool{}
			seenT := map[string]bool{}
			for _, u := range ts {
				if seenT[u] {
					continue
				}
				seenT[u] = true
				got := Unique(h, u, func(n string) bool { return taken[n] })
				taken[got] = true
				if !Valid(got) || !strings.HasPrefix(got, Prefix(h)) {
					t.Fatalf("Unique(%q, %q) = %q: invalid or lost its prefix", h, u, got)
				}
				if prev, dup := all[got]; dup {
					t.Fatalf("%q exposed twice: %s and %s/%q", got, prev, h, u)
				}
				all[got] = h + "/" + u
			}
		}
	})
}
