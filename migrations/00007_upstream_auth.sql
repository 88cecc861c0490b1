-- Upstream authorization (docs/UPSTREAM-AUTH.md): twelve of the curated servers speak the
-- MCP authorization spec (OAuth 2.1), and static headers cannot connect them. This adds the
-- auth mode of a connection (and its default on a catalog entry), a catalog entry's
-- pre-registered OAuth client, the grants (tokens) per connection and subject, and the
-- pending authorizations between "install" and GET /api/oauth/callback.
--
-- Secrets are never stored in clear: client secrets, tokens and PKCE verifiers are sealed
-- by the application (envelope encryption: a data key per value wrapped by AWS KMS, or by a
-- local key file) into the *_sealed bytea columns. A pending state is stored as its SHA-256
-- only, so a database reader cannot finish someone else's authorization.

-- +goose Up
ALTER TABLE mcp_catalog_entries ADD COLUMN auth_mode text NOT NULL DEFAULT 'headers'
    CHECK (auth_mode IN ('none', 'headers', 'oauth', 'oauth_per_user', 'client_credentials'));
ALTER TABLE mcp_connections ADD COLUMN auth_mode text NOT NULL DEFAULT 'headers'
    CHECK (auth_mode IN ('none', 'headers', 'oauth', 'oauth_per_user', 'client_credentials'));

-- A catalog entry's pre-registered client (written by superusers). client_secret_sealed
-- holds the client secret or, for private_key_jwt, the private key.
CREATE TABLE mcp_oauth_clients (
    catalog_entry_id     uuid PRIMARY KEY REFERENCES mcp_catalog_entries(id) ON DELETE CASCADE,
    client_id            text NOT NULL CHECK (client_id <> '' AND length(client_id) <= 512),
    token_endpoint_auth  text NOT NULL DEFAULT ''
                         CHECK (token_endpoint_auth IN ('', 'none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt')),
    signing_alg          text NOT NULL DEFAULT '',
    issuer               text NOT NULL DEFAULT '',
    scopes               text[] NOT NULL DEFAULT '{}',
    client_secret_sealed bytea NULL,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);

-- One grant per connection ('' subject: the connection's shared grant in oauth and
-- client_credentials modes) or per connection and caller (oauth_per_user). grant_sealed is
-- the whole grant (access and refresh tokens, the client used) sealed with the row's
-- connection and subject as associated data. The clear columns are what status shows.
CREATE TABLE mcp_oauth_grants (
    connection_id  uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    subject        text NOT NULL DEFAULT '',
    grant_sealed   bytea NOT NULL,
    needs_reauth   boolean NOT NULL DEFAULT false,
    reason         text NULL,
    expires_at     timestamptz NULL,
    scopes         text[] NOT NULL DEFAULT '{}',
    authorized_by  text NOT NULL,
    authorized_at  timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connection_id, subject)
);

-- Started authorizations: single use (DELETE … RETURNING), valid until expires_at
-- (10 minutes); expired rows are swept by PendingSweep.
CREATE TABLE mcp_oauth_pending (
    state_hash     bytea PRIMARY KEY CHECK (length(state_hash) = 32),
    connection_id  uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    workspace_id   uuid NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    subject        text NOT NULL,
    pending_sealed bytea NOT NULL,
    expires_at     timestamptz NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_oauth_pending_expires_idx ON mcp_oauth_pending(expires_at);
CREATE INDEX mcp_oauth_pending_connection_idx ON mcp_oauth_pending(connection_id);

-- +goose Down
DROP TABLE mcp_oauth_pending, mcp_oauth_grants, mcp_oauth_clients;
ALTER TABLE mcp_connections DROP COLUMN auth_mode;
ALTER TABLE mcp_catalog_entries DROP COLUMN auth_mode;
