-- A call refused by an access policy (docs/POLICIES.md) is audited too: kind 'denied', with
-- the ids of the deciding policies in version (a built-in's version otherwise; no new column,
-- so the batched INSERT keeps its shape). Nothing reached the upstream for such a row.

-- +goose Up
ALTER TABLE audit_events DROP CONSTRAINT audit_events_kind_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_kind_check CHECK (kind IN ('builtin', 'proxied', 'denied'));

-- +goose Down
ALTER TABLE audit_events DROP CONSTRAINT audit_events_kind_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_kind_check CHECK (kind IN ('builtin', 'proxied'));
