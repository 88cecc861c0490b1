package mcpclient

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
)

// MaxUIResources bounds how many ui:// resources ListUIResources keeps of one upstream.
const MaxUIResources = 1000

// appMIMEType is an MCP App view's MIME type (SEP-1865 "UI Resource Format").
const appMIMEType = "text/html;profile=mcp-app"

// ListUIResources lists the upstream's resources (resources/list, every page, up to
// Options.MaxPages) and returns the MCP Apps views among them — the entries whose uri is a
// ui:// URI (SEP-1865 "UI Resource Format"; the scheme matched without regard to case), or
// whose mimeType is text/html;profile=mcp-app whatever their URI (an opaque memo:… or
// urn:… view, issue 34) —
// each as the upstream listed it, in its order, at most MaxUIResources. Other resources
// are left out: the aggregate endpoint lists only views (docs/ARCHITECTURE.md "MCP Apps").
// Errors as ListTools; an upstream that repeats a cursor or never ends is UPSTREAM_ERROR.
func (p *Pool) ListUIResources(ctx context.Context, t Target) ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := p.do(ctx, t, func(ctx context.Context, s *session) error {
		out = nil
		seen := map[string]bool{}
		cursor := ""
		for page := 0; ; page++ {
			if page >= p.opts.MaxPages {
				return apperr.New(apperr.UpstreamError, "upstream resources/list did not end within %d pages", p.opts.MaxPages)
			}
			params := json.RawMessage("{}")
			if cursor != "" {
				params = json.RawMessage(`{"cursor":` + strconv.Quote(cursor) + `}`)
			}
			raw, err := s.forward(ctx, p, "resources/list", params, nil)
			if err != nil {
				return err
			}
			var lp struct {
				Resources  []json.RawMessage `json:"resources"`
				NextCursor string            `json:"nextCursor"`
			}
			if err := json.Unmarshal(raw, &lp); err != nil {
				return apperr.Wrap(err, apperr.UpstreamError, "upstream resources/list result is not valid: %s", text.Clip(err.Error(), 120))
			}
			for _, r := range lp.Resources {
				var e struct {
					URI      string `json:"uri"`
					MIMEType string `json:"mimeType"`
				}
				if json.Unmarshal(r, &e) == nil && (len(e.URI) > 5 && strings.EqualFold(e.URI[:5], "ui://") ||
					strings.EqualFold(strings.ReplaceAll(e.MIMEType, " ", ""), appMIMEType)) && len(out) < MaxUIResources {
					out = append(out, r)
				}
			}
			if lp.NextCursor == "" {
				return nil
			}
			if seen[lp.NextCursor] {
				return apperr.New(apperr.UpstreamError, "upstream resources/list repeated a pagination cursor (page %d)", page+1)
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
