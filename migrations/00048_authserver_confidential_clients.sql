-- Confidential clients, RFC 7592 client configuration and registration limits that fit
-- hosted clients, for the gateway's own authorization server (docs/AUTH.md "Registration"):
--
--   token_endpoint_auth_method  RFC 7591 §2: 'none' (public, PKCE only), 'client_secret_post'
--                               or 'client_secret_basic' (RFC 6749 §2.3.1).
--   secret_hash                 'sha256:' and the base64url SHA-256 of the client secret (256
--                               random bits), '' for a public client; the secret itself is
--                               returned once and never stored.
--   registration_token_hash     the SHA-256 (base64url) of the RFC 7592 registration access
--                               token; the token itself is returned once and never stored.
--   scopes                      the scopes the client is registered with (those it asked
--                               for that the server offers; mcp when none).
--   shape                       the SHA-256 of client_name, the redirect URI set and the auth
--                               method: registrations of one hosted client (many people behind
--                               one egress address) share a shape, so the per-source limit
--                               counts distinct shapes. Rows from before this migration get a
--                               shape each (their own client_id): they count as before.

-- +goose Up
ALTER TABLE as_clients
    ADD COLUMN token_endpoint_auth_method text NOT NULL DEFAULT 'none'
        CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post', 'client_secret_basic')),
    ADD COLUMN secret_hash text NOT NULL DEFAULT '',
    ADD COLUMN registration_token_hash text NOT NULL DEFAULT '',
    ADD COLUMN scopes text[] NOT NULL DEFAULT '{mcp}',
    ADD COLUMN shape text NOT NULL DEFAULT '',
    ADD CONSTRAINT as_clients_secret_check
        CHECK ((token_endpoint_auth_method = 'none') = (secret_hash = ''));
UPDATE as_clients SET shape = 'legacy:' || client_id;
CREATE INDEX as_clients_created_idx ON as_clients(created_at);

-- +goose Down
DROP INDEX as_clients_created_idx;
ALTER TABLE as_clients
    DROP CONSTRAINT as_clients_secret_check,
    DROP COLUMN shape,
    DROP COLUMN scopes,
    DROP COLUMN registration_token_hash,
    DROP COLUMN secret_hash,
    DROP COLUMN token_endpoint_auth_method;
