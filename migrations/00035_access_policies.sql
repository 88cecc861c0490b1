-- Call-time access policies in Cedar (docs/POLICIES.md): one policy document per workspace,
-- written by its admins, plus one global document (workspace_id NULL) a superuser writes,
-- evaluated before every workspace's. The gateway never reads this table on a call: the
-- catalog build copies both documents into each workspace's catalog index, so a decision is
-- made from the snapshot the request already holds. The text is stored as saved (comments and
-- layout kept) because the console edits it and validation errors point at its lines; it is
-- stored only after it parsed and validated against the workspace's tools.

-- +goose Up
CREATE TABLE access_policies (
    workspace_id uuid NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    policy_text  text NOT NULL CHECK (length(policy_text) <= 65536),
    updated_by   text NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL DEFAULT now()
);
-- One document per workspace and one global document (NULL workspace).
CREATE UNIQUE INDEX access_policies_scope_uq ON access_policies ((coalesce(workspace_id::text, 'global')));

-- +goose Down
DROP TABLE access_policies;
