package mcpclient

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
)

// MaxSkills bounds how many skill entries ListSkills keeps of one upstream.
const MaxSkills = 500

// ListSkills sends skills/list (SEP-2640, the io.modelcontextprotocol/skills extension) to
// the upstream, every page up to Options.MaxPages, and returns its entries as sent, in its
// order, at most MaxSkills. Errors as ListTools; an upstream that repeats a cursor or never
// ends is UPSTREAM_ERROR.
func (p *Pool) ListSkills(ctx context.Context, t Target) ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := p.do(ctx, t, func(ctx context.Context, s *session) error {
		out = nil
		seen := map[string]bool{}
		cursor := ""
		for page := 0; ; page++ {
			if page >= p.opts.MaxPages {
				return apperr.New(apperr.UpstreamError, "upstream skills/list did not end within %d pages", p.opts.MaxPages)
			}
			params := json.RawMessage("{}")
			if cursor != "" {
				params = json.RawMessage(`{"cursor":` + strconv.Quote(cursor) + `}`)
			}
			raw, err := s.forward(ctx, p, "skills/list", params, nil)
			if err != nil {
				return err
			}
			var lp struct {
				Skills     []json.RawMessage `json:"skills"`
				NextCursor string            `json:"nextCursor"`
			}
			if err := json.Unmarshal(raw, &lp); err != nil {
				return apperr.Wrap(err, apperr.UpstreamError, "upstream skills/list result is not valid: %s", text.Clip(err.Error(), 120))
			}
			for _, e := range lp.Skills {
				if len(out) < MaxSkills {
					out = append(out, e)
				}
			}
			if lp.NextCursor == "" {
				return nil
			}
			if seen[lp.NextCursor] {
				return apperr.New(apperr.UpstreamError, "upstream skills/list repeated a pagination cursor (page %d)", page+1)
			}
			seen[lp.NextCursor] = true
			cursor = lp.NextCursor
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
