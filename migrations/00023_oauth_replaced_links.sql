-- Consent refusals are audited (docs/UPSTREAM-AUTH.md "Consent bound to its user"): a
-- consent link opened by the wrong principal, or after it expired, writes an event_log
-- entry on the flow's connection, in the flow's workspace. A link that a newer one
-- replaced (the same caller called the connection again: mcp_oauth_pending keeps one row per
-- caller and connection) used to vanish with its row, so its refusal could not say which
-- connection it was for. This table keeps, until the replaced link would have expired, what
-- the refusal needs and nothing secret: the link's SHA-256, the connection, workspace and
-- subject of its flow. Swept with mcp_oauth_pending (expires_at).

-- +goose Up
CREATE TABLE mcp_oauth_replaced_links (
    link_hash     bytea PRIMARY KEY CHECK (length(link_hash) = 32),
    connection_id uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    workspace_id  uuid NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    subject       text NOT NULL,
    expires_at    timestamptz NOT NULL,
    replaced_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_oauth_replaced_links_expires_idx ON mcp_oauth_replaced_links(expires_at);

-- +goose Down
DROP TABLE mcp_oauth_replaced_links;
