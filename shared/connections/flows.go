package connections

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/upstreamauth"
)

// ToolDefs converts listed upstream tools to stored definitions (the whole definition and
// the members the gateway reads, as the upstream's JSON).
func ToolDefs(tools []mcpclient.Tool) []db.ToolDef {
	out := make([]db.ToolDef, 0, len(tools))
	for _, t := range tools {
		out = append(out, db.ToolDef{Name: t.Name, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations,
			Definition: t.Definition})
	}
	return out
}

// CreateInput is the body of POST /api/mcp-connections.
type CreateInput struct {
	Name          string            `json:"name"`
	URL           string            `json:"url"`
	TransportType string            `json:"transportType,omitempty"` // default streamable-http
	Headers       map[string]string `json:"headers,omitempty"`
	Enabled       *bool             `json:"enabled,omitempty"` // default true
	WorkspaceID   *string           `json:"workspaceId,omitempty"`
	ProjectID     *string           `json:"projectId,omitempty"`
	// CatalogEntryID optionally links a manual connection to a catalog entry (seed: a
	// manual connection with the same catalogEntryId does not block an install).
	CatalogEntryID *string `json:"catalogEntryId,omitempty"`
	// AuthMode is how the connection authorizes upstream (default headers; oauth.go).
	AuthMode string `json:"authMode,omitempty"`
	// ReturnTo is linked from the page the OAuth callback shows ("" for none).
	ReturnTo string `json:"returnTo,omitempty"`
}

// Outcome is a written connection with the result of its first connect.
type Outcome struct {
	// CatalogPending is true when the change was committed but the gateway's catalog
	// document could not be rewritten yet (see publish).
	CatalogPending bool           `json:"catalogPending,omitempty"`
	Connection     *db.Connection `json:"connection"`
	Connect        *RefreshResult `json:"connect,omitempty"`
	// Warnings are client-safe notes on a write that succeeded, e.g. an install without
	// a header that its catalog entry declares.
	Warnings []string `json:"warnings,omitempty"`
	// Authorization is set for OAuth connections: the consent to complete (oauth.go).
	Authorization *Authorization `json:"authorization,omitempty"`
}

// Create adds a manual connection (admin), connects to it when enabled and stores its
// tools, and rebuilds the affected catalog documents. A failed first connect is recorded
// on the connection and returned in Outcome.Connect, not as an error (seed).
// Errors: VALIDATION_ERROR (name, URL guard, transport, headers), FORBIDDEN, NOT_FOUND
// (workspace not the principal's), INVALID_REFERENCE (project), UNAVAILABLE.
//
// Without a workspaceId, a non-superuser whose token names exactly one workspace creates
// the connection there (as Install does, DefaultWorkspace); only a superuser's request
// without one means a global connection (issue 25).
func (s *Service) Create(ctx context.Context, p *auth.Principal, in CreateInput) (_ *Outcome, err error) {
	defer wrapErr(&err, "connections: create %q", in.Name)
	if in.WorkspaceID == nil && !p.IsSuperuser() {
		if ws := DefaultWorkspace(p, ""); ws != "" {
			in.WorkspaceID = &ws
		}
	}
	if in.TransportType == "" {
		in.TransportType = TransportStreamable
	}
	if err := validateName(in.Name); err != nil {
		return nil, err
	}
	if err := s.validateTarget(ctx, in.URL, in.TransportType, in.Headers); err != nil {
		return nil, err
	}
	if in.CatalogEntryID != nil && !db.IsUUID(*in.CatalogEntryID) {
		return nil, apperr.New(apperr.Validation, "catalogEntryId must be a UUID")
	}
	if in.AuthMode != "" {
		if err := validMode(in.AuthMode); err != nil {
			return nil, err
		}
	}
	enabled := in.Enabled == nil || *in.Enabled
	var c *db.Connection
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := s.authorizeScope(ctx, tx, p, in.WorkspaceID, in.ProjectID); err != nil {
			return err
		}
		var err error
		c, err = db.ConnectionCreate(ctx, tx, &db.ConnectionNew{
			Name: strings.TrimSpace(in.Name), URL: in.URL, TransportType: in.TransportType, Headers: in.Headers,
			Enabled: enabled, Source: "manual", WorkspaceID: in.WorkspaceID, ProjectID: in.ProjectID,
			CatalogEntryID: in.CatalogEntryID, CreatedBy: p.Subject,
		})
		if err != nil {
			return err
		}
		if in.AuthMode != "" && in.AuthMode != c.AuthMode {
			if err := db.ConnectionAuthModeSet(ctx, tx, c.ID, in.AuthMode); err != nil {
				return err
			}
			c.AuthMode = in.AuthMode
		}
		return logEvent(ctx, tx, p, "mcp.connection_created", c, map[string]any{"authMode": c.AuthMode})
	})
	if err != nil {
		return nil, err
	}
	return s.afterWriteOrAuthorize(ctx, p, c, in.ReturnTo)
}

// afterWriteOrAuthorize is afterWrite, except for an enabled oauth / oauth_per_user
// connection, which has nothing to connect with yet: the answer carries the consent to
// complete, and the tools are listed when the callback stores the token.
func (s *Service) afterWriteOrAuthorize(ctx context.Context, p *auth.Principal, c *db.Connection, returnTo string) (*Outcome, error) {
	if m := upstreamauth.Mode(c.AuthMode); c.Enabled && (m == upstreamauth.ModeOAuth || m == upstreamauth.ModeOAuthPerUser) {
		out := &Outcome{Connection: c, Authorization: s.beginAuthorization(ctx, p, c, returnTo)}
		out.CatalogPending = s.publish(ctx, c.WorkspaceID)
		return out, nil
	}
	return s.afterWrite(ctx, p, c)
}

// afterWrite connects an enabled connection, stores its tools, re-reads it and rebuilds
// the catalog.
func (s *Service) afterWrite(ctx context.Context, p *auth.Principal, c *db.Connection) (*Outcome, error) {
	out := &Outcome{Connection: c}
	if c.Enabled {
		r, err := s.Refresh(ctx, p.Subject, c)
		if err != nil {
			return nil, err
		}
		out.Connect = r
		if fresh, err := db.ConnectionGet(ctx, s.Pool, c.ID); err == nil {
			out.Connection = fresh
		}
	}
	out.CatalogPending = s.publish(ctx, c.WorkspaceID)
	return out, nil
}

// InstallInput is the body of POST /api/mcp-marketplace/{id}/install (seed
// installMcpServerSchema: {workspaceId, name?, headers?}, plus url for template entries).
// WorkspaceID may be empty when the principal names exactly one workspace.
type InstallInput struct {
	WorkspaceID string            `json:"workspaceId"`
	Name        string            `json:"name,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	// AuthMode overrides the catalog entry's default auth mode ("" keeps it).
	AuthMode string `json:"authMode,omitempty"`
	// ReturnTo is linked from the page the OAuth callback shows ("" for none).
	ReturnTo string `json:"returnTo,omitempty"`
	// URL replaces the URL of a template (placeholder) entry, such as
	// https://YOUR-HOST/mcp; it is required for those and refused for any other entry.
	URL string `json:"url,omitempty"`
	// Variables fill the {name} templates of an imported entry's URL (its urlVariables,
	// docs/REGISTRY.md; catalog.FillURL checks them).
	Variables map[string]string `json:"variables,omitempty"`
}

// IsPlaceholderURL reports whether u still holds a template host (YOUR-HOST) that nobody
// replaced: such an entry cannot be installed as is.
func IsPlaceholderURL(u string) bool {
	return strings.Contains(strings.ToUpper(u), "YOUR-HOST")
}

// DefaultWorkspace is ws, or p's only workspace when ws is empty and p names exactly one.
func DefaultWorkspace(p *auth.Principal, ws string) string {
	if ws == "" && len(p.Workspaces) == 1 {
		return p.Workspaces[0]
	}
	return ws
}

// missingHeaders lists the header names entry declares that h does not give (compared
// case-insensitively, as HTTP does), sorted.
func missingHeaders(entry, h map[string]string) []string {
	given := map[string]bool{}
	for k, v := range h {
		if v != "" {
			given[strings.ToLower(k)] = true
		}
	}
	var out []string
	for k := range entry {
		if !given[strings.ToLower(k)] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Install runs the seed's install flow: validate; the entry must exist (NOT_FOUND); the
// workspace must not already hold a marketplace install of it (CONFLICT; a manual
// connection to the same entry does not count); create the connection with url and
// transport copied from the entry, source marketplace, enabled, name = override or the
// entry's; count the install; log mcp.installed; connect (a failure is recorded, not
// raised); rebuild the workspace's catalog.
//
// A template entry (is_placeholder, or a URL with YOUR-HOST) needs in.URL, which passes the
// same URL guard as a manual connection; other entries refuse in.URL (VALIDATION_ERROR).
// Headers the entry declares but in.Headers lacks do not stop the install: the outcome
// carries a warning per header.
func (s *Service) Install(ctx context.Context, p *auth.Principal, entryID string, in InstallInput) (_ *Outcome, err error) {
	defer wrapErr(&err, "connections: install %s", entryID)
	in.WorkspaceID = DefaultWorkspace(p, in.WorkspaceID)
	if in.WorkspaceID == "" {
		return nil, apperr.New(apperr.Validation, "workspaceId is required").
			WithHint("the token names no single workspace; pass workspaceId")
	}
	if !db.IsUUID(in.WorkspaceID) {
		return nil, apperr.New(apperr.Validation, "workspaceId must be a UUID")
	}
	if in.Name != "" {
		if err := validateName(in.Name); err != nil {
			return nil, err
		}
	}
	if err := headers.Validate(in.Headers); err != nil { // seed step 1: the body first
		return nil, err
	}
	if in.AuthMode != "" {
		if err := validMode(in.AuthMode); err != nil {
			return nil, err
		}
	}
	var c *db.Connection
	var warnings []string
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		ws := in.WorkspaceID
		entry, err := s.lockedEntry(ctx, tx, p, ws, entryID)
		if err != nil {
			return err
		}
		h := in.Headers
		if h == nil {
			h = map[string]string{}
		}
		if entry.RegistryStatus != nil && *entry.RegistryStatus == "deleted" {
			return apperr.New(apperr.Validation, "%s was deleted from its registry and can no longer be installed", entry.Name).
				WithHint("existing installs keep working; choose another server")
		}
		target, err := catalog.FillURL(entry, in.Variables)
		if err != nil {
			return err
		}
		switch template := entry.IsPlaceholder || IsPlaceholderURL(entry.URL); {
		case template && in.URL == "":
			return apperr.New(apperr.Validation, "%s is a template for a server you host: its URL %s is a placeholder", entry.Name, entry.URL).
				WithHint("pass url with your server's MCP endpoint").WithDetails(map[string]string{"field": "url"})
		case template:
			if IsPlaceholderURL(in.URL) {
				return apperr.New(apperr.Validation, "url still holds the placeholder host YOUR-HOST").
					WithDetails(map[string]string{"field": "url"})
			}
			target = in.URL
		case in.URL != "":
			return apperr.New(apperr.Validation, "url can only be given for a template entry").
				WithHint("add a manual connection to use another URL").WithDetails(map[string]string{"field": "url"})
		}
		if err := s.validateTarget(ctx, target, entry.TransportType, h); err != nil {
			return err
		}
		for _, name := range missingHeaders(entry.Headers, h) {
			warnings = append(warnings, fmt.Sprintf("header %s, which %s declares, was not given: the server may refuse the connection", name, entry.Name))
		}
		name := in.Name
		if name == "" {
			name = entry.Name
		}
		c, err = db.ConnectionCreate(ctx, tx, &db.ConnectionNew{
			Name: name, URL: target, TransportType: entry.TransportType, Headers: h, Enabled: true,
			Source: "marketplace", CatalogEntryID: &entry.ID, WorkspaceID: &ws, CreatedBy: p.Subject,
		})
		if apperr.CodeOf(err) == apperr.Conflict {
			return apperr.New(apperr.Conflict, "%s is already installed in this workspace", entry.Name).
				WithHint("uninstall it first, or add a manual connection")
		}
		if err != nil {
			return err
		}
		if err := db.CatalogEntryAddInstalls(ctx, tx, entry.ID, 1); err != nil {
			return err
		}
		mode := in.AuthMode
		if mode == "" {
			if mode, err = db.CatalogEntryAuthModeGet(ctx, tx, entry.ID); err != nil {
				return err
			}
		}
		if mode != c.AuthMode {
			if err := db.ConnectionAuthModeSet(ctx, tx, c.ID, mode); err != nil {
				return err
			}
			c.AuthMode = mode
		}
		return logEvent(ctx, tx, p, "mcp.installed", c, map[string]any{"authMode": mode})
	})
	if err != nil {
		return nil, err
	}
	out, err := s.afterWriteOrAuthorize(ctx, p, c, in.ReturnTo)
	if out != nil {
		out.Warnings = warnings
	}
	return out, err
}

// lockedEntry authorizes admin p in workspace ws and returns catalog entry entryID under
// its row lock (installs and uninstalls of one entry serialise on it).
func (s *Service) lockedEntry(ctx context.Context, tx db.Tx, p *auth.Principal, ws, entryID string) (*db.CatalogEntry, error) {
	if err := s.authorizeScope(ctx, tx, p, &ws, nil); err != nil {
		return nil, err
	}
	entry, err := db.CatalogEntryGet(ctx, tx, entryID)
	if err != nil {
		return nil, err
	}
	if err := db.CatalogEntryLock(ctx, tx, entry.ID); err != nil {
		return nil, err
	}
	return entry, nil
}

// Get returns connection id if p may see it (NOT_FOUND otherwise).
func (s *Service) Get(ctx context.Context, p *auth.Principal, id string) (_ *db.Connection, err error) {
	defer wrapErr(&err, "connections: get %s", id)
	return s.visible(ctx, s.Pool, p, id)
}

// GetInWorkspace returns connection id when it belongs to workspace ws and p is a member
// of ws: the lookup of a tool acting inside one workspace. Any other connection (another
// workspace's, a global one, none) is NOT_FOUND "no such connection in this workspace", the
// same answer for each so that ids of other tenants cannot be probed; the access line keeps
// naming ws.
func (s *Service) GetInWorkspace(ctx context.Context, p *auth.Principal, ws, id string) (_ *db.Connection, err error) {
	defer wrapErr(&err, "connections: get %s in %s", id, ws)
	c, err := db.ConnectionGet(ctx, s.Pool, id)
	if apperr.CodeOf(err) == apperr.NotFound || err == nil && (!p.InWorkspace(ws) || c.WorkspaceID == nil || *c.WorkspaceID != ws) {
		return nil, apperr.New(apperr.NotFound, "no such connection in this workspace")
	}
	return c, err
}

// List returns the connections p may see: global ones and those of p's workspaces
// (every connection for a superuser), optionally narrowed to workspace ws.
func (s *Service) List(ctx context.Context, p *auth.Principal, ws string) ([]db.Connection, error) {
	f := db.ConnectionFilter{WorkspaceIDs: p.Workspaces, AllScopes: p.IsSuperuser()}
	if ws != "" {
		if !p.InWorkspace(ws) {
			return nil, apperr.New(apperr.NotFound, "workspace not found")
		}
		f = db.ConnectionFilter{WorkspaceIDs: []string{ws}}
	}
	return db.ConnectionList(ctx, s.Pool, f)
}
