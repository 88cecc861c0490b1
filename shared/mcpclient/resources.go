package mcpclient

import (
	"context"
	"encoding/json"
	"strings"
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
	return p.listEntries(ctx, t, "resources/list", MaxUIResources, isUIResource)
}

// isUIResource reports whether resources/list entry r is an MCP Apps view: a ui:// URI
// (any case) or the view MIME type whatever its URI.
func isUIResource(r json.RawMessage) bool {
	var e struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
	}
	return json.Unmarshal(r, &e) == nil && (len(e.URI) > 5 && strings.EqualFold(e.URI[:5], "ui://") ||
		strings.EqualFold(strings.ReplaceAll(e.MIMEType, " ", ""), appMIMEType))
}
