-- The whole data model of docs/DESIGN.md §3: tenancy (workspaces, projects, chats), the curated
-- catalog, connections and the tools last listed from them, chat pins, and the two
-- append-only audit tables. One migration because this is the first release.

-- +goose Up
CREATE TABLE workspaces (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name               text NOT NULL,
    default_project_id uuid NULL,
    created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id)
);

-- The default project must belong to the same workspace: the composite key enforces it.
ALTER TABLE workspaces
    ADD CONSTRAINT workspaces_default_project_fk
    FOREIGN KEY (id, default_project_id) REFERENCES projects(workspace_id, id)
    DEFERRABLE INITIALLY DEFERRED;

CREATE TABLE chats (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    title        text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chats_workspace_idx ON chats(workspace_id);

CREATE TABLE mcp_catalog_entries (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                 text NOT NULL UNIQUE,
    url                  text NOT NULL,
    transport_type       text NOT NULL DEFAULT 'streamable-http'
                         CHECK (transport_type IN ('streamable-http', 'sse')),
    headers              jsonb NOT NULL DEFAULT '{}'::jsonb,
    description          text NOT NULL DEFAULT '',
    category             text NOT NULL DEFAULT '',
    version              text NOT NULL DEFAULT '',
    author               text NOT NULL DEFAULT '',
    verification_tier    text NOT NULL DEFAULT 'unverified'
                         CHECK (verification_tier IN ('official', 'verified_community', 'unverified')),
    health_status        text NULL CHECK (health_status IN ('healthy', 'stale', 'down')),
    last_health_check    timestamptz NULL,
    last_health_error    text NULL,
    last_commit_date     timestamptz NULL,
    consecutive_failures integer NOT NULL DEFAULT 0,
    install_count        integer NOT NULL DEFAULT 0,
    is_placeholder       boolean NOT NULL DEFAULT false,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE mcp_connections (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name              text NOT NULL,
    -- handle: the short, collision-checked name part used in exposed tool names
    -- (mcp_<handle>_<tool>, docs/DESIGN.md §4); unique across all connections, never reused.
    handle            text NOT NULL UNIQUE CHECK (handle ~ '^[a-z0-9]{1,16}$'),
    url               text NOT NULL,
    transport_type    text NOT NULL DEFAULT 'streamable-http'
                      CHECK (transport_type IN ('streamable-http', 'sse')),
    -- the transport that last worked (docs/DESIGN.md §6: later connects go straight to it)
    working_transport text NULL CHECK (working_transport IN ('streamable-http', 'sse')),
    protocol_version  text NULL,
    headers           jsonb NOT NULL DEFAULT '{}'::jsonb,
    enabled           boolean NOT NULL DEFAULT true,
    source            text NOT NULL DEFAULT 'manual' CHECK (source IN ('manual', 'marketplace')),
    catalog_entry_id  uuid NULL REFERENCES mcp_catalog_entries(id) ON DELETE SET NULL,
    workspace_id      uuid NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id        uuid NULL REFERENCES projects(id) ON DELETE CASCADE,
    last_connected_at timestamptz NULL,
    last_error        text NULL,
    created_by        text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    -- scope: both NULL = global; workspace only; both = project (never project alone)
    CONSTRAINT mcp_connections_scope_ck CHECK (project_id IS NULL OR workspace_id IS NOT NULL)
);
CREATE INDEX mcp_connections_workspace_idx ON mcp_connections(workspace_id);
-- At most one marketplace install of an entry per workspace (seed: install flow, 409);
-- manual connections to the same entry do not count. NULLS NOT DISTINCT so that global
-- installs (workspace_id NULL) are unique too.
CREATE UNIQUE INDEX mcp_connections_marketplace_install_uq
    ON mcp_connections(catalog_entry_id, workspace_id) NULLS NOT DISTINCT
    WHERE source = 'marketplace';

CREATE TABLE mcp_connection_tools (
    connection_id     uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    upstream_name     text NOT NULL,
    -- exposed_name is frozen once written (docs/DESIGN.md §4): refreshes never change it.
    exposed_name      text NOT NULL CHECK (exposed_name ~ '^[A-Za-z0-9_-]{1,64}$'),
    title             text NOT NULL DEFAULT '',
    description       text NOT NULL DEFAULT '',
    input_schema      jsonb NOT NULL,
    output_schema     jsonb NULL,
    annotations       jsonb NULL,
    -- drift detection (docs/DESIGN.md §6): digest of the definition last listed, and of the
    -- definition an admin accepted. status: active | drifted (withheld until approved).
    definition_digest text NOT NULL,
    approved_digest   text NOT NULL,
    status            text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'drifted', 'pending')),
    first_listed_at   timestamptz NOT NULL DEFAULT now(),
    listed_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connection_id, upstream_name),
    UNIQUE (exposed_name)
);

CREATE TABLE chat_mcp_pins (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    chat_id       uuid NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    connection_id uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    created_by    text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (chat_id, connection_id)
);

-- Gateway tool calls (docs/DESIGN.md §4 "Audit"): successful writes only.
CREATE TABLE audit_events (
    id            bigserial PRIMARY KEY,
    occurred_at   timestamptz NOT NULL DEFAULT now(),
    request_id    text NOT NULL DEFAULT '',
    principal     text NOT NULL,
    workspace_id  uuid NULL,
    tool          text NOT NULL,
    version       text NOT NULL DEFAULT '',
    kind          text NOT NULL CHECK (kind IN ('builtin', 'proxied')),
    connection_id uuid NULL,
    duration_ms   double precision NOT NULL,
    args_digest   text NOT NULL
);
CREATE INDEX audit_events_workspace_idx ON audit_events(workspace_id, occurred_at DESC);

-- Marketplace mutations (seed: logEvent with entity_type 'mcp_connection').
CREATE TABLE event_log (
    id           bigserial PRIMARY KEY,
    occurred_at  timestamptz NOT NULL DEFAULT now(),
    entity_type  text NOT NULL,
    entity_id    text NOT NULL,
    action       text NOT NULL,
    actor        text NOT NULL,
    workspace_id uuid NULL,
    payload      jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX event_log_entity_idx ON event_log(entity_type, entity_id);

-- The immutable audit log: UPDATE, DELETE and TRUNCATE are refused on both tables.
-- +goose StatementBegin
CREATE FUNCTION reject_audit_mutation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit table % is append-only (% refused)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER audit_events_immutable BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION reject_audit_mutation();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION reject_audit_mutation();
CREATE TRIGGER event_log_immutable BEFORE UPDATE OR DELETE ON event_log
    FOR EACH ROW EXECUTE FUNCTION reject_audit_mutation();
CREATE TRIGGER event_log_no_truncate BEFORE TRUNCATE ON event_log
    FOR EACH STATEMENT EXECUTE FUNCTION reject_audit_mutation();

-- +goose Down
DROP TABLE event_log, audit_events, chat_mcp_pins, mcp_connection_tools, mcp_connections,
    mcp_catalog_entries, chats;
ALTER TABLE workspaces DROP CONSTRAINT workspaces_default_project_fk;
DROP TABLE projects, workspaces;
DROP FUNCTION reject_audit_mutation();
