// Package overrides holds the per-workspace tool overrides of docs/OVERRIDES.md: a
// workspace admin renames, retitles, redescribes, hides or re-annotates one upstream tool
// of a connection visible in the workspace, for that workspace only. Service is the admin
// side (REST under /api/mcp-connections/{id}/tools/{tool}/override and the
// agentpack_tool_override_* built-ins); the catalog build applies the rows
// (catalog.ApplyOverrides), so the gateway lists and calls what the overrides say while
// the upstream's own definitions stay untouched for drift detection.
package overrides

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/names"
	"github.com/agentpack/gateway/shared/text"
)

// Limits of an override's text (docs/OVERRIDES.md), in characters.
const (
	MaxTitle       = 200
	MaxDescription = 8192
	maxUpstream    = 1024
)

// Reserved prefixes of exposed names (docs/OVERRIDES.md "Names"): the built-ins'
// (agentpack_) and the generated proxied names' (mcp_<handle>_, shared/names). A rename
// takes neither, so it can never meet a built-in or a generated name, now or later.
const (
	BuiltinPrefix   = "agentpack_"
	GeneratedPrefix = "mcp_"
)

// annotationKinds are the MCP ToolAnnotations members an override may set (MCP
// 2025-06-18 "Tool annotations"): title is a string, the hints are booleans.
var annotationKinds = map[string]string{"title": "string", "readOnlyHint": "boolean",
	"destructiveHint": "boolean", "idempotentHint": "boolean", "openWorldHint": "boolean"}

// Input is what an admin sets (PUT /api/mcp-connections/{id}/tools/{tool}/override,
// agentpack_tool_override_set): the whole override, replacing any earlier one. Tool is
// the upstream's own tool name. Name (the new exposed name), Title and Description are
// not overridden when nil; Annotations (a JSON object of MCP annotation members, a null
// member removing one) when absent; Hidden withholds the tool. At least one must change
// something.
type Input struct {
	WorkspaceID  string          `json:"workspaceId,omitempty" format:"uuid" doc:"May be left out when the token names exactly one workspace, or for a workspace's own connection."`
	ConnectionID string          `json:"-"`
	Tool         string          `json:"-"`
	Name         *string         `json:"name,omitempty" pattern:"^[A-Za-z0-9_-]{1,64}$"`
	Title        *string         `json:"title,omitempty" maxLength:"200"`
	Description  *string         `json:"description,omitempty" maxLength:"8192"`
	Hidden       bool            `json:"hidden,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// Service is the admin side: set, get, list and delete a workspace's overrides. Every
// method checks the caller first: a member is FORBIDDEN; a workspace the caller is not in,
// or a connection not visible in the workspace, is NOT_FOUND (docs/DESIGN.md §8). Each
// write is an event_log entry (tool_override.set, tool_override.deleted) and rebuilds the
// workspace's catalog document. Pool and Store are required.
type Service struct {
	Pool   *db.Pool
	Store  catalog.Store
	Logger *slog.Logger
	// OnCatalogChange is called after a workspace's document was rebuilt (the local entry
	// point invalidates its in-process gateway cache), as connections.Service does.
	OnCatalogChange func(workspaces []string)
}

func (s *Service) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

func field(f, format string, args ...any) *apperr.Error {
	return apperr.New(apperr.Validation, format, args...).WithDetails(map[string]string{"field": f})
}

// access checks that p is an admin of ws and that connection conn is visible there
// (global, or ws's own); it returns the connection.
func access(ctx context.Context, q db.Querier, p *auth.Principal, ws, conn string) (*db.Connection, error) {
	if err := auth.RequireAdmin(p); err != nil {
		return nil, err
	}
	if ws == "" {
		return nil, field("workspaceId", "workspaceId is required").WithHint("the token names no single workspace")
	}
	if !db.IsUUID(ws) || !p.InWorkspace(ws) {
		return nil, apperr.New(apperr.NotFound, "workspace not found")
	}
	if conn == "" {
		return nil, nil
	}
	c, err := db.ConnectionGet(ctx, q, conn)
	if apperr.CodeOf(err) == apperr.NotFound || (err == nil && c.WorkspaceID != nil && *c.WorkspaceID != ws) {
		return nil, apperr.New(apperr.NotFound, "connection not found")
	}
	return c, err
}

// validate checks in's fields and returns the annotations normalised (nil when none).
func (in *Input) validate() error {
	if in.Tool == "" || len(in.Tool) > maxUpstream {
		return field("tool", "tool must be the upstream's tool name (1 to %d bytes)", maxUpstream)
	}
	if in.Name != nil && !names.Valid(*in.Name) {
		return field("name", "name must be 1 to %d of A-Z a-z 0-9 _ - (what MCP clients accept)", names.MaxLen)
	}
	if in.Title != nil && utf8.RuneCountInString(*in.Title) > MaxTitle {
		return field("title", "title must be at most %d characters", MaxTitle)
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > MaxDescription {
		return field("description", "description must be at most %d characters", MaxDescription)
	}
	if len(in.Annotations) > 0 && string(in.Annotations) != "null" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(in.Annotations, &m); err != nil || m == nil {
			return field("annotations", "annotations must be a JSON object")
		}
		if len(m) == 0 {
			return field("annotations", "annotations must set at least one member (or be left out)")
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			kind, known := annotationKinds[k]
			if !known {
				return field("annotations."+text.Clip(k, 64), "annotations.%s is not an MCP tool annotation", text.Clip(k, 64)).
					WithHint("one of title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint")
			}
			v := m[k]
			if string(v) == "null" {
				continue
			}
			ok := false
			switch kind {
			case "string":
				var s string
				ok = json.Unmarshal(v, &s) == nil && utf8.RuneCountInString(s) <= MaxTitle
			case "boolean":
				var b bool
				ok = json.Unmarshal(v, &b) == nil
			}
			if !ok {
				return field("annotations."+k, "annotations.%s must be a %s or null", k, kind)
			}
		}
		norm, _ := json.Marshal(m) // sorted keys, compact
		in.Annotations = norm
	} else {
		in.Annotations = nil
	}
	if in.Name == nil && in.Title == nil && in.Description == nil && !in.Hidden && in.Annotations == nil {
		return field("name", "the override changes nothing: give name, title, description, annotations or hidden").
			WithHint("DELETE removes an override")
	}
	return nil
}

// checkName checks that new exposed name n for tool t of workspace ws is free
// (docs/OVERRIDES.md "Names"). It returns the name to store: nil when n is t's own
// generated name (no rename at all).
func checkName(ctx context.Context, q db.Querier, ws string, t *db.ConnectionTool, n string) (*string, error) {
	if t != nil && n == t.ExposedName {
		return nil, nil
	}
	lower := strings.ToLower(n)
	if strings.HasPrefix(lower, BuiltinPrefix) {
		return nil, apperr.New(apperr.Conflict, "name %q is reserved for the gateway's built-in tools", n).
			WithDetails(map[string]string{"field": "name", "conflictsWith": "builtin"}).
			WithHint("names starting with " + BuiltinPrefix + " are the gateway's")
	}
	other, err := db.ConnectionToolByExposedVisible(ctx, q, ws, n)
	if err == nil {
		return nil, apperr.New(apperr.Conflict, "name %q is the exposed name of another tool", n).
			WithDetails(map[string]string{"field": "name", "conflictsWith": "tool", "connectionId": other.ConnectionID,
				"upstreamName": other.UpstreamName})
	}
	if apperr.CodeOf(err) != apperr.NotFound {
		return nil, err
	}
	if strings.HasPrefix(lower, GeneratedPrefix) {
		return nil, field("name", "name %q starts with %s, reserved for the gateway's generated names", n, GeneratedPrefix).
			WithHint("choose a name without the mcp_ prefix")
	}
	return &n, nil
}

// Set creates or replaces the override of in's tool in in.WorkspaceID and returns it;
// created reports whether the tool had none. The tool must be stored for the connection
// now (any drift status) unless the override exists already (a dormant one may be
// changed). Errors: FORBIDDEN, NOT_FOUND (workspace, connection, tool), VALIDATION_ERROR
// (a field, named in details.field), CONFLICT (the name is a built-in's, another tool's
// or another override's), UNAVAILABLE. Nothing is written on an error.
func (s *Service) Set(ctx context.Context, p *auth.Principal, in Input) (_ *View, created bool, err error) {
	defer derrors.Wrap(&err, "overrides: set %q of %s in %s", text.Clip(in.Tool, 64), in.ConnectionID, in.WorkspaceID)
	if _, err := access(ctx, s.Pool, p, in.WorkspaceID, in.ConnectionID); err != nil {
		return nil, false, err
	}
	if err := in.validate(); err != nil {
		return nil, false, err
	}
	var row *db.ToolOverride
	var tool *db.ConnectionTool
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		// One override write per workspace at a time: the name checks below read what the
		// unique constraint alone would only refuse with a bare "already exists".
		if err := db.LockKey(ctx, tx, "tool_overrides", in.WorkspaceID); err != nil {
			return err
		}
		var err error
		tool, err = db.ConnectionToolGet(ctx, tx, in.ConnectionID, in.Tool)
		if err != nil && apperr.CodeOf(err) != apperr.NotFound {
			return err
		}
		if err != nil {
			tool = nil
			if _, gerr := db.ToolOverrideGet(ctx, tx, in.WorkspaceID, in.ConnectionID, in.Tool); gerr != nil {
				if apperr.CodeOf(gerr) == apperr.NotFound {
					return apperr.New(apperr.NotFound, "connection has no tool %q", text.Clip(in.Tool, 64)).
						WithDetails(map[string]string{"field": "tool"}).WithHint("tool is the upstream's own name (GET /api/mcp-connections/{id}/tools)")
				}
				return gerr
			}
		}
		name := in.Name
		if name != nil {
			if name, err = checkName(ctx, tx, in.WorkspaceID, tool, *name); err != nil {
				return err
			}
			if name != nil {
				holder, err := db.ToolOverrideByExposed(ctx, tx, in.WorkspaceID, *name)
				if err == nil && (holder.ConnectionID != in.ConnectionID || holder.UpstreamName != in.Tool) {
					return apperr.New(apperr.Conflict, "name %q is already another tool's override", *name).
						WithDetails(map[string]string{"field": "name", "conflictsWith": "override",
							"connectionId": holder.ConnectionID, "upstreamName": holder.UpstreamName})
				}
				if err != nil && apperr.CodeOf(err) != apperr.NotFound {
					return err
				}
			}
		}
		o := &db.ToolOverride{WorkspaceID: in.WorkspaceID, ConnectionID: in.ConnectionID, UpstreamName: in.Tool,
			ExposedName: name, Title: in.Title, Description: in.Description, Hidden: in.Hidden,
			Annotations: in.Annotations, UpdatedBy: p.Subject}
		if row, err = db.ToolOverrideUpsert(ctx, tx, o); err != nil {
			return err
		}
		return db.EventInsert(ctx, tx, &db.Event{EntityType: "tool_override", EntityID: in.ConnectionID,
			Action: "tool_override.set", Actor: p.Subject, WorkspaceID: &in.WorkspaceID, Payload: eventPayload(row)})
	})
	if err != nil {
		return nil, false, err
	}
	v := NewView(row, tool)
	v.CatalogPending = s.publish(ctx, in.WorkspaceID, in.ConnectionID)
	return &v, row.Inserted, nil
}

// Get returns workspace ws's override of connection conn's tool upstream, with the
// upstream's original (nil when dormant). Errors: FORBIDDEN, NOT_FOUND, UNAVAILABLE.
func (s *Service) Get(ctx context.Context, p *auth.Principal, ws, conn, upstream string) (_ *View, err error) {
	defer derrors.Wrap(&err, "overrides: get %q of %s in %s", text.Clip(upstream, 64), conn, ws)
	if _, err := access(ctx, s.Pool, p, ws, conn); err != nil {
		return nil, err
	}
	row, err := db.ToolOverrideGet(ctx, s.Pool, ws, conn, upstream)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil, apperr.New(apperr.NotFound, "tool %q has no override in this workspace", text.Clip(upstream, 64))
	}
	if err != nil {
		return nil, err
	}
	tool, err := db.ConnectionToolGet(ctx, s.Pool, conn, upstream)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return nil, err
	}
	if err != nil {
		tool = nil
	}
	v := NewView(row, tool)
	return &v, nil
}

// List returns workspace ws's overrides (of connection conn only when conn is not ""),
// each with the upstream's original or dormant when the upstream no longer lists the
// tool. Errors: FORBIDDEN, NOT_FOUND, UNAVAILABLE.
func (s *Service) List(ctx context.Context, p *auth.Principal, ws, conn string) (_ []View, err error) {
	defer derrors.Wrap(&err, "overrides: list %s %s", ws, conn)
	if _, err := access(ctx, s.Pool, p, ws, conn); err != nil {
		return nil, err
	}
	rows, err := db.ToolOverrideList(ctx, s.Pool, ws, conn)
	if err != nil {
		return nil, err
	}
	tools := map[string]map[string]*db.ConnectionTool{}
	out := make([]View, 0, len(rows))
	for i := range rows {
		r := &rows[i]
		byName, ok := tools[r.ConnectionID]
		if !ok {
			list, err := db.ConnectionToolList(ctx, s.Pool, r.ConnectionID)
			if err != nil {
				return nil, err
			}
			byName = make(map[string]*db.ConnectionTool, len(list))
			for j := range list {
				byName[list[j].UpstreamName] = &list[j]
			}
			tools[r.ConnectionID] = byName
		}
		out = append(out, NewView(r, byName[r.UpstreamName]))
	}
	return out, nil
}

// Delete removes workspace ws's override of connection conn's tool upstream: the tool is
// the upstream's again. Errors: FORBIDDEN, NOT_FOUND (workspace, connection, override),
// UNAVAILABLE.
func (s *Service) Delete(ctx context.Context, p *auth.Principal, ws, conn, upstream string) (pending bool, err error) {
	defer derrors.Wrap(&err, "overrides: delete %q of %s in %s", text.Clip(upstream, 64), conn, ws)
	if _, err := access(ctx, s.Pool, p, ws, conn); err != nil {
		return false, err
	}
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := db.LockKey(ctx, tx, "tool_overrides", ws); err != nil {
			return err
		}
		row, err := db.ToolOverrideDelete(ctx, tx, ws, conn, upstream)
		if apperr.CodeOf(err) == apperr.NotFound {
			return apperr.New(apperr.NotFound, "tool %q has no override in this workspace", text.Clip(upstream, 64))
		}
		if err != nil {
			return err
		}
		return db.EventInsert(ctx, tx, &db.Event{EntityType: "tool_override", EntityID: conn,
			Action: "tool_override.deleted", Actor: p.Subject, WorkspaceID: &ws, Payload: eventPayload(row)})
	})
	if err != nil {
		return false, err
	}
	return s.publish(ctx, ws, conn), nil
}

// publish rewrites connection conn's part of ws's catalog (and the index) after a
// committed change, as connections.Service does (catalog.RebuildConnections: O(that
// connection)), and reports whether that failed (logged; the document converges on the
// next rebuild).
func (s *Service) publish(ctx context.Context, ws, conn string) (pending bool) {
	if s.Store == nil {
		return true
	}
	if err := catalog.RebuildConnections(ctx, s.Pool, s.Store, []string{ws}, conn); err != nil {
		s.logger().ErrorContext(ctx, "catalog rebuild failed after an override change; documents are stale until the next rebuild",
			"workspace_id", ws, "err", err)
		return true
	}
	if s.OnCatalogChange != nil {
		s.OnCatalogChange([]string{ws})
	}
	return false
}

func eventPayload(o *db.ToolOverride) map[string]any {
	p := map[string]any{"connectionId": o.ConnectionID, "tool": o.UpstreamName, "hidden": o.Hidden,
		"name": o.ExposedName, "title": o.Title, "description": o.Description}
	if len(o.Annotations) > 0 {
		p["annotations"] = o.Annotations
	}
	return p
}

// Workspace is the workspace an override request acts in (docs/OVERRIDES.md "Scope"): the
// one given, else the token's only workspace, else — for a workspace's own connection
// conn — that connection's workspace when p is in it; "" when none can be told (the
// service then answers VALIDATION_ERROR for workspaceId).
func (s *Service) Workspace(ctx context.Context, p *auth.Principal, given, conn string) string {
	if given != "" {
		return given
	}
	if len(p.Workspaces) == 1 {
		return p.Workspaces[0]
	}
	if !db.IsUUID(conn) {
		return ""
	}
	c, err := db.ConnectionGet(ctx, s.Pool, conn)
	if err != nil || c.WorkspaceID == nil || !p.InWorkspace(*c.WorkspaceID) {
		return ""
	}
	return *c.WorkspaceID
}
