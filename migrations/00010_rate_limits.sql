-- Rate limits and quotas per workspace (issue 24 item 2, docs/RATE-LIMITS.md): an admin caps
-- the proxied tools/call traffic of a workspace, of one connection or of one exposed tool,
-- shared by the whole workspace, per member, or for one member, in calls per minute and/or
-- per day. Every Lambda instance of the gateway enforces the same limits, so the counters
-- live here: one row per limit, subject and fixed window, incremented by an atomic upsert
-- that never lets a window's count pass its limit (db.RateLimitTake).
--
-- principal: NULL = one bucket shared by the whole workspace, '*' = a bucket per member,
-- any other value = that member (token subject) only.

-- +goose Up
CREATE TABLE rate_limits (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    connection_id uuid NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    tool          text NULL CHECK (tool ~ '^[A-Za-z0-9_-]{1,64}$'),
    principal     text NULL CHECK (principal <> '' AND length(principal) <= 256),
    per_minute    integer NULL CHECK (per_minute > 0),
    per_day       integer NULL CHECK (per_day > 0),
    created_by    text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT rate_limits_some_ck CHECK (per_minute IS NOT NULL OR per_day IS NOT NULL),
    CONSTRAINT rate_limits_target_ck CHECK (connection_id IS NULL OR tool IS NULL),
    CONSTRAINT rate_limits_scope_uq UNIQUE NULLS NOT DISTINCT (workspace_id, connection_id, tool, principal)
);

-- One fixed window of one limit for one subject ('' when the limit is shared). max is the
-- limit when the row was last written; the upsert's guard compares against the current one.
CREATE UNLOGGED TABLE rate_limit_counters (
    limit_id     uuid NOT NULL REFERENCES rate_limits(id) ON DELETE CASCADE,
    subject      text NOT NULL,
    window_kind  text NOT NULL CHECK (window_kind IN ('minute', 'day')),
    window_start timestamptz NOT NULL,
    count        integer NOT NULL CHECK (count >= 0),
    max          integer NOT NULL,
    PRIMARY KEY (limit_id, subject, window_kind, window_start)
);
CREATE INDEX rate_limit_counters_start_idx ON rate_limit_counters(window_start);

-- +goose Down
DROP TABLE rate_limit_counters;
DROP TABLE rate_limits;
