// Package connections is the connection service shared by the marketplace REST function,
// the gateway's built-in tools and the health check: create, install, uninstall, update,
// toggle, delete, test and refresh connections (manual connections and marketplace
// installs), keeping each connection's tool list
// (mcp_connection_tools), the event log and the precomputed catalog (docs/DESIGN.md §6) current.
//
// Every method takes the acting principal and enforces docs/DESIGN.md §8: writes need admin;
// a principal acts only in its own workspaces; global connections are a superuser's.
// Objects of a workspace the principal cannot see answer NOT_FOUND, never FORBIDDEN, so
// their existence does not leak.
package connections

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/agentpack/gateway/shared/urlguard"
)

// Service implements the connection flows. Pool, Store, Upstreams and Guard are required.
type Service struct {
	Pool      *db.Pool
	Store     catalog.Store
	Upstreams *mcpclient.Pool
	Guard     *urlguard.Guard
	Logger    *slog.Logger
	// NewToolsNeedApproval stores every tool that appears on a refresh (the first listing
	// included) as pending: withheld from the gateway until an admin approves it
	// (ApproveTool), like a drifted one (docs/DESIGN.md §6 "Drift"). Set from
	// NEW_TOOLS_NEED_APPROVAL (shared/config); false makes new tools active at once.
	NewToolsNeedApproval bool
	// TestTimeout bounds POST /{id}/test (default 10 s).
	TestTimeout time.Duration
	// OnCatalogChange is called after workspaces' documents were rebuilt (nil = all); the
	// local entry point uses it to invalidate its in-process gateway cache.
	OnCatalogChange func(workspaces []string)
	// Resolver resolves upstream host names on write when the guard refuses private
	// targets (deployed mode, docs/DESIGN.md §9); nil is net.DefaultResolver. Tests inject names.
	Resolver Resolver
	// Auth runs upstream authorization (oauth.go); nil: OAuth modes answer "not configured".
	Auth *upstreamauth.Service
	// AuthClients returns a catalog entry's pre-registered OAuth client (nil, nil: none).
	AuthClients func(ctx context.Context, catalogEntryID string) (*upstreamauth.Client, error)
	// AuthClientPut stores a catalog entry's pre-registered client (secret sealed) through q.
	AuthClientPut func(ctx context.Context, q db.Querier, catalogEntryID string, c *upstreamauth.Client) error
}

func (s *Service) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// Transports (docs/DESIGN.md §3).
const (
	TransportStreamable = "streamable-http"
	TransportSSE        = "sse"
)

// TargetOf is the upstream target of a connection row: its URL, declared transport, the
// transport and protocol version remembered from the last success, and its headers.
func TargetOf(c *db.Connection) mcpclient.Target {
	t := mcpclient.Target{ConnectionID: c.ID, URL: c.URL, Transport: c.TransportType, Headers: c.Headers}
	if c.WorkingTransport != nil {
		t.Remembered = *c.WorkingTransport
	}
	if c.ProtocolVersion != nil {
		t.ProtocolVersion = *c.ProtocolVersion
	}
	return t
}

// ---- validation ----

// validateTarget is the write-time check of an upstream target (docs/DESIGN.md §9): the URL
// guard, the transport, the header schema (D-12) and, in deployed mode, what the host
// name resolves to now (checkResolved). The same checks run again at connect time.
func (s *Service) validateTarget(ctx context.Context, url, transport string, h map[string]string) error {
	if err := s.Guard.CheckURL(url); err != nil {
		return onField(err, "url")
	}
	if err := headers.CheckURLNotRedacted(url); err != nil {
		return onField(err, "url")
	}
	if transport != TransportStreamable && transport != TransportSSE {
		return apperr.New(apperr.Validation, "transportType must be %q or %q", TransportStreamable, TransportSSE).
			WithDetails(map[string]string{"field": "transportType"})
	}
	if err := headers.Validate(h); err != nil {
		return err // details name the header ({"header": name, "headers": [...]})
	}
	return onField(s.checkResolved(ctx, url), "url")
}

func validateName(name string) error {
	if n := len(strings.TrimSpace(name)); n == 0 || n > 100 {
		return apperr.New(apperr.Validation, "name must be 1 to 100 characters").WithDetails(map[string]string{"field": "name"})
	}
	return nil
}

// onField names the request field a validation error is about, as the REST error body's
// details {"field": field} (the console places the message on that field): err's first
// *apperr.Error gets those details when it has none. nil stays nil; other errors are
// returned as they are.
func onField(err error, field string) error {
	if e := apperr.As(err); e != nil && e.Code == apperr.Validation && e.Details == nil {
		e.Details = map[string]string{"field": field}
	}
	return err
}

// ---- authorization ----

// authorizeScope checks that admin p may write a connection of scope (ws, project):
// global needs a superuser; a workspace must be p's; a project must be in it.
func (s *Service) authorizeScope(ctx context.Context, q db.Querier, p *auth.Principal, ws, project *string) error {
	if err := auth.RequireAdmin(p); err != nil {
		return err
	}
	if ws == nil {
		if project != nil {
			return apperr.New(apperr.Validation, "projectId needs workspaceId")
		}
		if !p.IsSuperuser() {
			return apperr.New(apperr.Forbidden, "global connections require the superuser role")
		}
		return nil
	}
	if !db.IsUUID(*ws) || !p.InWorkspace(*ws) {
		return apperr.New(apperr.NotFound, "workspace not found")
	}
	logx.Annotate(ctx, logx.FieldWorkspace, *ws)
	if _, err := db.WorkspaceGet(ctx, q, *ws); err != nil {
		if apperr.CodeOf(err) != apperr.NotFound {
			return err // an outage is UNAVAILABLE, not a missing workspace
		}
		return apperr.New(apperr.NotFound, "workspace not found")
	}
	if project != nil {
		pr, err := db.ProjectGet(ctx, q, *project)
		if err != nil && apperr.CodeOf(err) != apperr.NotFound {
			return err
		}
		if err != nil || pr.WorkspaceID != *ws {
			return apperr.New(apperr.InvalidReference, "project is not in this workspace")
		}
	}
	return nil
}

// visible loads connection id if p may see it (its workspace, or global), else NOT_FOUND.
func (s *Service) visible(ctx context.Context, q db.Querier, p *auth.Principal, id string) (*db.Connection, error) {
	c, err := db.ConnectionGet(ctx, q, id)
	if err != nil {
		return nil, err
	}
	if c.WorkspaceID != nil && !p.InWorkspace(*c.WorkspaceID) {
		return nil, apperr.New(apperr.NotFound, "not found")
	}
	if c.WorkspaceID != nil {
		logx.Annotate(ctx, logx.FieldWorkspace, *c.WorkspaceID)
	}
	return c, nil
}

// writable loads connection id for a write by p: visible, p admin, and a global
// connection only for a superuser.
func (s *Service) writable(ctx context.Context, q db.Querier, p *auth.Principal, id string) (*db.Connection, error) {
	if err := auth.RequireAdmin(p); err != nil {
		return nil, err
	}
	c, err := s.visible(ctx, q, p, id)
	if err != nil {
		return nil, err
	}
	if c.WorkspaceID == nil && !p.IsSuperuser() {
		return nil, apperr.New(apperr.Forbidden, "global connections require the superuser role")
	}
	return c, nil
}

// ---- events and catalog ----

func logEvent(ctx context.Context, q db.Querier, p *auth.Principal, action string, c *db.Connection, extra map[string]any) error {
	payload := map[string]any{"name": c.Name, "url": headers.RedactURL(c.URL), "transportType": c.TransportType,
		"source": c.Source, "headers": headers.Redact(c.Headers)}
	if c.CatalogEntryID != nil {
		payload["catalogEntryId"] = *c.CatalogEntryID
	}
	for k, v := range extra {
		payload[k] = v
	}
	return db.EventInsert(ctx, q, &db.Event{EntityType: "mcp_connection", EntityID: c.ID, Action: action,
		Actor: p.Subject, WorkspaceID: c.WorkspaceID, Payload: payload})
}

// publish rebuilds the catalog documents a committed change affects and reports whether
// that failed. The change is already committed (Postgres is the source of truth), so a
// failed rebuild does not fail the request — a 5xx would make a client retry a write
// that happened (an install would then answer 409). It is logged, the answer says
// catalogPending, and the documents converge on the next change or the health check's
// reconcile pass (≤ 30 min). ids are the connections that changed: only their parts and
// the index are rewritten (catalog.RebuildConnections); none rebuilds the documents whole.
func (s *Service) publish(ctx context.Context, ws *string, ids ...string) (pending bool) {
	if err := s.rebuild(ctx, ws, ids...); err != nil {
		s.logger().ErrorContext(ctx, "catalog rebuild failed after a committed change; documents are stale until the next rebuild",
			"workspace_id", ws, "err", err)
		return true
	}
	return false
}

// PublishWorkspace rewrites workspace ws's catalog document from Postgres (a change to
// its settings rather than its connections: its rate limits) and tells OnCatalogChange.
// Errors are catalog.Rebuild's.
func (s *Service) PublishWorkspace(ctx context.Context, ws string) (err error) {
	defer derrors.Wrap(&err, "connections: publish %s", ws)
	return s.rebuild(ctx, &ws)
}

// rebuild rewrites the catalog documents a change to connections ids of workspace ws (nil
// = global) affects, then tells OnCatalogChange.
func (s *Service) rebuild(ctx context.Context, ws *string, ids ...string) error {
	list := catalog.ScopeWorkspaces(ws)
	if err := catalog.RebuildConnections(ctx, s.Pool, s.Store, list, ids...); err != nil {
		return err
	}
	if s.OnCatalogChange != nil {
		s.OnCatalogChange(list)
	}
	return nil
}

// ---- refresh ----

// RefreshResult is what a connect-and-list produced.
type RefreshResult struct {
	OK        bool           `json:"success"`
	ToolCount int            `json:"toolCount"`
	Error     string         `json:"error,omitempty"`
	Sync      *db.SyncResult `json:"changes,omitempty"`
	Info      mcpclient.Info `json:"-"`
	// Failure says where a failed connect failed (stage, HTTP status, hint); nil on success or when the failure was not the upstream's (e.g. a refused URL).
	Failure *mcpclient.Failure `json:"-"`
}

// Refresh connects to connection c's upstream, lists its tools, stores them
// (ConnectionToolsSync: frozen names, drift detection) with its MCP Apps views (the ui://
// resources it lists, when it declares resources; uiResources), records the connect state on the
// connection and logs drift as an event. A failed connect is recorded, not returned: the
// error return is for database failures only.
func (s *Service) Refresh(ctx context.Context, actor string, c *db.Connection) (_ *RefreshResult, err error) {
	defer derrors.Wrap(&err, "connections: refresh %s", c.ID)
	subject := actor
	if actor == HealthCheckActor {
		subject = c.CreatedBy // an oauth_per_user connection is probed with its installer's grant
	}
	target := s.TargetFor(ctx, c, subject)
	tools, info, lerr := s.Upstreams.ListTools(ctx, target)
	res := &RefreshResult{Info: info}
	if lerr != nil {
		// The message may quote the upstream (a JSON-RPC error text): an upstream that echoes
		// the API key it was sent must not get it into last_error, event_log or the answer.
		res.Error = headers.Scrub(apperr.Public(lerr).Message, c.URL, c.Headers)
		if f := mcpclient.FailureOf(lerr); f != nil {
			res.Failure = &mcpclient.Failure{Stage: f.Stage, HTTPStatus: f.HTTPStatus, Hint: headers.Scrub(f.Hint, c.URL, c.Headers)}
		}
		s.logger().WarnContext(ctx, "upstream connect failed", "connection_id", c.ID, "err", lerr)
		err := db.ConnectionRecordState(context.WithoutCancel(ctx), s.Pool, c.ID, db.ConnectionState{OK: false, Error: res.Error})
		return res, err
	}
	defs := ToolDefs(tools)
	views, viewsOK := s.uiResources(ctx, target, info, c.ID)
	skills, skillsOK := s.skillsSummary(ctx, target, info, c.ID)
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := db.LockKey(ctx, tx, "tools", c.ID); err != nil {
			return err
		}
		sync, err := db.ConnectionToolsSync(ctx, tx, c.ID, c.Handle, defs, s.NewToolsNeedApproval)
		if err != nil {
			return err
		}
		res.Sync = sync
		if len(sync.Drifted) > 0 {
			if err := db.EventInsert(ctx, tx, &db.Event{EntityType: "mcp_connection", EntityID: c.ID,
				Action: "mcp.tool_drift", Actor: actor, WorkspaceID: c.WorkspaceID,
				Payload: map[string]any{"drifted": sync.Drifted}}); err != nil {
				return err
			}
		}
		if err := db.ConnectionSchemaNotesSet(ctx, tx, c.ID, schemaNotes(info)); err != nil {
			return err
		}
		if viewsOK {
			if err := db.ConnectionUIResourcesSet(ctx, tx, c.ID, views); err != nil {
				return err
			}
		}
		if skillsOK {
			if err := db.ConnectionSkillsSet(ctx, tx, c.ID, skills); err != nil {
				return err
			}
		}
		return db.ConnectionRecordState(ctx, tx, c.ID, db.ConnectionState{OK: true,
			WorkingTransport: info.Transport, ProtocolVersion: info.ProtocolVersion, Capabilities: info.Capabilities})
	})
	if err != nil {
		return nil, err
	}
	res.OK, res.ToolCount = true, len(defs)
	return res, nil
}
