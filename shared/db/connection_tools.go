package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/agentpack/gateway/shared/names"
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

// Digest is the definition digest of d (docs/DESIGN.md §6): hex SHA-256 of the canonical JSON of
// the whole definition when known — every member, icons, execution and _meta included —
// else of name, title, description, schemas and annotations (object keys sorted, so
// formatting and key order do not count as a change).
func (d *ToolDef) Digest() string {
	canon := func(raw json.RawMessage) any {
		if len(raw) == 0 {
			return nil
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return string(raw)
		}
		return v
	}
	if v := canon(d.Definition); v != nil {
		b, _ := json.Marshal(v)
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:])
	}
	b, _ := json.Marshal(map[string]any{
		"name": d.Name, "title": d.Title, "description": d.Description,
		"inputSchema": canon(d.InputSchema), "outputSchema": canon(d.OutputSchema),
		"annotations": canon(d.Annotations),
	})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
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

// ConnectionToolsSync stores defs as connection id's tool list (docs/DESIGN.md §3, §6). Existing
// tools keep their exposed name forever (frozen); new tools get names.Exposed(handle, …)
// and status active, or pending when newNeedApproval; a tool whose digest differs from
// its approved digest becomes drifted (withheld from the gateway) and one whose digest is
// back to the approved one becomes active again; tools no longer listed are deleted.
// Call it inside a transaction holding the connection's lock (LockKey "tools", id).
func ConnectionToolsSync(ctx context.Context, q Querier, id, handle string, defs []ToolDef, newNeedApproval bool) (*SyncResult, error) {
	existing, err := ConnectionToolList(ctx, q, id)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*ConnectionTool, len(existing))
	for i := range existing {
		byName[existing[i].UpstreamName] = &existing[i]
	}
	res := &SyncResult{}
	// Exposed names already used by this connection (frozen ones included, and those of
	// tools about to be removed: their rows still exist when the new ones are inserted).
	taken := make(map[string]bool, len(existing)+len(defs))
	for i := range existing {
		taken[existing[i].ExposedName] = true
	}
	seen := make(map[string]bool, len(defs))
	for i := range defs {
		d := &defs[i]
		if seen[d.Name] {
			continue // an upstream listing the same name twice: first wins
		}
		seen[d.Name] = true
		digest := d.Digest()
		old := byName[d.Name]
		switch {
		case old == nil:
			exposed := names.Unique(handle, d.Name, func(n string) bool { return taken[n] })
			taken[exposed] = true
			status, approved := ToolActive, digest
			if newNeedApproval {
				status, approved = ToolPending, ""
			}
			_, err = q.Exec(ctx, `INSERT INTO mcp_connection_tools
				(connection_id, upstream_name, exposed_name, title, description, input_schema, output_schema, annotations,
				 definition_digest, approved_digest, status, definition)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
				id, d.Name, exposed, d.Title, d.Description, []byte(d.InputSchema),
				nullJSON(d.OutputSchema), nullJSON(d.Annotations), digest, approved, status, nullText(d.Definition))
			res.Added = append(res.Added, d.Name)
		default:
			status := old.Status
			switch {
			case old.Status == ToolPending:
			case digest != old.ApprovedDigest:
				if old.Status != ToolDrifted || digest != old.DefinitionDigest {
					res.Drifted = append(res.Drifted, d.Name)
				}
				status = ToolDrifted
			case old.Status == ToolDrifted:
				status = ToolActive
				res.Restored = append(res.Restored, d.Name)
			}
			_, err = q.Exec(ctx, `UPDATE mcp_connection_tools SET title = $3, description = $4, input_schema = $5,
				output_schema = $6, annotations = $7, definition_digest = $8, status = $9, definition = $10, listed_at = now()
				WHERE connection_id = $1 AND upstream_name = $2`,
				id, d.Name, d.Title, d.Description, []byte(d.InputSchema), nullJSON(d.OutputSchema),
				nullJSON(d.Annotations), digest, status, nullText(d.Definition))
		}
		if err != nil {
			return nil, Interpret(err)
		}
	}
	for _, old := range existing {
		if !seen[old.UpstreamName] {
			if _, err := q.Exec(ctx, `DELETE FROM mcp_connection_tools WHERE connection_id = $1 AND upstream_name = $2`,
				id, old.UpstreamName); err != nil {
				return nil, Interpret(err)
			}
			res.Removed = append(res.Removed, old.UpstreamName)
		}
	}
	return res, nil
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
