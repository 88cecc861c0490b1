package connections

import (
	"context"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/mcpclient"
)

// schemaNotes lists what a successful listing did to the upstream's tool schemas (issue 14
// item 9), in the order the pool reported them: every tool the pool left out
// (Info.Dropped) as db.SchemaDropped. Tools served with a normalised inputSchema
// (mcpclient.NormalizeToolSchema reported changed) are db.SchemaNormalized once the pool
// reports them in Info (see the lead's list path).
func schemaNotes(info mcpclient.Info) []db.ToolSchemaNote {
	notes := make([]db.ToolSchemaNote, 0, len(info.Dropped))
	for _, d := range info.Dropped {
		notes = append(notes, db.ToolSchemaNote{Name: d.Name, Action: db.SchemaDropped, Reason: d.Reason})
	}
	return notes
}

// SchemaNotes returns what connection id's last successful listing did to its tools'
// input schemas: normalised (served) or dropped (not served), with the reason (admin;
// GET /api/mcp-connections/{id}/tools). Errors: FORBIDDEN, NOT_FOUND, UNAVAILABLE.
func (s *Service) SchemaNotes(ctx context.Context, p *auth.Principal, id string) ([]db.ToolSchemaNote, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	c, err := s.visible(ctx, s.Pool, p, id)
	if err != nil {
		return nil, err
	}
	return db.ConnectionSchemaNotesGet(ctx, s.Pool, c.ID)
}
