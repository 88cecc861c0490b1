package db

import (
	"context"
	"encoding/json"

	"github.com/agentpack/gateway/shared/tooldrift"
)

const toolCols = `connection_id, upstream_name, exposed_name, title, description, input_schema, output_schema,
	annotations, definition, definition_digest, approved_digest, status, first_listed_at, listed_at`

// ToolDef is an upstream tool definition as listed (the input of ConnectionToolsSync).
type ToolDef struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage // nil when absent
	Annotations  json.RawMessage // nil when absent
	// Definition is the upstream's whole tool object as listed (nil when unknown).
	Definition json.RawMessage
}

// Digest is the definition digest of d: tooldrift.Digest (docs/DESIGN.md §6).
func (d *ToolDef) Digest() string { return tooldrift.Digest(d.definition()) }

func (d *ToolDef) definition() tooldrift.Definition {
	return tooldrift.Definition{Name: d.Name, Title: d.Title, Description: d.Description,
		InputSchema: d.InputSchema, OutputSchema: d.OutputSchema, Annotations: d.Annotations, Whole: d.Definition}
}

// SyncResult says what ConnectionToolsSync changed: upstream names added, removed,
// drifted (definition changed from the approved one: withheld until approved) and
// restored (back to the approved definition).
type SyncResult struct {
	Added    []string `json:"added,omitempty"`
	Removed  []string `json:"removed,omitempty"`
	Drifted  []string `json:"drifted,omitempty"`
	Restored []string `json:"restored,omitempty"`
}

// Changed reports whether the exposed tool set or any definition changed.
func (r *SyncResult) Changed() bool {
	return len(r.Added)+len(r.Removed)+len(r.Drifted)+len(r.Restored) > 0
}

// ConnectionToolsSync stores defs as connection id's tool list (docs/DESIGN.md §3, §6), as
// tooldrift.Plan decides: existing tools keep their exposed name forever (frozen); new
// tools get names.Unique(handle, …) and status active, or pending when newNeedApproval;
// a tool whose digest differs from its approved digest becomes drifted (withheld from the
// gateway) and one whose digest is back to the approved one becomes active again; tools
// no longer listed are deleted. Call it inside a transaction holding the connection's
// lock (LockKey "tools", id).
func ConnectionToolsSync(ctx context.Context, q Querier, id, handle string, defs []ToolDef, newNeedApproval bool) (*SyncResult, error) {
	existing, err := ConnectionToolList(ctx, q, id)
	if err != nil {
		return nil, err
	}
	stored := make([]tooldrift.Stored, len(existing))
	for i, t := range existing {
		stored[i] = tooldrift.Stored{UpstreamName: t.UpstreamName, ExposedName: t.ExposedName, Status: t.Status,
			DefinitionDigest: t.DefinitionDigest, ApprovedDigest: t.ApprovedDigest}
	}
	listed := make([]tooldrift.Listed, len(defs))
	for i := range defs {
		listed[i] = tooldrift.Listed{Name: defs[i].Name, Digest: defs[i].Digest()}
	}
	plan := tooldrift.Plan(stored, listed, handle, newNeedApproval)
	for _, w := range plan.Writes {
		d, digest := &defs[w.Index], listed[w.Index].Digest
		if w.New {
			_, err = q.Exec(ctx, `INSERT INTO mcp_connection_tools
				(connection_id, upstream_name, exposed_name, title, description, input_schema, output_schema, annotations,
				 definition_digest, approved_digest, status, definition)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
				id, d.Name, w.ExposedName, d.Title, d.Description, []byte(d.InputSchema),
				nullJSON(d.OutputSchema), nullJSON(d.Annotations), digest, w.ApprovedDigest, w.Status, nullText(d.Definition))
		} else {
			_, err = q.Exec(ctx, `UPDATE mcp_connection_tools SET title = $3, description = $4, input_schema = $5,
				output_schema = $6, annotations = $7, definition_digest = $8, status = $9, definition = $10, listed_at = now()
				WHERE connection_id = $1 AND upstream_name = $2`,
				id, d.Name, d.Title, d.Description, []byte(d.InputSchema), nullJSON(d.OutputSchema),
				nullJSON(d.Annotations), digest, w.Status, nullText(d.Definition))
		}
		if err != nil {
			return nil, Interpret(err)
		}
	}
	for _, name := range plan.Deletes {
		if _, err := q.Exec(ctx, `DELETE FROM mcp_connection_tools WHERE connection_id = $1 AND upstream_name = $2`,
			id, name); err != nil {
			return nil, Interpret(err)
		}
	}
	return &SyncResult{Added: plan.Added, Removed: plan.Removed, Drifted: plan.Drifted, Restored: plan.Restored}, nil
}

func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return []byte(raw)
}

// nullText passes a json column's value as text, so Postgres stores the bytes as sent.
func nullText(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return string(raw)
}

// ConnectionToolList returns connection id's tools ordered by upstream name.
func ConnectionToolList(ctx context.Context, q Querier, id string) ([]ConnectionTool, error) {
	return collect[ConnectionTool](ctx, q, `SELECT `+toolCols+` FROM mcp_connection_tools
		WHERE connection_id = $1 ORDER BY upstream_name`, id)
}

// ConnectionToolApprove accepts the current definition of connection id's tool upstream
// (drifted or pending → active) and returns the row; NOT_FOUND when absent.
func ConnectionToolApprove(ctx context.Context, q Querier, id, upstream string) (*ConnectionTool, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	return one[ConnectionTool](ctx, q, `UPDATE mcp_connection_tools SET approved_digest = definition_digest, status = 'active'
		WHERE connection_id = $1 AND upstream_name = $2 RETURNING `+toolCols, id, upstream)
}

// ConnectionToolsDelete drops every tool of connection id (uninstall, disable).
func ConnectionToolsDelete(ctx context.Context, q Querier, id string) error {
	_, err := q.Exec(ctx, `DELETE FROM mcp_connection_tools WHERE connection_id = $1`, id)
	return Interpret(err)
}

// ConnectionToolsVisible returns the active tools of every enabled connection visible in
// workspace ws (global and ws's own), ordered by exposed name: what the catalog document
// of ws lists.
func ConnectionToolsVisible(ctx context.Context, q Querier, ws string) ([]ConnectionTool, error) {
	return collect[ConnectionTool](ctx, q, `SELECT t.connection_id, t.upstream_name, t.exposed_name, t.title,
		t.description, t.input_schema, t.output_schema, t.annotations, t.definition, t.definition_digest, t.approved_digest,
		t.status, t.first_listed_at, t.listed_at
		FROM mcp_connection_tools t JOIN mcp_connections c ON c.id = t.connection_id
		WHERE c.enabled AND (c.workspace_id IS NULL OR c.workspace_id = $1) AND t.status = 'active'
		ORDER BY t.exposed_name`, ws)
}
