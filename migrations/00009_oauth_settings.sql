-- Per-connection OAuth settings (docs/UPSTREAM-AUTH.md "OAuth settings"): an admin pins the
-- authorization server (expected issuer or metadata URL), the scopes to request and extra
-- authorization parameters (audience, prompt, …) on a catalog entry (the default of its
-- installs; superusers) and on a connection (its workspace's admins), the connection's
-- winning field by field. settings is a JSON object validated by the application
-- (upstreamauth.Settings). A table of its own rather than columns, so that the queries that
-- read whole connection rows (c.*) keep their shape.

-- +goose Up
CREATE TABLE mcp_oauth_settings (
    catalog_entry_id uuid NULL UNIQUE REFERENCES mcp_catalog_entries(id) ON DELETE CASCADE,
    connection_id    uuid NULL UNIQUE REFERENCES mcp_connections(id) ON DELETE CASCADE,
    settings         jsonb NOT NULL CHECK (jsonb_typeof(settings) = 'object'),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CHECK ((catalog_entry_id IS NULL) <> (connection_id IS NULL))
);

-- +goose Down
DROP TABLE mcp_oauth_settings;
