-- The first deploy's bootstrap (docs/DEPLOY.md, "What the deploy does to the database";
-- shared/bootstrap). The migration function that CloudFormation invokes on every deploy
-- migrates, loads the curated catalog and bootstraps the first workspace and the first
-- admin. Three things make that idempotent without overwriting what admins changed:
--
-- * deploy_bootstrap records what the bootstrap did once (the first workspace's id, each
--   first-admin email it invited), so a later deploy never re-creates a workspace or an
--   invitation that an admin removed.
-- * mcp_catalog_entries.seed_digest is the md5 of the curated fields as the seed last wrote
--   them. The seed rewrites an entry only while its fields still hash to that digest: an
--   entry an admin edited keeps the admin's values. NULL (an entry written before this
--   column, or by an admin under a curated name) is rewritten once, as before.
-- * invitations.superuser makes the person who claims the invitation a superuser (the
--   platform flag of people.superuser), which until now only an operator could set in SQL.

-- +goose Up
CREATE TABLE deploy_bootstrap (
    key        text PRIMARY KEY CHECK (key <> '' AND length(key) <= 400),
    value      text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE mcp_catalog_entries ADD COLUMN seed_digest text NULL;
ALTER TABLE invitations ADD COLUMN superuser boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE invitations DROP COLUMN superuser;
ALTER TABLE mcp_catalog_entries DROP COLUMN seed_digest;
DROP TABLE deploy_bootstrap;
