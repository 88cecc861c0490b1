-- The gateway is the OAuth 2.1 authorization server of its own /mcp resource (docs/AUTH.md):
-- every MCP client signs in by itself with just the URL (tables as_*: "authorization server",
-- apart from the mcp_oauth_* tables of the gateway as a client of upstreams). What that server must remember
-- across Lambda instances lives here, and nothing it could recompute:
--
--   as_clients   clients registered by RFC 7591 dynamic registration (a client whose
--                   client_id is an https URL, a Client ID Metadata Document, is fetched and
--                   cached in memory instead: the document is its registration). source_ip
--                   and created_at rate-limit registrations per source.
--   as_grants    one row per authorization a person gave a client for a workspace: the
--                   refresh-token family (fosite's request id). revoked_at set = the family
--                   is dead: its refresh tokens are refused and the gateway refuses its
--                   access tokens at once (the "connected clients" a person or admin revokes).
--   as_tokens    authorization codes, PKCE challenges, access and refresh tokens, stored by
--                   their SHA-256 signature only (never the token), with the request they were
--                   issued for; active = false marks a used code or a rotated refresh token, so
--                   that presenting it again is detected as a replay.
--   as_consents  a person's remembered "allow" for a client in a workspace, so that the
--                   consent page is shown before the first token only.
--
-- Person ids are the identity half's people ids (text here: this table does not depend on
-- the people table's migration order); workspaces cascade.

-- +goose Up
CREATE TABLE as_clients (
    client_id     text PRIMARY KEY CHECK (length(client_id) BETWEEN 1 AND 128),
    client_name   text NOT NULL DEFAULT '' CHECK (length(client_name) <= 200),
    logo_uri      text NOT NULL DEFAULT '' CHECK (length(logo_uri) <= 2048),
    client_uri    text NOT NULL DEFAULT '' CHECK (length(client_uri) <= 2048),
    redirect_uris text[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 20),
    metadata      jsonb NOT NULL,
    source_ip     text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX as_clients_source_idx ON as_clients(source_ip, created_at);

CREATE TABLE as_grants (
    id            text PRIMARY KEY,
    client_id     text NOT NULL,
    client_name   text NOT NULL DEFAULT '',
    logo_uri      text NOT NULL DEFAULT '',
    redirect_host text NOT NULL DEFAULT '',
    person_id     text NOT NULL,
    workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    scopes        text[] NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at    timestamptz NULL
);
CREATE INDEX as_grants_person_idx ON as_grants(person_id) WHERE revoked_at IS NULL;
CREATE INDEX as_grants_workspace_idx ON as_grants(workspace_id) WHERE revoked_at IS NULL;

CREATE TABLE as_tokens (
    signature   text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('code', 'pkce', 'access', 'refresh')),
    request_id  text NOT NULL,
    active      boolean NOT NULL DEFAULT true,
    request     jsonb NOT NULL,
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- a code and its PKCE challenge share the code's signature
    PRIMARY KEY (kind, signature)
);
CREATE INDEX as_tokens_request_idx ON as_tokens(request_id, kind);
CREATE INDEX as_tokens_expires_idx ON as_tokens(expires_at);

CREATE TABLE as_consents (
    person_id    text NOT NULL,
    client_id    text NOT NULL,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    scopes       text[] NOT NULL DEFAULT '{}',
    granted_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (person_id, client_id, workspace_id)
);

-- +goose Down
DROP TABLE as_consents;
DROP TABLE as_tokens;
DROP TABLE as_grants;
DROP TABLE as_clients;
