package names

import (
	"strconv"
	"strings"
)

// HandleBaseLen is the longest base of a connection handle; the collision suffix adds at
// most 2 digits (ConnectionHandleCandidate), so a handle stays within [a-z0-9]{1,16}
// (docs/DESIGN.md §4).
const HandleBaseLen = 12

// ConnectionHandleBase turns a connection's name (for a marketplace install, the catalog
// entry's name) into the base of its handle (docs/DESIGN.md §4): the name lower-cased,
// every character outside [a-z0-9] dropped, cut at HandleBaseLen characters
// ("GitHub Copilot" → "githubcopilo"); "conn" when nothing is left ("Ñ ü!" → "conn").
func ConnectionHandleBase(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			if b.Len() == HandleBaseLen {
				break
			}
		}
	}
	if b.Len() == 0 {
		return "conn"
	}
	return b.String()
}

// ConnectionHandleCandidate is the handle tried at attempt (0-based) for base when the
// earlier ones were taken by other connections: base, base2, base3, … (attempt 0 is
// base itself, attempt i > 0 appends i+1). Handles are unique across every workspace, so
// the caller tries candidates in order until one is free.
func ConnectionHandleCandidate(base string, attempt int) string {
	if attempt == 0 {
		return base
	}
	return base + strconv.Itoa(attempt+1)
}
