-- Consent bound to its user (docs/UPSTREAM-AUTH.md "Consent bound to its user"): the link a
-- caller receives names a pending authorization by a random link id (stored as its SHA-256),
-- not the upstream's authorization URL. The gateway's consent page establishes who the
-- browser is and, only when that is the caller the link was made for, records the SHA-256 of
-- a random binding it also sets as an HttpOnly, SameSite=Lax cookie; the callback finishes
-- the flow only with that cookie. Without this a link opened in another member's browser
-- (or one with no gateway session at all) completed the consent, and the first member's calls
-- then ran upstream as the other account.
--
-- One dynamic client registration per connection and authorization server, shared by every
-- member (before, each unauthorized call registered a client of its own). client_sealed is
-- the registered client (id, secret, auth method) sealed with the row's identity.

-- +goose Up
ALTER TABLE mcp_oauth_pending
    ADD COLUMN link_hash    bytea NULL UNIQUE CHECK (link_hash IS NULL OR length(link_hash) = 32),
    ADD COLUMN binding_hash bytea NULL CHECK (binding_hash IS NULL OR length(binding_hash) = 32);
CREATE INDEX mcp_oauth_pending_caller_idx ON mcp_oauth_pending(connection_id, subject);

CREATE TABLE mcp_oauth_registrations (
    connection_id  uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    issuer         text NOT NULL CHECK (length(issuer) <= 2048),
    client_sealed  bytea NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connection_id, issuer)
);

-- +goose Down
DROP TABLE mcp_oauth_registrations;
DROP INDEX mcp_oauth_pending_caller_idx;
ALTER TABLE mcp_oauth_pending DROP COLUMN binding_hash, DROP COLUMN link_hash;
