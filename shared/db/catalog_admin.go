package db

import (
	"context"
	"encoding/json"
	"time"
)

// CatalogEntryInput is what an admin writes on a catalog entry (POST/PUT
// /api/mcp-marketplace). On update, nil fields are left as they
// are. Runtime fields (install_count, health columns) and the verification tier (curated
// data only, docs/DESIGN.md §11) are never part of it.
type CatalogEntryInput struct {
	Name           *string
	URL            *string
	TransportType  *string
	Headers        map[string]string // header templates; nil: unchanged (update) or {} (create)
	Description    *string
	Category       *string
	Version        *string
	Author         *string
	IsPlaceholder  *bool
	LastCommitDate *time.Time
}

func strOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

// CatalogEntryCreate inserts an admin-created entry (tier unverified, runtime fields at
// their defaults) and returns it. A taken name is CONFLICT.
func CatalogEntryCreate(ctx context.Context, q Querier, in *CatalogEntryInput) (*CatalogEntry, error) {
	hj, err := json.Marshal(nonNil(in.Headers))
	if err != nil {
		return nil, err
	}
	placeholder := in.IsPlaceholder != nil && *in.IsPlaceholder
	return one[CatalogEntry](ctx, q, `INSERT INTO mcp_catalog_entries
		(name, url, transport_type, headers, description, category, version, author, verification_tier,
		 is_placeholder, last_commit_date, source)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'unverified', $9, $10, 'admin')
		RETURNING `+catalogEntryCols,
		strOr(in.Name, ""), strOr(in.URL, ""), strOr(in.TransportType, "streamable-http"), hj,
		strOr(in.Description, ""), strOr(in.Category, ""), strOr(in.Version, ""), strOr(in.Author, ""),
		placeholder, in.LastCommitDate)
}

// CatalogEntryUpdateByID applies in to entry id (nil fields unchanged) and returns the
// new row; NOT_FOUND when absent, CONFLICT when the new name is taken. Runtime fields and
// the verification tier are never touched.
func CatalogEntryUpdateByID(ctx context.Context, q Querier, id string, in *CatalogEntryInput) (*CatalogEntry, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	var hj []byte
	if in.Headers != nil {
		hj, _ = json.Marshal(in.Headers)
	}
	return one[CatalogEntry](ctx, q, `UPDATE mcp_catalog_entries SET
			name = COALESCE($2, name),
			url = COALESCE($3, url),
			transport_type = COALESCE($4, transport_type),
			headers = COALESCE($5::jsonb, headers),
			description = COALESCE($6, description),
			category = COALESCE($7, category),
			version = COALESCE($8, version),
			author = COALESCE($9, author),
			is_placeholder = COALESCE($10, is_placeholder),
			last_commit_date = COALESCE($11, last_commit_date),
			updated_at = now()
		WHERE id = $1 RETURNING `+catalogEntryCols,
		id, in.Name, in.URL, in.TransportType, hj, in.Description, in.Category, in.Version, in.Author,
		in.IsPlaceholder, in.LastCommitDate)
}

// CatalogEntryDelete hard-deletes entry id and returns the deleted row; NOT_FOUND when
// absent. Callers check CatalogEntryInstallCount first: marketplace installs keep their
// entry (the FK would set their catalog_entry_id to NULL and lose the install's identity).
func CatalogEntryDelete(ctx context.Context, q Querier, id string) (*CatalogEntry, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	return one[CatalogEntry](ctx, q, `DELETE FROM mcp_catalog_entries WHERE id = $1 RETURNING `+catalogEntryCols, id)
}

// CatalogEntryInstallCount counts the marketplace connections of entry id right now
// (install_count is the historical counter shown to users; this is the live number).
func CatalogEntryInstallCount(ctx context.Context, q Querier, id string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM mcp_connections
		WHERE catalog_entry_id = $1 AND source = 'marketplace'`, id).Scan(&n)
	return n, Interpret(err)
}

// CatalogEntryLock takes a transaction-scoped advisory lock on entry id, so that an
// install and a delete of the same entry serialise. It waits for the lock, which is
// released when tx ends; errors are Interpret's.
func CatalogEntryLock(ctx context.Context, q Tx, id string) error {
	_, err := q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('catalog_entry'), hashtext($1))`, id)
	return Interpret(err)
}

// ConnectionGetInstall returns the marketplace install of entry id in workspace ws (the
// uninstall flow: {catalogEntryId, workspaceId, source: "marketplace"}), or NOT_FOUND.
func ConnectionGetInstall(ctx context.Context, q Querier, entryID, ws string) (*Connection, error) {
	if !IsUUID(entryID) || !IsUUID(ws) {
		return nil, notFound()
	}
	return one[Connection](ctx, q, `SELECT `+connectionCols+` FROM mcp_connections
		WHERE catalog_entry_id = $1 AND workspace_id = $2 AND source = 'marketplace'`, entryID, ws)
}

// ConnectionInstalls maps catalog entry id → install (connection id and connect state) for
// the marketplace installs in workspace ws (the catalog's "Installed" badge).
func ConnectionInstalls(ctx context.Context, q Querier, ws string) (map[string]Install, error) {
	rows, err := q.Query(ctx, `SELECT catalog_entry_id::text, id::text,
			CASE WHEN last_error IS NULL THEN 'connected'
			     WHEN last_connected_at IS NULL THEN 'never_connected' ELSE 'failing' END
		FROM mcp_connections
		WHERE workspace_id = $1 AND source = 'marketplace' AND catalog_entry_id IS NOT NULL`, ws)
	if err != nil {
		return nil, Interpret(err)
	}
	defer rows.Close()
	out := map[string]Install{}
	for rows.Next() {
		var e string
		var in Install
		if err := rows.Scan(&e, &in.ConnectionID, &in.State); err != nil {
			return nil, Interpret(err)
		}
		out[e] = in
	}
	return out, Interpret(rows.Err())
}

// Install is a workspace's marketplace install of a catalog entry: its connection and the
// connection's connect state — "connected" (no error recorded), "failing" (its last
// connect failed after an earlier success) or "never_connected" (no connect ever
// succeeded, e.g. the first connect at install failed).
type Install struct {
	ConnectionID string
	State        string
}

// ConnectionToolGet returns connection id's tool upstream, or NOT_FOUND.
func ConnectionToolGet(ctx context.Context, q Querier, id, upstream string) (*ConnectionTool, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	return one[ConnectionTool](ctx, q, `SELECT `+toolCols+` FROM mcp_connection_tools
		WHERE connection_id = $1 AND upstream_name = $2`, id, upstream)
}

// ConnectionToolCounts returns, per connection id of ids, how many tools it has in each
// status (active, drifted, pending).
func ConnectionToolCounts(ctx context.Context, q Querier, ids []string) (map[string]map[string]int, error) {
	rows, err := q.Query(ctx, `SELECT connection_id::text, status, count(*) FROM mcp_connection_tools
		WHERE connection_id = ANY($1::uuid[]) GROUP BY 1, 2`, ids)
	if err != nil {
		return nil, Interpret(err)
	}
	defer rows.Close()
	out := map[string]map[string]int{}
	for rows.Next() {
		var id, status string
		var n int
		if err := rows.Scan(&id, &status, &n); err != nil {
			return nil, Interpret(err)
		}
		if out[id] == nil {
			out[id] = map[string]int{}
		}
		out[id][status] = n
	}
	return out, Interpret(rows.Err())
}
