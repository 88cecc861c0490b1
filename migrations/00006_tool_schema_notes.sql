-- What happened to each upstream tool's inputSchema at the connection's last successful
-- listing (issue 14 item 9): tools whose schema was normalised to {"type":"object"} (missing,
-- {}, only $schema, a type list naming "object") and tools dropped because their schema
-- cannot describe an object. A dropped tool has no row in mcp_connection_tools, so the
-- notes live on the connection, replaced whole at every successful listing. Shown by
-- GET /api/mcp-connections/{id}/tools. jsonb array of {"name","action","reason"}.

-- +goose Up
ALTER TABLE mcp_connections ADD COLUMN tool_schema_notes jsonb NOT NULL DEFAULT '[]'::jsonb;

-- +goose Down
ALTER TABLE mcp_connections DROP COLUMN tool_schema_notes;
