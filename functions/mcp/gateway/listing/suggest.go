package listing

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/agentpack/gateway/shared/text"
)

// UnknownTool is the message of the -32602 answer to a tools/call of name, which is none
// of callable (the tools the caller may call): go-sdk's words (`unknown tool "…"`, name
// clipped to 128 bytes) plus the next step — `did you mean "…"?` naming ClosestName, else,
// on the aggregate endpoint (aggregate true), searchTool to find one, else tools/list.
// callable is sorted in place.
func UnknownTool(name string, callable []string, aggregate bool, searchTool string) string {
	msg := fmt.Sprintf("unknown tool %q", text.Clip(name, 128))
	if best := ClosestName(name, callable); best != "" {
		return msg + fmt.Sprintf("; did you mean %q?", best)
	}
	if aggregate {
		return msg + "; call " + searchTool + " to find the tool you need (tools/list names every tool)"
	}
	return msg + "; tools/list names every tool of this server"
}

// ClosestName is the candidate closest to name: the shortest one name is a proper prefix
// of, else the one at the smallest Levenshtein distance (ties: the first in sorted order)
// when that distance is at most max(1, len(name)/3) and at most 4; "" when none is close,
// and for an empty name or one longer than 256 bytes. candidates is sorted in place.
func ClosestName(name string, candidates []string) string {
	if name == "" || len(name) > 256 {
		return ""
	}
	slices.Sort(candidates)
	best, bestLen := "", 0
	for _, c := range candidates {
		if len(c) > len(name) && strings.HasPrefix(c, name) && (best == "" || len(c) < bestLen) {
			best, bestLen = c, len(c)
		}
	}
	if best != "" {
		return best
	}
	limit := min(max(1, len(name)/3), 4)
	bestD := limit + 1
	for _, c := range candidates {
		if d := levenshtein.ComputeDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
