package testpeer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AppsViewURI is the ui:// URI every AppsUpstream's tool names: two of them in one
// workspace collide unless the gateway namespaces it.
const AppsViewURI = "ui://dashboard/app.html"

// AppsExtraURI is a view every AppsUpstream lists but no tool of it names.
const AppsExtraURI = "ui://dashboard/extra.html"

// AppsMemoURI and AppsURNURI are views every AppsUpstream lists under opaque URIs (a
// scheme, no authority; mimeType text/html;profile=mcp-app); AppsMemoURI is also embedded
// in the "show" tool's result. AppsMemoNotesURI is an opaque URI of a resource that is no
// view (text/plain).
const (
	AppsMemoURI      = "memo:board-1"
	AppsURNURI       = "urn:agentpack:view:stats"
	AppsMemoNotesURI = "memo:notes"
)

// AppsUpstream is an MCP Apps server (the io.modelcontextprotocol/ui extension, SEP-1865)
// built on go-sdk and served on loopback (streamable HTTP, stateless, JSON answers). It
// declares the extension with the settings {"label": Label}, lists one tool "show" whose
// _meta names AppsViewURI both as ui.resourceUri and under the deprecated flat
// "ui/resourceUri" key, and serves that view as a text/html;profile=mcp-app resource
// whose HTML names Label, so a test can tell two of them apart. It lists that view (name
// "dashboard", description "Dashboard of <Label>", _meta.ui.csp naming
// https://<Label>.example), AppsExtraURI (which no tool names; read, it answers the same
// HTML), the opaque views AppsMemoURI and AppsURNURI, and two resources that are no view:
// file:///notes.txt and AppsMemoNotesURI. A call of "show" answers its text with the
// result's _meta.ui.resourceUri naming AppsViewURI, a resource_link to AppsViewURI and the
// view AppsMemoURI embedded (issue 34: where a rule holds for the listing, it holds for
// the result).
type AppsUpstream struct {
	URL   string
	Label string

	mu       sync.Mutex
	reads    []string // the URIs of the resources/read requests received
	listFail bool
}

// SetListFailing makes u answer resources/list with a JSON-RPC error (-32603) while on.
func (u *AppsUpstream) SetListFailing(on bool) {
	u.mu.Lock()
	u.listFail = on
	u.mu.Unlock()
}

// AppsHTML is the view AppsUpstream labelled label serves.
func AppsHTML(label string) string {
	return `<!doctype html><html><body><div id="app">dashboard of ` + label + `</div></body></html>`
}

// NewAppsUpstream starts an AppsUpstream labelled label on 127.0.0.1, stopped in
// t.Cleanup.
func NewAppsUpstream(t TB, label string) *AppsUpstream {
	u := &AppsUpstream{Label: label}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}}
	caps.AddExtension("io.modelcontextprotocol/ui", map[string]any{"label": label})
	s := mcp.NewServer(&mcp.Implementation{Name: "apps-" + label, Version: "1.0.0"}, &mcp.ServerOptions{Capabilities: caps})
	s.AddTool(&mcp.Tool{
		Name: "show", Description: "Shows the dashboard of " + label,
		InputSchema: map[string]any{"type": "object"},
		Meta: mcp.Meta{
			"ui":             map[string]any{"resourceUri": AppsViewURI, "visibility": []string{"model", "app"}},
			"ui/resourceUri": AppsViewURI,
		},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			Meta: mcp.Meta{"ui": map[string]any{"resourceUri": AppsViewURI}, "ui/resourceUri": AppsViewURI},
			Content: []mcp.Content{
				&mcp.TextContent{Text: "shown by " + label},
				&mcp.ResourceLink{URI: AppsViewURI, Name: "dashboard", MIMEType: "text/html;profile=mcp-app"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: AppsMemoURI, MIMEType: "text/html;profile=mcp-app", Text: AppsHTML(label)}},
			}}, nil
	})
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		u.mu.Lock()
		u.reads = append(u.reads, req.Params.URI)
		u.mu.Unlock()
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: req.Params.URI, MIMEType: "text/html;profile=mcp-app", Text: AppsHTML(label),
			Meta: mcp.Meta{"ui": map[string]any{"prefersBorder": true}},
		}}}, nil
	}
	s.AddResource(&mcp.Resource{URI: AppsViewURI, Name: "dashboard", Description: "Dashboard of " + label,
		MIMEType: "text/html;profile=mcp-app",
		Meta:     mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []string{"https://" + label + ".example"}}}}}, read)
	s.AddResource(&mcp.Resource{URI: AppsExtraURI, Name: "extra", MIMEType: "text/html;profile=mcp-app"}, read)
	s.AddResource(&mcp.Resource{URI: "file:///notes.txt", Name: "notes", MIMEType: "text/plain"}, read)
	s.AddResource(&mcp.Resource{URI: AppsMemoURI, Name: "memo board", MIMEType: "text/html;profile=mcp-app"}, read)
	s.AddResource(&mcp.Resource{URI: AppsURNURI, Name: "stats", MIMEType: "text/html;profile=mcp-app"}, read)
	s.AddResource(&mcp.Resource{URI: AppsMemoNotesURI, Name: "memo notes", MIMEType: "text/plain"}, read)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			u.mu.Lock()
			fail := u.listFail
			u.mu.Unlock()
			if fail && method == "resources/list" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "listing is broken"}
			}
			return next(ctx, method, req)
		}
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	srv := httptest.NewServer(h)
	u.URL = srv.URL + "/mcp"
	t.Cleanup(srv.Close)
	return u
}

// Reads returns the URIs of the resources/read requests u received, in order.
func (u *AppsUpstream) Reads() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.reads...)
}
