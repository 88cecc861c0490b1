-- How an audited call ended (docs/DESIGN.md "Audit", docs/POLICIES.md "Usage"): failed
-- proxied calls are audited too, so a row says its outcome — 'ok'; 'tool_error' (the
-- upstream's result had isError: true); 'rpc_error' (the upstream answered a JSON-RPC
-- error); 'timeout', 'unavailable', 'upstream_error' (the gateway's UPSTREAM_TIMEOUT,
-- UPSTREAM_UNAVAILABLE, UPSTREAM_ERROR envelope: the hop ran out of time, the upstream could
-- not be reached, it answered something that is not MCP); 'denied' (refused by an access
-- policy, kind 'denied'). Every outcome but 'ok' is an error on the Usage page
-- (db.AuditEventInsert counts it in usage_rollup.errors).
--
-- Nullable, no default: rows written before this migration keep NULL (audit_events is
-- immutable, they cannot be updated) and read as 'denied' when their kind is 'denied', else
-- 'ok' — what they were, since only those two were audited then. Adding a nullable column
-- rewrites nothing. This is 00046, not 00042: goose refuses a version lower than one
-- already applied (db.Migrate does not allow out-of-order), and 00045 has run on existing
-- databases. 00045's backfill needs nothing from this column: every row it can see is one
-- of the old ones (kind 'denied' is its error test, as above).

-- +goose Up
ALTER TABLE audit_events ADD COLUMN outcome text NULL
    CHECK (outcome IN ('ok', 'tool_error', 'rpc_error', 'timeout', 'unavailable', 'upstream_error', 'denied'));

-- +goose Down
ALTER TABLE audit_events DROP COLUMN outcome;
