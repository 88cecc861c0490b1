package db

import (
	"context"
	"encoding/json"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/names"
)

const connectionCols = `id, name, handle, url, transport_type, working_transport, protocol_version, headers,
	enabled, source, catalog_entry_id, workspace_id, project_id, last_connected_at, last_error,
	created_by, created_at, updated_at, capabilities, auth_mode`

// ConnectionNew is what ConnectionCreate writes.
type ConnectionNew struct {
	Name           string
	URL            string
	TransportType  string
	Headers        map[string]string
	Enabled        bool
	Source         string // manual | marketplace
	CatalogEntryID *string
	WorkspaceID    *string
	ProjectID      *string
	CreatedBy      string
}

// ConnectionCreate inserts a connection with a fresh collision-checked handle derived
// from its name (docs/DESIGN.md §4: names.ConnectionHandleBase, then the candidates of
// names.ConnectionHandleCandidate until one is free) and returns it. A second marketplace install of the same
// entry into one workspace is CONFLICT (partial unique index); an unknown workspace,
// project or entry is INVALID_REFERENCE.
func ConnectionCreate(ctx context.Context, q Querier, n *ConnectionNew) (*Connection, error) {
	hj, err := json.Marshal(nonNil(n.Headers))
	if err != nil {
		return nil, err
	}
	base := names.ConnectionHandleBase(n.Name)
	for i := 0; i < 50; i++ {
		handle := names.ConnectionHandleCandidate(base, i)
		c, err := one[Connection](ctx, q, `INSERT INTO mcp_connections
			(name, handle, url, transport_type, headers, enabled, source, catalog_entry_id, workspace_id, project_id, created_by)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11
			WHERE NOT EXISTS (SELECT 1 FROM mcp_connections WHERE handle = $2)
			ON CONFLICT (handle) DO NOTHING
			RETURNING `+connectionCols,
			n.Name, handle, n.URL, n.TransportType, hj, n.Enabled, n.Source, n.CatalogEntryID,
			n.WorkspaceID, n.ProjectID, n.CreatedBy)
		if apperr.CodeOf(err) == apperr.NotFound {
			// handle taken (also by a concurrent insert: ON CONFLICT keeps that race from
			// surfacing as a unique violation, i.e. a false CONFLICT "already installed",
			// and from aborting the caller's transaction): try the next candidate
			continue
		}
		return c, err
	}
	return nil, apperr.New(apperr.Conflict, "could not allocate a connection handle")
}

func nonNil(h map[string]string) map[string]string {
	if h == nil {
		return map[string]string{}
	}
	return h
}

// ConnectionGet returns connection id, or NOT_FOUND (also for a malformed id).
func ConnectionGet(ctx context.Context, q Querier, id string) (*Connection, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	return one[Connection](ctx, q, `SELECT `+connectionCols+` FROM mcp_connections WHERE id = $1`, id)
}

// ConnectionFilter selects connections: WorkspaceIDs limits to those workspaces plus
// global connections (nil = every connection, for superusers); OnlyEnabled drops
// disabled ones.
type ConnectionFilter struct {
	WorkspaceIDs []string
	AllScopes    bool
	OnlyEnabled  bool
}

// ConnectionList returns connections ordered by created_at, id.
func ConnectionList(ctx context.Context, q Querier, f ConnectionFilter) ([]Connection, error) {
	return collect[Connection](ctx, q, `SELECT `+connectionCols+` FROM mcp_connections
		WHERE ($1 OR workspace_id IS NULL OR workspace_id = ANY($2::uuid[]))
		  AND (NOT $3 OR enabled)
		ORDER BY created_at, id`, f.AllScopes, f.WorkspaceIDs, f.OnlyEnabled)
}

// ConnectionListVisible returns the enabled connections visible in workspace ws: global
// ones and ws's own (workspace- and project-scoped), ordered by handle.
func ConnectionListVisible(ctx context.Context, q Querier, ws string) ([]Connection, error) {
	return collect[Connection](ctx, q, `SELECT `+connectionCols+` FROM mcp_connections
		WHERE enabled AND (workspace_id IS NULL OR workspace_id = $1) ORDER BY handle`, ws)
}

// ConnectionUpdate is a partial update: nil fields are left as they are.
type ConnectionUpdate struct {
	Name          *string
	URL           *string
	TransportType *string
	Headers       map[string]string // nil: unchanged
	Enabled       *bool
}

// ConnectionUpdateByID applies u to connection id and returns the new row. Changing the
// URL or transport forgets the remembered transport and protocol version.
func ConnectionUpdateByID(ctx context.Context, q Querier, id string, u *ConnectionUpdate) (*Connection, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	var hj []byte
	if u.Headers != nil {
		hj, _ = json.Marshal(u.Headers)
	}
	return one[Connection](ctx, q, `UPDATE mcp_connections SET
			name = COALESCE($2, name),
			url = COALESCE($3, url),
			transport_type = COALESCE($4, transport_type),
			headers = COALESCE($5::jsonb, headers),
			enabled = COALESCE($6, enabled),
			working_transport = CASE WHEN $3 IS NOT NULL OR $4 IS NOT NULL THEN NULL ELSE working_transport END,
			protocol_version = CASE WHEN $3 IS NOT NULL OR $4 IS NOT NULL THEN NULL ELSE protocol_version END,
			updated_at = now()
		WHERE id = $1 RETURNING `+connectionCols, id, u.Name, u.URL, u.TransportType, hj, u.Enabled)
}

// ConnectionDelete hard-deletes connection id (its tools and pins cascade) and returns
// the deleted row; NOT_FOUND when absent.
func ConnectionDelete(ctx context.Context, q Querier, id string) (*Connection, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	return one[Connection](ctx, q, `DELETE FROM mcp_connections WHERE id = $1 RETURNING `+connectionCols, id)
}

// ConnectionState is the outcome of a connect attempt, recorded on the connection.
type ConnectionState struct {
	OK               bool
	Error            string // client-safe error text (no header values) when !OK
	WorkingTransport string // the transport that worked, when OK
	ProtocolVersion  string // negotiated protocol version, when OK
	// Capabilities are the capabilities the upstream declared, as JSON, when OK (nil:
	// unknown, kept as stored).
	Capabilities json.RawMessage
}

// ConnectionRecordState records a connect attempt: on success last_connected_at, the
// remembered transport and protocol version, and last_error cleared; on failure
// last_error.
func ConnectionRecordState(ctx context.Context, q Querier, id string, s ConnectionState) error {
	var err error
	if s.OK {
		_, err = q.Exec(ctx, `UPDATE mcp_connections SET last_connected_at = now(), last_error = NULL,
			working_transport = NULLIF($2, ''), protocol_version = NULLIF($3, ''),
			capabilities = COALESCE($4::json, capabilities) WHERE id = $1`,
			id, s.WorkingTransport, s.ProtocolVersion, nullText(s.Capabilities))
	} else {
		_, err = q.Exec(ctx, `UPDATE mcp_connections SET last_error = $2 WHERE id = $1`, id, s.Error)
	}
	return Interpret(err)
}

// LockKey takes a transaction-scoped advisory lock on (namespace, key) — used to
// serialise a workspace's catalog rebuild and a connection's tool refresh.
func LockKey(ctx context.Context, tx Tx, namespace, key string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))`, namespace, key)
	return Interpret(err)
}
