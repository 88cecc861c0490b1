package db

import (
	"context"
	"time"
)

// MCP access tokens (migrations/00051_mcp_access_tokens.sql, docs/AUTH.md "MCP access
// tokens"): grants of the gateway's authorization server with client_id MCPTokenClientID,
// made by a person for themself rather than through an OAuth client. The token is never
// stored; its grant is.

// MCPTokenClientID is the client_id of every MCP access token's grant (and the tokens'
// client_id claim): not a registered client, so no OAuth flow can ask for it.
const MCPTokenClientID = "agentpack-mcp-token"

// MCPToken is one MCP access token as stored: its grant.
type MCPToken struct {
	ID          string     `db:"id"`
	Name        string     `db:"client_name"`
	PersonID    string     `db:"person_id"`
	WorkspaceID string     `db:"workspace_id"`
	Role        string     `db:"role"`
	CreatedAt   time.Time  `db:"created_at"`
	ExpiresAt   time.Time  `db:"expires_at"`
	RevokedAt   *time.Time `db:"revoked_at"`
	MemberCheck bool       `db:"member_check"`
}

const mcpTokenCols = `id, client_name, person_id, workspace_id::text AS workspace_id, role, created_at, expires_at,
	revoked_at, member_check`

// MCPTokenInsert stores t's grant (t.ID must be new: CONFLICT otherwise; an unknown
// workspace is INVALID_REFERENCE).
func MCPTokenInsert(ctx context.Context, q Querier, t *MCPToken) error {
	_, err := q.Exec(ctx, `INSERT INTO as_grants (id, client_id, client_name, person_id, workspace_id, scopes,
		created_at, last_used_at, expires_at, role, member_check)
		VALUES ($1, $2, $3, $4, $5, '{mcp}', $6, $6, $7, $8, $9)`,
		t.ID, MCPTokenClientID, t.Name, t.PersonID, t.WorkspaceID, t.CreatedAt, t.ExpiresAt, t.Role, t.MemberCheck)
	return Interpret(err)
}

// MCPTokenListByPerson returns person's MCP access tokens that are neither revoked nor
// expired, newest first.
func MCPTokenListByPerson(ctx context.Context, q Querier, person string) ([]MCPToken, error) {
	return collect[MCPToken](ctx, q, `SELECT `+mcpTokenCols+` FROM as_grants
		WHERE person_id = $1 AND client_id = $2 AND revoked_at IS NULL AND expires_at > now()
		ORDER BY created_at DESC, id`, person, MCPTokenClientID)
}

// MCPTokenGet returns MCP access token id, or NOT_FOUND (also for a grant that is not an
// MCP access token).
func MCPTokenGet(ctx context.Context, q Querier, id string) (*MCPToken, error) {
	return one[MCPToken](ctx, q, `SELECT `+mcpTokenCols+` FROM as_grants WHERE id = $1 AND client_id = $2`,
		id, MCPTokenClientID)
}

// MCPTokenCountActive counts person's MCP access tokens that are neither revoked nor
// expired.
func MCPTokenCountActive(ctx context.Context, q Querier, person string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM as_grants WHERE person_id = $1 AND client_id = $2
		AND revoked_at IS NULL AND expires_at > now()`, person, MCPTokenClientID).Scan(&n)
	return n, Interpret(err)
}
