package mcpclient

import (
	"context"
	"encoding/json"
)

// MaxSkills bounds how many skill entries ListSkills keeps of one upstream.
const MaxSkills = 500

// ListSkills sends skills/list (SEP-2640, the io.modelcontextprotocol/skills extension) to
// the upstream, every page up to Options.MaxPages, and returns its entries as sent, in its
// order, at most MaxSkills. Errors as ListTools; an upstream that repeats a cursor or never
// ends is UPSTREAM_ERROR.
func (p *Pool) ListSkills(ctx context.Context, t Target) ([]json.RawMessage, error) {
	return p.listEntries(ctx, t, "skills/list", MaxSkills, nil)
}
