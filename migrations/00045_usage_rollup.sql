-- The Usage page's rollup (docs/POLICIES.md "Usage"): per workspace, 5-minute bucket
-- (date_bin from the epoch), tool, connection ('builtin' for a built-in), principal and chat
-- ('none' when the request named none): the calls, the errors among them, and a histogram
-- of the other calls' durations over fixed log-scale buckets (db.UsageLatencyBuckets: bucket
-- 0 is under 0.1 ms, bucket i in 1..38 is [0.1·√2^(i−1), 0.1·√2^i) ms, bucket 39 is the
-- rest), so that p50/p95 read back within one bucket's width (41 %). The audit writer's batch
-- INSERT updates it in the same statement (db.AuditEventInsert), only for the rows it
-- actually wrote, so a retried batch counts nothing twice. GET /api/usage reads it instead
-- of grouping the window's audit rows at request time. Rows already in audit_events are
-- rolled up here once.

-- +goose Up
CREATE TABLE usage_rollup (
    workspace_id uuid        NOT NULL,
    bucket       timestamptz NOT NULL,
    tool         text        NOT NULL,
    connection   text        NOT NULL,
    principal    text        NOT NULL,
    chat         text        NOT NULL,
    calls        bigint      NOT NULL,
    errors       bigint      NOT NULL,
    latency      bigint[]    NOT NULL CHECK (cardinality(latency) = 40),
    PRIMARY KEY (workspace_id, bucket, tool, connection, principal, chat)
);

INSERT INTO usage_rollup (workspace_id, bucket, tool, connection, principal, chat, calls, errors, latency)
SELECT workspace_id, bk, tool, conn, principal, chat, sum(calls), sum(errs),
       ARRAY(SELECT coalesce((jsonb_object_agg(li, ok) ->> i::text)::bigint, 0) FROM generate_series(0, 39) AS i ORDER BY i)
FROM (
    SELECT workspace_id, bk, tool, conn, principal, chat, li,
           count(*) AS calls, count(*) FILTER (WHERE err) AS errs, count(*) FILTER (WHERE NOT err) AS ok
    FROM (
        SELECT workspace_id, date_bin('5 minutes', occurred_at, timestamptz 'epoch') AS bk, tool,
               coalesce(connection_id::text, 'builtin') AS conn, principal, coalesce(chat_id::text, 'none') AS chat,
               kind = 'denied' AS err,
               CASE WHEN duration_ms < 0.1 THEN 0
                    ELSE least(39, floor(2 * log(2.0, (duration_ms / 0.1)::numeric))::int + 1) END AS li
        FROM audit_events WHERE workspace_id IS NOT NULL
    ) AS r
    GROUP BY workspace_id, bk, tool, conn, principal, chat, li
) AS g
GROUP BY workspace_id, bk, tool, conn, principal, chat;

-- +goose Down
DROP TABLE usage_rollup;
