package mcpclient

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
)

// Tool is one upstream tool as listed: its definition object exactly as the upstream sent
// it, and the members the gateway reads.
type Tool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage // nil when absent
	Annotations  json.RawMessage // nil when absent
	// Definition is the upstream's whole tool object (icons, execution, _meta and members
	// not known yet included), byte for byte.
	Definition json.RawMessage
}

// listPage is one tools/list result as the pool reads it.
type listPage struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor string            `json:"nextCursor"`
}

// parseTool reads the members the gateway uses from one definition.
func parseTool(def json.RawMessage) (Tool, error) {
	var w struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  json.RawMessage `json:"annotations"`
	}
	if err := json.Unmarshal(def, &w); err != nil {
		return Tool{}, err
	}
	t := Tool{Name: w.Name, Title: w.Title, Description: w.Description, InputSchema: w.InputSchema,
		OutputSchema: nonNull(w.OutputSchema), Annotations: nonNull(w.Annotations), Definition: def}
	return t, nil
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// listAllRaw follows nextCursor on s with the loop guard, returning every definition.
func (p *Pool) listAllRaw(ctx context.Context, s *session) ([]json.RawMessage, error) {
	var all []json.RawMessage
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page >= p.opts.MaxPages {
			return nil, apperr.New(apperr.UpstreamError, "upstream tools/list did not end within %d pages", p.opts.MaxPages)
		}
		params := json.RawMessage("{}")
		if cursor != "" {
			params = json.RawMessage(`{"cursor":` + strconv.Quote(cursor) + `}`)
		}
		raw, err := s.forward(ctx, p, "tools/list", params, nil)
		if err != nil {
			return nil, err
		}
		var lp listPage
		if err := json.Unmarshal(raw, &lp); err != nil {
			return nil, apperr.Wrap(err, apperr.UpstreamError, "upstream tools/list result is not valid: %s", text.Clip(err.Error(), 120))
		}
		all = append(all, lp.Tools...)
		if lp.NextCursor == "" {
			return all, nil
		}
		if seen[lp.NextCursor] {
			return nil, apperr.New(apperr.UpstreamError, "upstream tools/list repeated a pagination cursor (page %d)", page+1)
		}
		seen[lp.NextCursor] = true
		cursor = lp.NextCursor
	}
}
