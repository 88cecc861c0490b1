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
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/headers"
)

// InstallInput is the body of POST /api/mcp-marketplace/{id}/install:
// {workspaceId, name?, headers?}, plus url for template entries.
// WorkspaceID may be empty when the principal names exactly one workspace.
type InstallInput struct {
	WorkspaceID string            `json:"workspaceId" format:"uuid" doc:"May be left out when the token names exactly one workspace."`
	Name        string            `json:"name,omitempty" maxLength:"100" doc:"Defaults to the entry's name."`
	Headers     map[string]string `json:"headers,omitempty" doc:"Header name → value. Names are HTTP tokens; hop-by-hop and gateway-owned names (Host, Connection, Transfer-Encoding, Content-*, Mcp-*, Proxy-*, X-Forwarded-*, ...) are refused; values have no CR, LF or NUL; at most 32 headers, 8 KiB per value, 32 KiB in all. Values are secrets: answers show \"[REDACTED]\"."`
	// AuthMode overrides the catalog entry's default auth mode ("" keeps it).
	AuthMode string `json:"authMode,omitempty" enum:"none,headers,oauth,oauth_per_user,client_credentials" doc:"How the connection authorizes upstream; defaults to the catalog entry's auth mode. oauth and oauth_per_user answer an authorization to complete (docs/UPSTREAM-AUTH.md)."`
	// ReturnTo is linked from the page the OAuth callback shows ("" for none).
	ReturnTo string `json:"returnTo,omitempty" format:"uri" doc:"Linked from the page GET /api/oauth/callback shows when the consent is done."`
	// URL replaces the URL of a template (placeholder) entry, such as
	// https://YOUR-HOST/mcp; it is required for those and refused for any other entry.
	URL string `json:"url,omitempty" format:"uri" doc:"Required for a template entry (isPlaceholder, or a URL with YOUR-HOST): your server's MCP endpoint, checked like a manual connection's URL. Refused (400) for any other entry."`
	// Variables fill the {name} templates of an imported entry's URL (its urlVariables,
	// docs/REGISTRY.md; catalog.FillURL checks them).
	Variables map[string]string `json:"variables,omitempty" doc:"Values of the entry's urlVariables (required ones without a default must be given; choices are enforced; a value is 1 to 200 of A-Z a-z 0-9 . _ - ~). Refused (400) for a variable the entry does not declare."`
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

// Install runs the install flow: validate; the entry must exist (NOT_FOUND); the
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
	defer derrors.Wrap(&err, "connections: install %s", entryID)
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
	if err := headers.Validate(in.Headers); err != nil { // step 1: the body first
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

// Delete hard-deletes connection id (admin; DELETE /{id}): its tools and pins go
// with it, a marketplace install's entry loses one install, mcp.connection_deleted is
// logged, the catalog is rebuilt and the cached session closed. Marketplace installs may
// be deleted here too (connections CRUD does not tell them apart).
// Errors: FORBIDDEN, NOT_FOUND, UNAVAILABLE.
func (s *Service) Delete(ctx context.Context, p *auth.Principal, id string) (err error) {
	defer derrors.Wrap(&err, "connections: delete %s", id)
	var c *db.Connection
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := auth.RequireAdmin(p); err != nil {
			return err
		}
		if err := lockConnection(ctx, tx, id); err != nil {
			return err
		}
		var err error
		if c, err = s.writable(ctx, tx, p, id); err != nil {
			return err
		}
		return s.remove(ctx, tx, p, c, "mcp.connection_deleted")
	})
	if err != nil {
		return err
	}
	return s.afterRemove(ctx, c)
}

// remove drops c's tools and row, uncounts its install and logs action.
func (s *Service) remove(ctx context.Context, tx db.Tx, p *auth.Principal, c *db.Connection, action string) error {
	s.revokeGrants(ctx, c) // before the row goes: its grants cascade with it
	if err := db.ConnectionToolsDelete(ctx, tx, c.ID); err != nil {
		return err
	}
	if _, err := db.ConnectionDelete(ctx, tx, c.ID); err != nil {
		return err
	}
	if c.Source == "marketplace" && c.CatalogEntryID != nil {
		if err := db.CatalogEntryAddInstalls(ctx, tx, *c.CatalogEntryID, -1); err != nil {
			return err
		}
	}
	return logEvent(ctx, tx, p, action, c, nil)
}

// afterRemove rebuilds the catalog first (so the gateway stops offering the tools) and
// then closes the session, so nothing reconnects in between.
func (s *Service) afterRemove(ctx context.Context, c *db.Connection) error {
	s.publish(ctx, c.WorkspaceID, c.ID)
	s.Upstreams.Disconnect(c.ID)
	return nil
}

// Uninstall runs the uninstall flow for catalog entry entryID in workspace ws
// (admin of ws): find the workspace's marketplace install of the entry (NOT_FOUND when
// there is none; a manual connection to the entry is not an install), drop its tools,
// hard-delete it, uncount the install, log mcp.uninstalled, rebuild ws's catalog and
// disconnect. Re-installing later creates a new connection (new id).
// Errors: VALIDATION_ERROR (ws not a UUID), FORBIDDEN, NOT_FOUND (entry, workspace not
// the principal's, or not installed), UNAVAILABLE.
func (s *Service) Uninstall(ctx context.Context, p *auth.Principal, entryID, ws string) (err error) {
	defer derrors.Wrap(&err, "connections: uninstall %s from %s", entryID, ws)
	if !db.IsUUID(ws) {
		return apperr.New(apperr.Validation, "workspaceId must be a UUID")
	}
	var c *db.Connection
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		entry, err := s.lockedEntry(ctx, tx, p, ws, entryID)
		if err != nil {
			return err
		}
		c, err = db.ConnectionGetInstall(ctx, tx, entry.ID, ws)
		if apperr.CodeOf(err) == apperr.NotFound {
			return apperr.New(apperr.NotFound, "%s is not installed in this workspace", entry.Name)
		}
		if err != nil {
			return err
		}
		if err := lockConnection(ctx, tx, c.ID); err != nil {
			return err
		}
		return s.remove(ctx, tx, p, c, "mcp.uninstalled")
	})
	if err != nil {
		return err
	}
	return s.afterRemove(ctx, c)
}
