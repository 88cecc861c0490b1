package connections

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/headers"
	"github.com/agentpack/gateway/shared/text"
)

// DefaultTestTimeout is the budget of Test (seed: POST /:id/test, timeout 10 s).
const DefaultTestTimeout = 10 * time.Second

// MarshalJSON writes r as the seed's test answer {success, toolCount?, error?}, plus the
// tool-list changes and the transport that worked when there are any, and on a failure
// where it failed: stage (dns, connect, tls, http, protocol), httpStatus when the upstream
// answered, and a hint (issue 14 item 8).
func (r RefreshResult) MarshalJSON() ([]byte, error) {
	v := struct {
		Success    bool           `json:"success"`
		ToolCount  *int           `json:"toolCount,omitempty"`
		Error      string         `json:"error,omitempty"`
		Stage      string         `json:"stage,omitempty"`
		HTTPStatus int            `json:"httpStatus,omitempty"`
		Hint       string         `json:"hint,omitempty"`
		Transport  string         `json:"transport,omitempty"`
		Changes    *db.SyncResult `json:"changes,omitempty"`
		Dropped    []droppedView  `json:"droppedTools,omitempty"`
	}{Success: r.OK, Error: r.Error}
	if !r.OK && r.Failure != nil {
		v.Stage, v.HTTPStatus, v.Hint = r.Failure.Stage, r.Failure.HTTPStatus, r.Failure.Hint
	}
	if r.Sync != nil && r.Sync.Changed() {
		v.Changes = r.Sync
	}
	if r.OK {
		n := r.ToolCount
		v.ToolCount = &n
		v.Transport = r.Info.Transport
	}
	for _, d := range r.Info.Dropped {
		v.Dropped = append(v.Dropped, droppedView{Name: d.Name, Reason: d.Reason})
	}
	return json.Marshal(v)
}

type droppedView struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// lockConnection serialises writes to connection id (update, toggle, delete).
func lockConnection(ctx context.Context, tx db.Tx, id string) error {
	return db.LockKey(ctx, tx, "connection", id)
}

// ---- update ----

// UpdateInput is the body of PUT /api/mcp-connections/{id}: a partial update, absent
// fields are left as they are. Headers replaces the whole header map ({} clears it); a
// value equal to headers.RedactedValue ("[REDACTED]") keeps the stored value of that name,
// so a client can send back what GET returned. Scope and source cannot change.
type UpdateInput struct {
	Name          *string           `json:"name,omitempty"`
	URL           *string           `json:"url,omitempty"`
	TransportType *string           `json:"transportType,omitempty"`
	Headers       map[string]string `json:"headers,omitempty"`
	Enabled       *bool             `json:"enabled,omitempty"`
}

// Update changes connection id (admin; seed "PUT /:id": disconnect, and reconnect when
// enabled). New URL, transport and headers pass the same checks as on create (docs/DESIGN.md §9);
// changing URL or transport forgets the remembered transport. It logs
// mcp.connection_updated, drops the cached upstream session, connects again when the
// connection is enabled (a failure is recorded in Outcome.Connect, not returned) and
// rebuilds the affected catalog documents.
// Errors: VALIDATION_ERROR, FORBIDDEN (member; global without superuser), NOT_FOUND
// (unknown or another workspace's), UNAVAILABLE.
func (s *Service) Update(ctx context.Context, p *auth.Principal, id string, in UpdateInput) (_ *Outcome, err error) {
	defer wrapErr(&err, "connections: update %s", id)
	if err := auth.RequireAdmin(p); err != nil {
		return nil, err
	}
	if in.Name != nil {
		if err := validateName(*in.Name); err != nil {
			return nil, err
		}
		n := strings.TrimSpace(*in.Name)
		in.Name = &n
	}
	var c *db.Connection
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := lockConnection(ctx, tx, id); err != nil {
			return err
		}
		old, err := s.writable(ctx, tx, p, id)
		if err != nil {
			return err
		}
		u := &db.ConnectionUpdate{Name: in.Name, URL: in.URL, TransportType: in.TransportType, Enabled: in.Enabled}
		changed := []string{}
		url, transport, h := old.URL, old.TransportType, old.Headers
		if in.URL != nil {
			url = *in.URL
			changed = append(changed, "url")
		}
		if in.TransportType != nil {
			transport = *in.TransportType
			changed = append(changed, "transportType")
		}
		if in.Headers != nil {
			if h, err = mergeRedacted(old.Headers, in.Headers); err != nil {
				return err
			}
			u.Headers = h
			changed = append(changed, "headers")
		}
		// Check what changes (a header edit is not refused for a URL that an older,
		// laxer policy accepted; the connect-time checks cover the whole target).
		if in.URL != nil || in.TransportType != nil {
			if err := s.validateTarget(ctx, url, transport, nil); err != nil {
				return err
			}
		}
		if in.Headers != nil {
			if err := headers.Validate(h); err != nil {
				return err
			}
		}
		if in.Name != nil {
			changed = append(changed, "name")
		}
		if in.Enabled != nil {
			changed = append(changed, "enabled")
		}
		if c, err = db.ConnectionUpdateByID(ctx, tx, id, u); err != nil {
			return err
		}
		if (in.URL != nil && url != old.URL) || (in.TransportType != nil && transport != old.TransportType) {
			// Another server now answers: the old server's tool definitions (and their
			// approvals) must not stay advertised while calls go to the new one. The
			// refresh below lists the new server's tools; names stay deterministic.
			if err := db.ConnectionToolsDelete(ctx, tx, id); err != nil {
				return err
			}
			changed = append(changed, "tools_cleared")
		}
		return logEvent(ctx, tx, p, "mcp.connection_updated", c, map[string]any{"changed": changed})
	})
	if err != nil {
		return nil, err
	}
	s.Upstreams.Disconnect(c.ID)
	return s.afterWrite(ctx, p, c)
}

// mergeRedacted returns next with every "[REDACTED]" value replaced by the stored value of
// the same name (case-insensitive); a redacted value for a name not stored is refused.
func mergeRedacted(old, next map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(next))
	for name, v := range next {
		if v == headers.RedactedValue {
			found := false
			for on, ov := range old {
				if strings.EqualFold(on, name) {
					v, found = ov, true
					break
				}
			}
			if !found {
				return nil, apperr.New(apperr.Validation, "headers: %q has the placeholder value %s but no stored value to keep",
					text.Clip(name, 64), headers.RedactedValue).WithDetails(map[string]string{"header": text.Clip(name, 64)})
			}
		}
		out[name] = v
	}
	return out, nil
}

// ---- toggle ----

// Toggle flips connection id's enabled flag (admin; seed "POST /:id/toggle"), logs
// mcp.connection_toggled, drops the cached session, connects again when now enabled (a
// failure is recorded, not returned) and rebuilds the catalog: a disabled connection's
// tools leave the gateway, its tool rows (frozen names, approvals) are kept.
// Errors: as Update.
func (s *Service) Toggle(ctx context.Context, p *auth.Principal, id string) (_ *Outcome, err error) {
	defer wrapErr(&err, "connections: toggle %s", id)
	var c *db.Connection
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := auth.RequireAdmin(p); err != nil {
			return err
		}
		if err := lockConnection(ctx, tx, id); err != nil {
			return err
		}
		old, err := s.writable(ctx, tx, p, id)
		if err != nil {
			return err
		}
		enabled := !old.Enabled
		if c, err = db.ConnectionUpdateByID(ctx, tx, id, &db.ConnectionUpdate{Enabled: &enabled}); err != nil {
			return err
		}
		return logEvent(ctx, tx, p, "mcp.connection_toggled", c, map[string]any{"enabled": enabled})
	})
	if err != nil {
		return nil, err
	}
	s.Upstreams.Disconnect(c.ID)
	return s.afterWrite(ctx, p, c)
}

// ---- delete and uninstall ----

// Delete hard-deletes connection id (admin; seed "DELETE /:id"): its tools and pins go
// with it, a marketplace install's entry loses one install, mcp.connection_deleted is
// logged, the catalog is rebuilt and the cached session closed. Marketplace installs may
// be deleted here too (CRUD does not tell them apart, seed).
// Errors: FORBIDDEN, NOT_FOUND, UNAVAILABLE.
func (s *Service) Delete(ctx context.Context, p *auth.Principal, id string) (err error) {
	defer wrapErr(&err, "connections: delete %s", id)
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
	s.publish(ctx, c.WorkspaceID)
	s.Upstreams.Disconnect(c.ID)
	return nil
}

// Uninstall runs the seed's uninstall flow for catalog entry entryID in workspace ws
// (admin of ws): find the workspace's marketplace install of the entry (NOT_FOUND when
// there is none; a manual connection to the entry is not an install), drop its tools,
// hard-delete it, uncount the install, log mcp.uninstalled, rebuild ws's catalog and
// disconnect. Re-installing later creates a new connection (new id).
// Errors: VALIDATION_ERROR (ws not a UUID), FORBIDDEN, NOT_FOUND (entry, workspace not
// the principal's, or not installed), UNAVAILABLE.
func (s *Service) Uninstall(ctx context.Context, p *auth.Principal, entryID, ws string) (err error) {
	defer wrapErr(&err, "connections: uninstall %s from %s", entryID, ws)
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

// ---- test, refresh, approve ----

// Test connects to connection id afresh (admin; seed "POST /:id/test") within
// TestTimeout (default 10 s), lists and stores its tools (drift detection included),
// records the outcome on the connection, logs mcp.connection_tested and rebuilds the
// catalog. An upstream failure is the result's Error (success false), not an error.
// Errors: FORBIDDEN, NOT_FOUND, UNAVAILABLE (database).
func (s *Service) Test(ctx context.Context, p *auth.Principal, id string) (_ *RefreshResult, err error) {
	defer wrapErr(&err, "connections: test %s", id)
	tctx, cancel := context.WithTimeout(ctx, s.testBudget())
	defer cancel()
	return s.probe(tctx, p, id, true, "mcp.connection_tested")
}

// testBudget is Test's time limit: TestTimeout, or DefaultTestTimeout when it is not positive.
func (s *Service) testBudget() time.Duration {
	if s.TestTimeout <= 0 {
		return DefaultTestTimeout
	}
	return s.TestTimeout
}

// RefreshByID re-lists connection id's tools on its cached (or a new) session (admin;
// POST /api/mcp-connections/{id}/refresh), stores them with drift detection (docs/DESIGN.md §6:
// a changed definition is withheld until approved, and logged as mcp.tool_drift), logs
// mcp.connection_refreshed and rebuilds the catalog. Errors: as Test.
func (s *Service) RefreshByID(ctx context.Context, p *auth.Principal, id string) (_ *RefreshResult, err error) {
	defer wrapErr(&err, "connections: refresh %s", id)
	return s.probe(ctx, p, id, false, "mcp.connection_refreshed")
}

func (s *Service) probe(ctx context.Context, p *auth.Principal, id string, fresh bool, action string) (*RefreshResult, error) {
	c, err := s.writable(ctx, s.Pool, p, id)
	if err != nil {
		return nil, err
	}
	if fresh {
		s.Upstreams.Disconnect(c.ID)
		if id := s.TargetFor(ctx, c, p.Subject).ConnectionID; id != c.ID {
			s.Upstreams.Disconnect(id) // the caller's own session of an oauth_per_user connection
		}
	}
	res, err := s.Refresh(ctx, p.Subject, c)
	if !c.Enabled {
		s.Upstreams.Disconnect(c.ID) // a disabled connection keeps no session
	}
	if err != nil {
		return nil, err
	}
	wctx := context.WithoutCancel(ctx) // the budget was for the upstream, not the bookkeeping
	extra := map[string]any{"success": res.OK}
	if res.OK {
		extra["toolCount"] = res.ToolCount
		if res.Sync != nil && res.Sync.Changed() {
			extra["changes"] = res.Sync
		}
	} else {
		extra["error"] = res.Error
	}
	if err := logEvent(wctx, s.Pool, p, action, c, extra); err != nil {
		return nil, err
	}
	s.publish(wctx, c.WorkspaceID)
	return res, nil
}

// RefreshAndPublish is Refresh followed by a rebuild of the affected catalog documents
// when the tool list or the remembered transport changed: what the health check calls
// for an installed connection (docs/DESIGN.md §6, §9a). actor names the caller in events
// (e.g. "healthcheck"). Errors: database failures only.
func (s *Service) RefreshAndPublish(ctx context.Context, actor string, c *db.Connection) (*RefreshResult, error) {
	res, err := s.Refresh(ctx, actor, c)
	if err != nil {
		return nil, err
	}
	transportChanged := res.OK && (c.WorkingTransport == nil || *c.WorkingTransport != res.Info.Transport)
	if (res.Sync != nil && res.Sync.Changed()) || transportChanged {
		s.publish(ctx, c.WorkspaceID)
	}
	return res, nil
}

// Tools returns connection id's stored tools with their drift status (admin), ordered by
// upstream name. Errors: FORBIDDEN, NOT_FOUND.
func (s *Service) Tools(ctx context.Context, p *auth.Principal, id string) (_ []db.ConnectionTool, err error) {
	defer wrapErr(&err, "connections: tools of %s", id)
	if err := auth.RequireAdmin(p); err != nil {
		return nil, err
	}
	c, err := s.visible(ctx, s.Pool, p, id)
	if err != nil {
		return nil, err
	}
	return db.ConnectionToolList(ctx, s.Pool, c.ID)
}

// ApproveTool accepts the current definition of connection id's upstream tool (admin;
// POST /api/mcp-connections/{id}/tools/{name}/approve, docs/DESIGN.md §6): a drifted or pending
// tool becomes active and returns to the gateway. Approving an active tool changes
// nothing and succeeds. It logs mcp.tool_approved and rebuilds the catalog.
// Errors: FORBIDDEN, NOT_FOUND (connection or tool), UNAVAILABLE.
func (s *Service) ApproveTool(ctx context.Context, p *auth.Principal, id, tool string) (_ *db.ConnectionTool, err error) {
	defer wrapErr(&err, "connections: approve tool %q of %s", tool, id)
	var c *db.Connection
	var t *db.ConnectionTool
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		var err error
		if c, err = s.writable(ctx, tx, p, id); err != nil {
			return err
		}
		if err := db.LockKey(ctx, tx, "tools", c.ID); err != nil {
			return err
		}
		before, err := db.ConnectionToolGet(ctx, tx, c.ID, tool)
		if apperr.CodeOf(err) == apperr.NotFound {
			return apperr.New(apperr.NotFound, "connection has no tool %q", text.Clip(tool, 64))
		}
		if err != nil {
			return err
		}
		if t, err = db.ConnectionToolApprove(ctx, tx, c.ID, tool); err != nil {
			return err
		}
		return db.EventInsert(ctx, tx, &db.Event{EntityType: "mcp_connection", EntityID: c.ID,
			Action: "mcp.tool_approved", Actor: p.Subject, WorkspaceID: c.WorkspaceID,
			Payload: map[string]any{"tool": tool, "exposedName": t.ExposedName, "previousStatus": before.Status,
				"digest": t.ApprovedDigest}})
	})
	if err != nil {
		return nil, err
	}
	s.publish(ctx, c.WorkspaceID)
	return t, nil
}

// ---- statuses ----

// Status is one connection's connect state (seed "GET /statuses"): Live* come from this
// process's session cache (a Lambda container sees only the sessions it made), the rest
// is the last state recorded in Postgres.
type Status struct {
	ConnectionID        string         `json:"connectionId"`
	Name                string         `json:"name"`
	Handle              string         `json:"handle"`
	Source              string         `json:"source"`
	Enabled             bool           `json:"enabled"`
	WorkspaceID         *string        `json:"workspaceId"`
	Live                bool           `json:"live"`
	LiveTransport       string         `json:"liveTransport,omitempty"`
	LiveProtocolVersion string         `json:"liveProtocolVersion,omitempty"`
	ConnectedAt         *time.Time     `json:"connectedAt,omitempty"`
	LastUsedAt          *time.Time     `json:"lastUsedAt,omitempty"`
	LastConnectedAt     *time.Time     `json:"lastConnectedAt"`
	LastError           *string        `json:"lastError"`
	WorkingTransport    *string        `json:"workingTransport"`
	Tools               map[string]int `json:"tools"` // count per status: active, drifted, pending
	// Authorization is the upstream authorization of an OAuth connection (the caller's own
	// grant for oauth_per_user): authorized | required | expired, who and when.
	Authorization *AuthorizationState `json:"authorization,omitempty"`
}

// Statuses returns the status of every connection p may see (admin), optionally narrowed
// to workspace ws. Errors: FORBIDDEN, NOT_FOUND (ws not p's).
func (s *Service) Statuses(ctx context.Context, p *auth.Principal, ws string) ([]Status, error) {
	if err := auth.RequireAdmin(p); err != nil {
		return nil, err
	}
	conns, err := s.List(ctx, p, ws)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(conns))
	for i := range conns {
		ids[i] = conns[i].ID
	}
	counts, err := db.ConnectionToolCounts(ctx, s.Pool, ids)
	if err != nil {
		return nil, err
	}
	live := map[string]int{}
	all := s.Upstreams.Status()
	for i, st := range all {
		live[st.ConnectionID] = i
	}
	out := make([]Status, 0, len(conns))
	for _, c := range conns {
		st := Status{ConnectionID: c.ID, Name: c.Name, Handle: c.Handle, Source: c.Source, Enabled: c.Enabled,
			WorkspaceID: c.WorkspaceID, LastConnectedAt: c.LastConnectedAt, LastError: c.LastError,
			WorkingTransport: c.WorkingTransport, Tools: map[string]int{db.ToolActive: 0, db.ToolDrifted: 0, db.ToolPending: 0}}
		for k, n := range counts[c.ID] {
			st.Tools[k] = n
		}
		if st.Authorization, err = s.AuthorizationOf(ctx, &c, p.Subject); err != nil {
			return nil, err
		}
		if i, ok := live[c.ID]; ok {
			l := all[i]
			st.Live, st.LiveTransport, st.LiveProtocolVersion = true, l.Info.Transport, l.Info.ProtocolVersion
			st.ConnectedAt, st.LastUsedAt = &l.ConnectedAt, &l.LastUsedAt
		}
		out = append(out, st)
	}
	return out, nil
}
