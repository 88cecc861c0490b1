-- Tasks (MCP 2025-11-25 "Tasks"): a task-augmented tools/call answers at once with a task
-- id and runs on; the caller polls tasks/get and fetches tasks/result. A row is a task the
-- gateway runs itself (upstream_task_id NULL) or an upstream's own task that the gateway
-- routes to (upstream_task_id set). The id is 128 random bits (unguessable) and every read
-- is scoped to the owner: workspace and principal. Arguments are never stored (the worker
-- receives them in its invocation); the result is, until the task expires (expires_at), when
-- the scheduled function deletes the row.

-- +goose Up
CREATE TABLE mcp_tasks (
    id               text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{16,64}$'),
    workspace_id     uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    principal        text NOT NULL,
    connection_id    uuid NULL REFERENCES mcp_connections(id) ON DELETE SET NULL,
    tool             text NOT NULL,
    upstream_task_id text NULL,
    status           text NOT NULL DEFAULT 'working'
                     CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    status_message   text NULL,
    result           json NULL,
    error            json NULL,
    ttl_ms           bigint NOT NULL CHECK (ttl_ms > 0),
    poll_interval_ms integer NOT NULL DEFAULT 1000,
    created_at       timestamptz NOT NULL DEFAULT now(),
    last_updated_at  timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL,
    -- set when a worker takes a gateway-run task: a redelivered invocation runs nothing
    claimed_at       timestamptz NULL
);
CREATE INDEX mcp_tasks_owner_idx ON mcp_tasks(workspace_id, principal, created_at DESC);
CREATE INDEX mcp_tasks_expires_idx ON mcp_tasks(expires_at);

-- +goose Down
DROP TABLE mcp_tasks;
