-- Enterprise-Managed Authorization (docs/AUTH.md "The enterprise path"): an organisation's
-- identity provider issues ID-JAGs (draft-ietf-oauth-identity-assertion-authz-grant) that
-- the gateway's authorization server exchanges for access tokens with the JWT bearer grant
-- (RFC 7523), with no consent page.
--
--   trusted_idps  the identity providers whose ID-JAGs this deployment accepts: issuer (the
--                 JWT's iss, exactly), the JWKS URL its signatures are checked against, the
--                 client ids it may name (empty = any client this server knows), whether its
--                 verified email links an assertion to a person who signed in elsewhere, and
--                 an enabled flag (a disabled provider's assertions are refused). Managed by
--                 a superuser (REST /api/trusted-idps) or seeded by TRUSTED_IDPS.
--   idjag_jtis    every ID-JAG's (issuer, jti) accepted, until its exp: the primary key
--                 makes an assertion single-use (the extension's §7.4.2 requires replay
--                 detection). Written in the transaction that issues the token, so a refused
--                 exchange consumes nothing. Rows past expires_at are deleted by later
--                 exchanges; the assertion itself is never stored.
--   as_grants.idp_issuer  the identity provider of a grant made by an ID-JAG ('' = made
--                 on the consent page): what the console's connected clients show.

-- +goose Up
CREATE TABLE trusted_idps (
    issuer             text PRIMARY KEY CHECK (issuer <> '' AND length(issuer) <= 2048),
    jwks_url           text NOT NULL CHECK (jwks_url <> '' AND length(jwks_url) <= 2048),
    allowed_client_ids text[] NOT NULL DEFAULT '{}' CHECK (cardinality(allowed_client_ids) <= 100),
    link_by_email      boolean NOT NULL DEFAULT false,
    enabled            boolean NOT NULL DEFAULT true,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE idjag_jtis (
    issuer     text NOT NULL,
    jti        text NOT NULL CHECK (jti <> '' AND length(jti) <= 255),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (issuer, jti)
);
CREATE INDEX idjag_jtis_expires_idx ON idjag_jtis(expires_at);

ALTER TABLE as_grants ADD COLUMN idp_issuer text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE as_grants DROP COLUMN idp_issuer;
DROP TABLE idjag_jtis;
DROP TABLE trusted_idps;
