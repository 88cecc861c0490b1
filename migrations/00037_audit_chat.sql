-- The Usage page and GET /api/usage group calls per chat too (docs/POLICIES.md "Usage"), so
-- an audit row carries the chat of its request: the X-Chat-Id / ?chat= the gateway accepted
-- (a chat of the request's workspace), NULL when the request named none. No foreign key: the
-- audit log is append-only and outlives a deleted chat. No index: the usage query filters on
-- (workspace_id, occurred_at), which audit_events_workspace_idx already serves, and groups
-- the window's rows in memory whatever the key.

-- +goose Up
ALTER TABLE audit_events ADD COLUMN chat_id uuid NULL;

-- +goose Down
ALTER TABLE audit_events DROP COLUMN chat_id;
