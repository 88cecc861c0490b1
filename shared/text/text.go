// Package text holds the small string helpers the services share for messages they build
// from untrusted input (URLs, header names, upstream error bodies).
package text

import "unicode/utf8"

// Ellipsis is what Clip appends to a shortened string: U+2026, 3 bytes in UTF-8.
const Ellipsis = "…"

// Clip returns s when it is at most n bytes long; otherwise its first n bytes, shortened
// further to the last whole UTF-8 sequence so that a valid s gives a valid result, followed
// by Ellipsis (so the result is at most n+3 bytes). n < 0 counts as 0. Invalid UTF-8 in s
// is kept byte for byte, except that a cut never ends inside a multi-byte sequence.
func Clip(s string, n int) string {
	n = max(n, 0)
	if len(s) <= n {
		return s
	}
	// Back up over at most UTFMax-1 continuation bytes to the start of the cut sequence.
	cut := n
	for i := n; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			cut = i
			break
		}
	}
	return s[:cut] + Ellipsis
}
