package text_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentpack/gateway/shared/text"
)

func TestClip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"", 0, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"abcd", 0, "…"},
		{"abcd", -1, "…"},
		{"héllo", 2, "h…"},                            // 'é' is 2 bytes: the cut at byte 2 would split it
		{"héllo", 3, "hé…"},                           // a cut right after 'é'
		{"a€b", 3, "a…"},                              // '€' is 3 bytes (1..3): cuts at 2 and 3 both back up to 1
		{"a€b", 4, "a€…"},                             // whole sequence kept
		{"a\xffbc", 2, "a\xff…"},                      // invalid bytes are kept as they are
		{"\x80\x80\x80\x80x", 4, "\x80\x80\x80\x80…"}, // no sequence start within reach: cut at n
	}
	for _, tc := range tests {
		if got := text.Clip(tc.s, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// FuzzClip: the result is a prefix of s (plus the ellipsis when shortened), at most n+3
// bytes, and valid UTF-8 whenever s is.
func FuzzClip(f *testing.F) {
	f.Add("héllo wörld €", 5)
	f.Add("\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 5)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = max(n%300, 0) // Clip counts n < 0 as 0
		got := text.Clip(s, n)
		if len(s) <= n {
			if got != s {
				t.Fatalf("short input changed: %q → %q", s, got)
			}
			return
		}
		body, ok := strings.CutSuffix(got, text.Ellipsis)
		if !ok || !strings.HasPrefix(s, body) || len(body) > n {
			t.Fatalf("Clip(%q, %d) = %q", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
	})
}
