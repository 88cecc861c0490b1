-- Progressive discovery (issue 23; docs/ARCHITECTURE.md "Decisions worth knowing"): above a
-- number of visible proxied tools the gateway's tools/list offers the built-ins with a
-- ranked search and a call by name instead of every tool, which would not fit a model's
-- context. The number is a workspace setting; NULL means the gateway's default (200). The
-- catalog document carries it, so the gateway reads no table per request.

-- +goose Up
ALTER TABLE workspaces
    ADD COLUMN tool_discovery_threshold integer NULL
        CHECK (tool_discovery_threshold >= 0);

-- +goose Down
ALTER TABLE workspaces DROP COLUMN tool_discovery_threshold;
