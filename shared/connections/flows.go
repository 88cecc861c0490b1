package connections

import (
	"context"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
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
	Name          string            `json:"name" minLength:"1" maxLength:"100"`
	URL           string            `json:"url" maxLength:"2048" doc:"http(s) only; when deployed https and no loopback, private, link-local or metadata target (checked again when dialling). A URL containing \"[REDACTED]\" (read from a redacted view) is refused."`
	TransportType string            `json:"transportType,omitempty" enum:"streamable-http,sse"` // default streamable-http
	Headers       map[string]string `json:"headers,omitempty" doc:"Header name → value. Names are HTTP tokens; hop-by-hop and gateway-owned names (Host, Connection, Transfer-Encoding, Content-*, Mcp-*, Proxy-*, X-Forwarded-*, ...) are refused; values have no CR, LF or NUL; at most 32 headers, 8 KiB per value, 32 KiB in all. Values are secrets: answers show \"[REDACTED]\"."`
	Enabled       *bool             `json:"enabled,omitempty"` // default true
	WorkspaceID   *string           `json:"workspaceId,omitempty" format:"uuid" doc:"Omit for a global connection (superuser)."`
	ProjectID     *string           `json:"projectId,omitempty" format:"uuid"`
	// CatalogEntryID optionally links a manual connection to a catalog entry (a
	// manual connection with the same catalogEntryId does not block an install).
	CatalogEntryID *string `json:"catalogEntryId,omitempty" format:"uuid" doc:"Optionally link a manual connection to a catalog entry (it does not count as an install)."`
	// AuthMode is how the connection authorizes upstream (default headers; oauth.go).
	AuthMode string `json:"authMode,omitempty" enum:"none,headers,oauth,oauth_per_user,client_credentials" doc:"How the connection authorizes upstream (default headers). oauth and oauth_per_user answer an authorization to complete."`
	// ReturnTo is linked from the page the OAuth callback shows ("" for none).
	ReturnTo string `json:"returnTo,omitempty" format:"uri" doc:"Linked from the page GET /api/oauth/callback shows."`
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
// on the connection and returned in Outcome.Connect, not as an error, so the admin sees the saved connection and why it is not live.
// Errors: VALIDATION_ERROR (name, URL guard, transport, headers), FORBIDDEN, NOT_FOUND
// (workspace not the principal's), INVALID_REFERENCE (project), UNAVAILABLE.
//
// Without a workspaceId, a non-superuser whose token names exactly one workspace creates
// the connection there (as Install does, DefaultWorkspace); only a superuser's request
// without one means a global connection (a workspace admin cannot create one by omission).
func (s *Service) Create(ctx context.Context, p *auth.Principal, in CreateInput) (_ *Outcome, err error) {
	defer derrors.Wrap(&err, "connections: create %q", in.Name)
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
		out.CatalogPending = s.publish(ctx, c.WorkspaceID, c.ID)
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
	out.CatalogPending = s.publish(ctx, c.WorkspaceID, c.ID)
	return out, nil
}

// Get returns connection id if p may see it (NOT_FOUND otherwise).
func (s *Service) Get(ctx context.Context, p *auth.Principal, id string) (_ *db.Connection, err error) {
	defer derrors.Wrap(&err, "connections: get %s", id)
	return s.visible(ctx, s.Pool, p, id)
}

// GetInWorkspace returns connection id when it belongs to workspace ws and p is a member
// of ws: the lookup of a tool acting inside one workspace. Any other connection (another
// workspace's, a global one, none) is NOT_FOUND "no such connection in this workspace", the
// same answer for each so that ids of other tenants cannot be probed; the access line keeps
// naming ws.
func (s *Service) GetInWorkspace(ctx context.Context, p *auth.Principal, ws, id string) (_ *db.Connection, err error) {
	defer derrors.Wrap(&err, "connections: get %s in %s", id, ws)
	c, err := db.ConnectionGet(ctx, s.Pool, id)
	if apperr.CodeOf(err) == apperr.NotFound || err == nil && (!p.InWorkspace(ws) || c.WorkspaceID == nil || *c.WorkspaceID != ws) {
		return nil, apperr.New(apperr.NotFound, "no such connection in this workspace")
	}
	return c, err
}

// List returns the connections p may see: global ones and those of p's workspaces
// (every connection for a superuser), optionally narrowed to workspace ws.
func (s *Service) List(ctx context.Context, p *auth.Principal, ws string) (_ []db.Connection, err error) {
	defer derrors.Wrap(&err, "connections: list %s", ws)
	f := db.ConnectionFilter{WorkspaceIDs: p.Workspaces, AllScopes: p.IsSuperuser()}
	if ws != "" {
		if !p.InWorkspace(ws) {
			return nil, apperr.New(apperr.NotFound, "workspace not found")
		}
		f = db.ConnectionFilter{WorkspaceIDs: []string{ws}}
	}
	return db.ConnectionList(ctx, s.Pool, f)
}
