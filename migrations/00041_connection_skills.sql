-- The Marketplace shows an installed server's skills (SEP-2640, the
-- io.modelcontextprotocol/skills extension; docs/SKILLS.md; issue 34). A refresh of a
-- connection whose upstream declares the extension reads its skills/list and keeps a summary
-- per skill — uri, the frontmatter's name and description, how many files — so that the
-- console's card reads it from Postgres instead of calling the upstream on every page view.
-- NULL: nothing listed (no extension, or never refreshed since). The gateway's endpoints do
-- not read this column: they ask the upstream (digests must match the files now).

-- +goose Up
ALTER TABLE mcp_connections ADD COLUMN skills json NULL;

-- +goose Down
ALTER TABLE mcp_connections DROP COLUMN skills;
