-- The upstream's whole tool definition, as listed: the gateway's tools/list serves it with
-- only the name changed, so members the gateway does not know (icons, execution, _meta,
-- fields of later protocol revisions) reach MCP clients intact. Type json, not jsonb: json
-- keeps the upstream's text (member order, number spelling); jsonb would normalise it.
-- NULL for rows listed before this column existed: the gateway then builds the definition
-- from the columns above, and the next refresh fills it in.

-- +goose Up
ALTER TABLE mcp_connection_tools ADD COLUMN definition json NULL;

-- +goose Down
ALTER TABLE mcp_connection_tools DROP COLUMN definition;
