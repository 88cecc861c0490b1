-- The official MCP registry (and any registry speaking its v0.1 API) as a catalog source
-- (issue 24 item 3, docs/REGISTRY.md). An imported entry remembers where it came from
-- (source 'registry', the registry's base URL, the server's name and version, which of its
-- remotes it is) and the registry's status: 'deprecated' entries are flagged, 'deleted'
-- ones hidden from the marketplace but never taken from the workspaces that installed them.
-- A remote's URL may hold {variable} templates (url_variables: the install-time fields) and
-- declare headers (declared_headers: name, description, isSecret, isRequired).
--
-- source: 'curated' (the seed), 'admin' (written through the REST API), 'registry'.

-- +goose Up
ALTER TABLE mcp_catalog_entries
    ADD COLUMN source text NOT NULL DEFAULT 'curated' CHECK (source IN ('curated', 'admin', 'registry')),
    ADD COLUMN registry_url text NULL,
    ADD COLUMN registry_name text NULL,
    ADD COLUMN registry_remote integer NULL,
    ADD COLUMN registry_status text NULL CHECK (registry_status IN ('active', 'deprecated', 'deleted')),
    ADD COLUMN registry_published_at timestamptz NULL,
    ADD COLUMN url_variables jsonb NOT NULL DEFAULT '[]'::jsonb,
    ADD COLUMN declared_headers jsonb NOT NULL DEFAULT '[]'::jsonb,
    ADD CONSTRAINT mcp_catalog_entries_registry_ck CHECK (
        (source = 'registry') = (registry_name IS NOT NULL AND registry_remote IS NOT NULL AND registry_status IS NOT NULL));
-- One entry per remote of a registry server: the import's upsert key.
CREATE UNIQUE INDEX mcp_catalog_entries_registry_uq ON mcp_catalog_entries(registry_name, registry_remote)
    WHERE source = 'registry';

-- +goose Down
DROP INDEX mcp_catalog_entries_registry_uq;
ALTER TABLE mcp_catalog_entries DROP CONSTRAINT mcp_catalog_entries_registry_ck,
    DROP COLUMN source, DROP COLUMN registry_url, DROP COLUMN registry_name, DROP COLUMN registry_remote,
    DROP COLUMN registry_status, DROP COLUMN registry_published_at, DROP COLUMN url_variables,
    DROP COLUMN declared_headers;
