-- The MCP Apps views (ui:// resources) each upstream listed at its connection's last
-- successful refresh (issue 22, docs/ARCHITECTURE.md "MCP Apps"): the aggregate endpoint
-- lists them, with the upstream's name, description and _meta, under the connection's
-- handle, from the catalog snapshot — never by asking every upstream per request. Each
-- entry is the upstream's resource object as listed (type json keeps its text). NULL: not
-- listed yet (or the upstream declares no resources), and the views the tools name are
-- listed from the tool definitions alone.

-- +goose Up
ALTER TABLE mcp_connections ADD COLUMN ui_resources json;

-- +goose Down
ALTER TABLE mcp_connections DROP COLUMN ui_resources;
