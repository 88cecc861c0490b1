package connections

import (
	"context"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/mcpclient"
)

// schemaNotes lists what a successful listing did to the upstream's tool schemas, in the order the pool reported them: every tool the pool left out
// (Info.Dropped) as db.SchemaDropped, and every tool served with a normalised
// inputSchema (Info.Normalized, mcpclient.NormalizeToolSchema) as db.SchemaNormalized.
func schemaNotes(info mcpclient.Info) []db.ToolSchemaNote {
	notes := make([]db.ToolSchemaNote, 0, len(info.Dropped)+len(info.Normalized))
	for _, d := range info.Normalized {
		notes = append(notes, db.ToolSchemaNote{Name: d.Name, Action: db.SchemaNormalized, Reason: d.Reason})
	}
	for _, d := range info.Dropped {
		notes = append(notes, db.ToolSchemaNote{Name: d.Name, Action: db.SchemaDropped, Reason: d.Reason})
	}
	return notes
}

// SchemaNotes returns what connection id's last successful listing did to its tools'
// input schemas: normalised (served) or dropped (not served), with the reason (admin;
// GET /api/mcp-connections/{id}/tools). Errors: FORBIDDEN, NOT_FOUND, UNAVAILABLE.
func (s *Service) SchemaNotes(ctx context.Context, p *auth.Principal, id string) (_ []db.ToolSchemaNote, err error) {
	defer derrors.Wrap(&err, "connections: schema notes of %s", id)
	if err := auth.RequireAdmin(p); err != nil {
		return nil, err
	}
	c, err := s.visible(ctx, s.Pool, p, id)
	if err != nil {
		return nil, err
	}
	return db.ConnectionSchemaNotesGet(ctx, s.Pool, c.ID)
}
