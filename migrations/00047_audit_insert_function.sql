-- The audit writer's batch statement as a function (db.AuditEventInsert; docs/PERFORMANCE.md
-- "The audit statement"). The statement is the same one the writer sent as text before: the
-- batch's rows, one array per column, inserted into audit_events (a row_key already written
-- is skipped), and the rows actually written added to usage_rollup (migrations/00045) in the
-- same statement, grouped and upserted in key order so that concurrent batches lock shared
-- rollup rows in one order.
--
-- Why a function: the functions' pools run pgx in cache-describe mode (no named prepared
-- statements, which would pin an RDS Proxy session), so a statement sent as text is parsed
-- and planned on every execution, and this one's plan (four CTEs, a group, an upsert with
-- array subplans) cost about 0.5 ms of Postgres CPU per batch, more than its execution.
-- PL/pgSQL keeps a statement's plan for the life of the database connection, inside the
-- server, where RDS Proxy sees nothing: the client sends `SELECT audit_insert($1, …)`,
-- which plans in microseconds. plan_cache_mode = force_generic_plan (set for the
-- function's execution only, not the session) plans it once rather than five custom
-- plans first: the plan's shape does not depend on the batch.
--
-- $15 is each row's latency bucket, computed by the writer (db.usageBucket, the same
-- definition as 00045's backfill: 0 under 0.1 ms, else min(39, floor(2·log2(d/0.1)) + 1),
-- decided exactly): the numeric log in SQL cost about 17 µs per row.
--
-- This is 00047, not 00042–00044: goose refuses a version lower than one already applied.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION audit_insert(
    keys uuid[], occurred timestamptz[], request_ids text[], principals text[], workspaces uuid[],
    tools text[], versions text[], kinds text[], connections uuid[], durations float8[],
    digests text[], chats uuid[], errs bool[], outcomes text[], buckets int[]
) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $fn$
BEGIN
    WITH x AS (
        SELECT * FROM unnest(keys, occurred, request_ids, principals, workspaces, tools, versions, kinds,
            connections, durations, digests, chats, errs, outcomes, buckets)
            AS x(k, t, r, p, w, tl, v, kd, c, d, g, ch, err, oc, li)
    ), ins AS (
        INSERT INTO audit_events
            (row_key, occurred_at, request_id, principal, workspace_id, tool, version, kind, connection_id, duration_ms, args_digest, chat_id, outcome)
        SELECT x.k, COALESCE(x.t, now()), x.r, x.p, x.w, x.tl, x.v, x.kd, x.c, x.d, x.g, x.ch, x.oc FROM x
        ON CONFLICT (row_key) WHERE row_key IS NOT NULL DO NOTHING
        RETURNING row_key, occurred_at
    ), rw AS (
        SELECT x.w, date_bin('5 minutes', ins.occurred_at, timestamptz 'epoch') AS bk, x.tl,
            coalesce(x.c::text, 'builtin') AS conn, x.p, coalesce(x.ch::text, 'none') AS chat, x.err, x.li
        FROM ins JOIN x ON x.k = ins.row_key WHERE x.w IS NOT NULL
    ), gr AS (
        SELECT rw.w, rw.bk, rw.tl, rw.conn, rw.p, rw.chat, count(*) AS calls, count(*) FILTER (WHERE rw.err) AS errors,
            array_agg(rw.li) FILTER (WHERE NOT rw.err) AS lis
        FROM rw GROUP BY rw.w, rw.bk, rw.tl, rw.conn, rw.p, rw.chat
    )
    INSERT INTO usage_rollup AS u (workspace_id, bucket, tool, connection, principal, chat, calls, errors, latency)
    SELECT gr.w, gr.bk, gr.tl, gr.conn, gr.p, gr.chat, gr.calls, gr.errors,
        ARRAY(SELECT count(l) FROM generate_series(0, 39) AS b(i) LEFT JOIN unnest(gr.lis) AS l ON l = b.i GROUP BY b.i ORDER BY b.i)
    FROM gr ORDER BY gr.w, gr.bk, gr.tl, gr.conn, gr.p, gr.chat
    ON CONFLICT (workspace_id, bucket, tool, connection, principal, chat) DO UPDATE SET
        calls = u.calls + EXCLUDED.calls, errors = u.errors + EXCLUDED.errors,
        latency = ARRAY(SELECT h.a + h.b FROM unnest(u.latency, EXCLUDED.latency) WITH ORDINALITY AS h(a, b, o) ORDER BY h.o);
END
$fn$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION audit_insert(uuid[], timestamptz[], text[], text[], uuid[], text[], text[], text[], uuid[], float8[], text[], uuid[], bool[], text[], int[]);
