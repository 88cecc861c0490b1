-- An upstream that runs a routed task itself may give it an unlimited lifetime: ttl null
-- (MCP 2025-11-25 "Tasks": "ttl: number | null"; ttlMs null at 2026-07-28). The gateway's
-- row must still expire (ttl_ms bounds it, as before), but what the caller is shown is the
-- upstream's promise: null, not the gateway's own bound (issue 34). This flag says the
-- upstream said null, so tasks/get, tasks/list and the create answer show ttl null.

-- +goose Up
ALTER TABLE mcp_tasks ADD COLUMN ttl_unlimited boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE mcp_tasks DROP COLUMN ttl_unlimited;
