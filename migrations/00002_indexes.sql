-- Indexes for foreign keys that are scanned on hot or cascading paths, found in review:
-- unpinning on connection delete (chat_mcp_pins.connection_id), the health check's
-- candidate query and ON DELETE SET NULL of a catalog entry (mcp_connections.
-- catalog_entry_id), and per-workspace event listing (event_log.workspace_id).

-- +goose Up
CREATE INDEX chat_mcp_pins_connection_idx ON chat_mcp_pins(connection_id);
CREATE INDEX mcp_connections_catalog_entry_idx ON mcp_connections(catalog_entry_id);
CREATE INDEX event_log_workspace_idx ON event_log(workspace_id, id DESC);

-- +goose Down
DROP INDEX event_log_workspace_idx;
DROP INDEX mcp_connections_catalog_entry_idx;
DROP INDEX chat_mcp_pins_connection_idx;
