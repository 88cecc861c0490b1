-- MCP access tokens (docs/AUTH.md "MCP access tokens"): a token a signed-in person makes
-- for themself in the console or over REST, for MCP clients that take only a header. It
-- is an access token of the gateway's own authorization server (RS256, aud <origin>/mcp
-- only, sid = its grant), so the gateway's existing check on every call (as_grants
-- revoked_at) ends it at once when revoked. What a grant of an OAuth client does not need,
-- such a token does:
--
--   expires_at    the lifetime the person chose (1 hour to 90 days): listed, refused by the
--                 grant check once past, and kept by the sweep until then (an OAuth grant
--                 lives by its refresh tokens, which this one has none of);
--   role          the role the token carries (member or admin), so that the grant check can
--                 refuse it once the person no longer holds that role in the workspace;
--   member_check  whether the person is a row of people (signed in through the identity
--                 provider): then every call checks the membership (direct or by group) as
--                 the authorization server does at every refresh. A development or
--                 JWT_JWKS_URL principal has no row to check (its token ends at expiry or
--                 revocation).
--
-- The token itself is never stored: it is a signed JWT, checked by its signature and its
-- grant. NULL and false keep every OAuth grant as it was.

-- +goose Up
ALTER TABLE as_grants
    ADD COLUMN expires_at   timestamptz NULL,
    ADD COLUMN role         text NULL CHECK (role IN ('member', 'admin')),
    ADD COLUMN member_check boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE as_grants DROP COLUMN member_check, DROP COLUMN role, DROP COLUMN expires_at;
