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

// listPage is one page of a list result as the pool reads it: the lists a tools/list,
// skills/list or resources/list result holds (raw: only the method's own is decoded, so
// another member's shape does not matter) and the cursor of the next page.
type listPage struct {
	Tools      json.RawMessage `json:"tools"`
	Skills     json.RawMessage `json:"skills"`
	Resources  json.RawMessage `json:"resources"`
	NextCursor string          `json:"nextCursor"`
}

// entries decodes the page's list for method (absent or null: none).
func (lp *listPage) entries(method string) ([]json.RawMessage, error) {
	raw := lp.Tools
	switch method {
	case "skills/list":
		raw = lp.Skills
	case "resources/list":
		raw = lp.Resources
	}
	var out []json.RawMessage
	if len(raw) == 0 {
		return nil, nil
	}
	return out, json.Unmarshal(raw, &out)
}

// listAll sends method (tools/list, skills/list or resources/list) on s, following
// nextCursor to the last page, and returns the entries keep accepts (every entry when keep
// is nil) as the upstream sent them, in its order, at most limit of them (0: no bound;
// the pages after the bound are still read, so a loop is still caught). An upstream that
// repeats a cursor, or does not end within Options.MaxPages pages, or whose page does not
// decode is UPSTREAM_ERROR; a failed request is returned as Forward returns it.
func (p *Pool) listAll(ctx context.Context, s *session, method string, limit int, keep func(json.RawMessage) bool) ([]json.RawMessage, error) {
	var all []json.RawMessage
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page >= p.opts.MaxPages {
			return nil, apperr.New(apperr.UpstreamError, "upstream %s did not end within %d pages", method, p.opts.MaxPages)
		}
		params := json.RawMessage("{}")
		if cursor != "" {
			params = json.RawMessage(`{"cursor":` + strconv.Quote(cursor) + `}`)
		}
		raw, err := s.forward(ctx, p, method, params, nil)
		if err != nil {
			return nil, err
		}
		var lp listPage
		err = json.Unmarshal(raw, &lp)
		var entries []json.RawMessage
		if err == nil {
			entries, err = lp.entries(method)
		}
		if err != nil {
			return nil, apperr.Wrap(err, apperr.UpstreamError, "upstream %s result is not valid: %s", method, text.Clip(err.Error(), 120))
		}
		for _, e := range entries {
			if (limit == 0 || len(all) < limit) && (keep == nil || keep(e)) {
				all = append(all, e)
			}
		}
		if lp.NextCursor == "" {
			return all, nil
		}
		if seen[lp.NextCursor] {
			return nil, apperr.New(apperr.UpstreamError, "upstream %s repeated a pagination cursor (page %d)", method, page+1)
		}
		seen[lp.NextCursor] = true
		cursor = lp.NextCursor
	}
}

// listEntries is listAll on a session of t's (Pool.do: the session is opened or reused,
// and renewed once when the upstream says it is gone).
func (p *Pool) listEntries(ctx context.Context, t Target, method string, limit int, keep func(json.RawMessage) bool) ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := p.do(ctx, t, func(ctx context.Context, s *session) error {
		var err error
		out, err = p.listAll(ctx, s, method, limit, keep)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
