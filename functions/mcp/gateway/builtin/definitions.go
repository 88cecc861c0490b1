package builtin

import (
	"context"
	"encoding/json"
	"errors"
	gschema "github.com/google/jsonschema-go/jsonschema"
	"sort"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Toolsets of the built-in tools.
const (
	toolsetCatalog     = "catalog"
	toolsetConnections = "connections"
	toolsetInstall     = "install"
	toolsetAudit       = "audit"
	toolsetMeta        = "meta" // always listed: the way to discover the others
)

var toolsetDescriptions = map[string]string{
	toolsetCatalog:     "Browse the curated catalog of remote MCP servers.",
	toolsetConnections: "See, test and toggle the MCP servers connected to this workspace.",
	toolsetInstall:     "Install and uninstall catalog servers (admin).",
	toolsetAudit:       "Read the workspace's audit trail (admin).",
	toolsetMeta:        "Discover toolsets and search every tool you can call.",
}

// Toolset is a named group of built-ins, selectable with X-MCP-Toolsets.
type Toolset struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tools       []string `json:"tools"`
}

func toolsetsOf(bs []*Compiled) []Toolset {
	m := map[string]*Toolset{}
	for _, b := range bs {
		ts := m[b.Toolset]
		if ts == nil {
			ts = &Toolset{Name: b.Toolset, Description: toolsetDescriptions[b.Toolset]}
			m[b.Toolset] = ts
		}
		ts.Tools = append(ts.Tools, b.Name)
	}
	out := make([]Toolset, 0, len(m))
	for _, ts := range m {
		out = append(out, *ts)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

var readOnly = mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}

// definitions declares every built-in (prefix agentpack_). Handlers are methods of s.
func (s *Set) definitions() []*Builtin {
	return append([]*Builtin{
		{
			Name: "agentpack_catalog_list", Version: "1.0.0", Toolset: toolsetCatalog,
			Title:       "List catalog servers",
			Description: "List the curated catalog of remote MCP servers that can be installed into this workspace, with verification tier and health. Filter by a search term (name, description, author) and/or category.",
			Input:       Input{Props: map[string]*gschema.Schema{"search": {MaxLength: ptr(200)}, "category": {MaxLength: ptr(100)}, "limit": {Minimum: ptr[float64](1), Maximum: ptr[float64](100)}}},
			Annotations: readOnly,
			Handler:     Typed(s.catalogList),
		},
		{
			Name: "agentpack_catalog_get", Version: "1.0.0", Toolset: toolsetCatalog,
			Title:       "Show a catalog server",
			Description: "Show one catalog entry by id or exact name: URL, transport, the header names it expects, tier, health, and whether this workspace has installed it.",
			Input:       Input{Props: map[string]*gschema.Schema{"entryId": {Format: "uuid"}, "name": {MinLength: ptr(1), MaxLength: ptr(200)}}, OneOf: []*gschema.Schema{{Required: []string{"entryId"}}, {Required: []string{"name"}}}},
			Annotations: readOnly,
			Handler:     Typed(s.catalogGet),
		},
		{
			Name: "agentpack_connections_list", Version: "1.0.0", Toolset: toolsetConnections, TakesProject: true,
			Title:       "List connected servers",
			Description: "List the MCP servers connected to this workspace (global, workspace and the project's own), with status, last error and the names under which their tools are exposed. projectId defaults to the workspace's default project.",
			Input:       Input{Props: map[string]*gschema.Schema{"projectId": {Format: "uuid"}}},
			Annotations: readOnly,
			Handler:     Typed(s.connectionsList),
		},
		{
			Name: "agentpack_catalog_install", Version: "1.0.0", Toolset: toolsetInstall, AdminOnly: true,
			Title:       "Install a catalog server",
			Description: "Install a catalog entry into this workspace (admin). Its tools appear in this gateway as mcp_<handle>_<tool>. headers are sent to the upstream server (e.g. an Authorization token) and are never shown again.",
			Input:       Input{Props: map[string]*gschema.Schema{"entryId": {Format: "uuid"}, "name": {MinLength: ptr(1), MaxLength: ptr(100)}, "headers": {MaxProperties: ptr(32)}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: false, OpenWorldHint: ptr(true)},
			Handler:     Typed(s.catalogInstall),
		},
		{
			Name: "agentpack_catalog_uninstall", Version: "1.0.0", Toolset: toolsetInstall, AdminOnly: true,
			Title:       "Uninstall a catalog server",
			Description: "Uninstall a catalog entry from this workspace (admin): its connection and tools are removed from the gateway. Re-installing later creates a new connection.",
			Input:       Input{Props: map[string]*gschema.Schema{"entryId": {Format: "uuid"}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: false, OpenWorldHint: ptr(false)},
			Handler:     Typed(s.catalogUninstall),
		},
		{
			Name: "agentpack_connection_toggle", Version: "1.0.0", Toolset: toolsetConnections, AdminOnly: true,
			Title:       "Enable or disable a connection",
			Description: "Flip a workspace connection between enabled and disabled (admin). A disabled connection's tools leave the gateway; its frozen tool names are kept for when it is enabled again.",
			Input:       Input{Props: map[string]*gschema.Schema{"connectionId": {Format: "uuid"}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: false, OpenWorldHint: ptr(true)},
			Handler:     Typed(s.connectionToggle),
		},
		{
			Name: "agentpack_connection_test", Version: "1.0.0", Toolset: toolsetConnections, AdminOnly: true,
			Title:       "Test a connection",
			Description: "Connect to a workspace connection's server afresh (admin), list and store its tools, and report success, tool count and any error. An unreachable server is a result (success false), not a tool error.",
			Input:       Input{Props: map[string]*gschema.Schema{"connectionId": {Format: "uuid"}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(true)},
			Handler:     Typed(s.connectionTest),
		},
		{
			Name: "agentpack_audit_list", Version: "1.0.0", Toolset: toolsetAudit, AdminOnly: true,
			Title:       "Recent audit events",
			Description: "List the workspace's most recent audited tool calls (successful writes): who, which tool, when, how long. Arguments appear only as a digest.",
			Input:       Input{Props: map[string]*gschema.Schema{"limit": {Minimum: ptr[float64](1), Maximum: ptr[float64](200)}}},
			Annotations: readOnly,
			Handler:     Typed(s.auditList),
		},
		{
			Name: "agentpack_toolsets_list", Version: "1.0.0", Toolset: toolsetMeta,
			Title:       "List toolsets",
			Description: "List the gateway's toolsets and their tools. Narrow a session's built-in tools with the X-MCP-Toolsets header or ?toolsets=a,b.",
			Annotations: readOnly,
			Handler:     Typed(s.toolsetsList),
		},
	}, append(append(append(s.discoveryDefinitions(), s.pinDefinitions()...), s.limitDefinitions()...), append(s.overrideDefinitions(), s.registryDefinitions()...)...)...)
}

// orDefault is n, or def when n is 0 (an optional integer argument left out; the input
// schemas give every such argument a minimum of 1).
func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

type catalogListArgs struct {
	Search   string `json:"search,omitempty"`
	Category string `json:"category,omitempty"`
	Limit    int    `json:"limit,omitempty"`
}

func (s *Set) catalogList(ctx context.Context, c *Call, in catalogListArgs) (catalogListAnswer, error) {
	out, total, err := s.svc.Entries.List(ctx, db.CatalogFilter{Search: in.Search, Category: in.Category}, orDefault(in.Limit, 50))
	if err != nil {
		return catalogListAnswer{}, err
	}
	return catalogListAnswer{Entries: out, Total: total}, nil
}

type catalogGetArgs struct {
	EntryID string `json:"entryId,omitempty"`
	Name    string `json:"name,omitempty"`
}

func (s *Set) catalogGet(ctx context.Context, c *Call, in catalogGetArgs) (catalogGetAnswer, error) {
	e, err := s.svc.Entries.Get(ctx, in.EntryID, in.Name)
	if err != nil {
		return catalogGetAnswer{}, err
	}
	var installed []installedConnection
	for _, conn := range c.Req.Snapshot.Doc.Connections {
		if conn.CatalogEntryID == e.ID {
			installed = append(installed, installedConnection{ConnectionID: conn.ID, Handle: conn.Handle, Name: conn.Name})
		}
	}
	return catalogGetAnswer{Entry: *e, Installed: installed}, nil
}

// projectArgs is the argument struct of a built-in that takes only projectId (filled in
// Call.ProjectID by the default-project layer).
type projectArgs struct {
	ProjectID string `json:"projectId,omitempty"`
}

func (s *Set) connectionsList(ctx context.Context, c *Call, _ projectArgs) (connectionsAnswer, error) {
	if s.svc.Connections == nil {
		return connectionsAnswer{}, apperr.New(apperr.Unavailable, "connections are not available on this gateway")
	}
	rows, err := s.svc.Connections.List(ctx, c.Principal, c.Workspace)
	if err != nil {
		return connectionsAnswer{}, err
	}
	exposed := map[string][]string{}
	for _, conn := range c.Req.Snapshot.Doc.Connections {
		for _, t := range conn.Tools {
			exposed[conn.ID] = append(exposed[conn.ID], t.ExposedName)
		}
	}
	out := make([]listedConnection, 0, len(rows))
	for i := range rows {
		r := &rows[i]
		if r.ProjectID != nil && *r.ProjectID != c.ProjectID {
			continue
		}
		out = append(out, listedConnection{View: viewConnection(c, r), Tools: nonNilStrings(exposed[r.ID])})
	}
	return connectionsAnswer{Connections: out, ProjectID: c.ProjectID}, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type catalogInstallArgs struct {
	EntryID string            `json:"entryId"`
	Name    string            `json:"name,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

func (s *Set) catalogInstall(ctx context.Context, c *Call, in catalogInstallArgs) (connections.OutcomeView, error) {
	if s.svc.Connections == nil {
		return connections.OutcomeView{}, apperr.New(apperr.Unavailable, "installs are not available on this gateway")
	}
	if in.Headers == nil {
		in.Headers = map[string]string{}
	}
	ctx, cancel := context.WithTimeout(ctx, mcpclient.DefaultConnectTimeout+5e9)
	defer cancel()
	out, err := s.svc.Connections.Install(ctx, c.Principal, in.EntryID, connections.InstallInput{
		WorkspaceID: c.Workspace, Name: in.Name, Headers: in.Headers,
	})
	if err != nil {
		return connections.OutcomeView{}, err
	}
	return builtinOutcome(c, out)
}

type entryArgs struct {
	EntryID string `json:"entryId"`
}

func (s *Set) catalogUninstall(ctx context.Context, c *Call, in entryArgs) (uninstallAnswer, error) {
	if s.svc.Connections == nil {
		return uninstallAnswer{}, apperr.New(apperr.Unavailable, "uninstalls are not available on this gateway")
	}
	if err := s.svc.Connections.Uninstall(ctx, c.Principal, in.EntryID, c.Workspace); err != nil {
		return uninstallAnswer{}, err
	}
	return uninstallAnswer{EntryID: in.EntryID, Uninstalled: true}, nil
}

type connectionArgs struct {
	ConnectionID string `json:"connectionId"`
}

// workspaceConnection returns the id argument when it names a connection of the
// request's workspace; any other connection (another workspace's, a global one) answers
// NOT_FOUND, as if it did not exist. Disabled connections are not in the catalog snapshot,
// so Postgres is asked.
func (s *Set) workspaceConnection(ctx context.Context, c *Call, id string) (string, error) {
	if s.svc.Connections == nil {
		return "", apperr.New(apperr.Unavailable, "connection management is not available on this gateway")
	}
	if _, err := s.svc.Connections.GetInWorkspace(ctx, c.Principal, c.Workspace, id); err != nil {
		return "", err
	}
	return id, nil
}

func (s *Set) connectionToggle(ctx context.Context, c *Call, in connectionArgs) (connections.OutcomeView, error) {
	id, err := s.workspaceConnection(ctx, c, in.ConnectionID)
	if err != nil {
		return connections.OutcomeView{}, err
	}
	out, err := s.svc.Connections.Toggle(ctx, c.Principal, id)
	if err != nil {
		return connections.OutcomeView{}, err
	}
	return builtinOutcome(c, out)
}

// builtinOutcome is a write's outcome as a built-in answers it: connections.OutcomeView,
// the shape REST answers, with the connection's URL as visibleURL shows it (a query may
// hold an API key; only REST shows it whole, to an admin). An outcome without its
// connection (every connections.Service write sets it) is an internal error.
func builtinOutcome(c *Call, out *connections.Outcome) (connections.OutcomeView, error) {
	if out == nil || out.Connection == nil {
		return connections.OutcomeView{}, errors.New("builtin: a connection write answered no connection")
	}
	v := connections.NewOutcomeView(out, false)
	v.URL = visibleURL(c.Principal, out.Connection.URL)
	return v, nil
}

// connectionTest answers the test's result (on the wire connections.TestAnswer, its
// MarshalJSON).
func (s *Set) connectionTest(ctx context.Context, c *Call, in connectionArgs) (connections.RefreshResult, error) {
	id, err := s.workspaceConnection(ctx, c, in.ConnectionID)
	if err != nil {
		return connections.RefreshResult{}, err
	}
	res, err := s.svc.Connections.Test(ctx, c.Principal, id)
	if err != nil {
		return connections.RefreshResult{}, err
	}
	return *res, nil
}

type limitArgs struct {
	Limit int `json:"limit,omitempty"`
}

func (s *Set) auditList(ctx context.Context, c *Call, in limitArgs) (auditAnswer, error) {
	evs, err := s.svc.Audit.List(ctx, c.Workspace, orDefault(in.Limit, 50))
	if err != nil {
		return auditAnswer{}, err
	}
	return auditAnswer{Events: evs}, nil
}

func (s *Set) toolsetsList(_ context.Context, c *Call, _ NoArgs) (toolsetsAnswer, error) {
	out := make([]Toolset, 0, len(s.toolsets))
	for _, ts := range s.toolsets {
		var visible []string
		for _, name := range ts.Tools {
			if CanSee(c.Principal, s.byName[name], nil) {
				visible = append(visible, name)
			}
		}
		if len(visible) > 0 {
			out = append(out, Toolset{Name: ts.Name, Description: ts.Description, Tools: visible})
		}
	}
	return toolsetsAnswer{Selected: c.Req.Toolsets, Toolsets: out}, nil
}

// visibleURL is a connection URL as principal p may see it in a built-in's answer: admins
// see scheme, host, path and the query's parameter names with every value, the userinfo and
// the fragment redacted (headers.RedactURL); members see scheme, host and path only. Some
// servers take an API key in the query, and only the REST connection detail shows the URL
// whole, to an admin (shared/headers, secrets in URLs).
func visibleURL(p *auth.Principal, raw string) string {
	if p.IsAdmin() {
		return headers.RedactURL(raw)
	}
	return headers.PublicURL(raw)
}

// CatalogJSON is the agentpack://catalog resource: every catalog entry as the built-ins
// show it ({"entries": [catalog.EntryView…]}, header values and URL secrets redacted).
func (s *Set) CatalogJSON(ctx context.Context) ([]byte, error) {
	views, _, err := s.svc.Entries.List(ctx, db.CatalogFilter{}, 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"entries": views})
}
