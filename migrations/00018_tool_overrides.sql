-- Per-workspace tool overrides (docs/OVERRIDES.md): a workspace admin renames, retitles,
-- redescribes, hides or re-annotates one upstream tool of a connection visible in the
-- workspace (its own or a global one) — for that workspace only. The upstream's own
-- definition stays in mcp_connection_tools, untouched, so drift detection keeps comparing
-- what the upstream lists; the catalog build applies these rows on top.
--
-- The key is the upstream's own name, not the exposed one: an override outlives a refresh
-- and a drift approval, and stays (dormant) when the upstream stops listing the tool, to
-- apply again if it comes back. NULL columns are not overridden. exposed_name is unique per
-- workspace; the service keeps it off the gateway's own prefixes (agentpack_, mcp_) so it
-- can never meet a built-in's or a generated name, now or later.

-- +goose Up
CREATE TABLE tool_overrides (
    workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    connection_id uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    upstream_name text NOT NULL CHECK (length(upstream_name) BETWEEN 1 AND 1024),
    exposed_name  text NULL CHECK (exposed_name ~ '^[A-Za-z0-9_-]{1,64}$'),
    title         text NULL CHECK (length(title) <= 200),
    description   text NULL CHECK (length(description) <= 8192),
    hidden        boolean NOT NULL DEFAULT false,
    annotations   json NULL,
    created_by    text NOT NULL DEFAULT '',
    updated_by    text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, connection_id, upstream_name),
    CONSTRAINT tool_overrides_exposed_uq UNIQUE (workspace_id, exposed_name)
);
CREATE INDEX tool_overrides_connection_idx ON tool_overrides(connection_id);

-- +goose Down
DROP TABLE tool_overrides;
