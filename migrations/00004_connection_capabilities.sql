-- The capabilities the upstream declared at its last successful connect (initialize or
-- server/discover), as JSON. The single-server endpoint advertises exactly these and
-- answers only the methods they allow. NULL until the next connect: the endpoint then
-- advertises tools, resources, prompts and completions as before.

-- +goose Up
ALTER TABLE mcp_connections ADD COLUMN capabilities json NULL;

-- +goose Down
ALTER TABLE mcp_connections DROP COLUMN capabilities;
