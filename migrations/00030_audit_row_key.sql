-- The audit row is written after the answer, by an in-process batching writer that retries
-- a batch whose outcome it did not learn (docs/DESIGN.md "The audit row after the answer").
-- A retry of a batch that did commit must not write its rows twice: each row carries a key
-- chosen by the gateway when the call is answered, and the insert skips a key already
-- there. The key is also how a row that could not be written is named in the log. Older
-- rows have none (NULL, outside the unique index).

-- +goose Up
ALTER TABLE audit_events ADD COLUMN row_key uuid NULL;
CREATE UNIQUE INDEX audit_events_row_key_uq ON audit_events (row_key) WHERE row_key IS NOT NULL;

-- +goose Down
DROP INDEX audit_events_row_key_uq;
ALTER TABLE audit_events DROP COLUMN row_key;
