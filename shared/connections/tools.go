package connections

import (
	"context"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/text"
)

// Tools returns connection id's stored tools with their drift status (admin), ordered by
// upstream name. Errors: FORBIDDEN, NOT_FOUND.
func (s *Service) Tools(ctx context.Context, p *auth.Principal, id string) (_ []db.ConnectionTool, err error) {
	defer derrors.Wrap(&err, "connections: tools of %s", id)
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
	defer derrors.Wrap(&err, "connections: approve tool %q of %s", tool, id)
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
	s.publish(ctx, c.WorkspaceID, c.ID)
	return t, nil
}
