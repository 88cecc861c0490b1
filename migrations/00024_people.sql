-- People and their memberships live in Postgres, not in the identity provider's tokens
-- (docs/AUTH.md "Signing in: the organisation's identity provider"). A person is the
-- identity provider's issuer plus subject (the OpenID Connect rule: `sub` is unique only
-- within its issuer), with the email and name of the last sign-in. A membership is a person
-- in a workspace with a role; the gateway's own authorization server reads them at every
-- token and refresh, so removing a member takes effect at the next refresh at the latest.
-- An invitation holds a membership for an email until that person first signs in. A group
-- role maps a groups-claim value of the identity provider to a role in one workspace.
-- superuser is a platform flag (acts in every workspace), set by an operator, never by the
-- REST API.

-- +goose Up
CREATE TABLE people (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    issuer          text NOT NULL CHECK (issuer <> '' AND length(issuer) <= 2048),
    subject         text NOT NULL CHECK (subject <> '' AND length(subject) <= 255),
    email           text NOT NULL DEFAULT '' CHECK (length(email) <= 320),
    email_verified  boolean NOT NULL DEFAULT false,
    name            text NOT NULL DEFAULT '' CHECK (length(name) <= 512),
    groups          text[] NOT NULL DEFAULT '{}',
    superuser       boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_sign_in_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (issuer, subject)
);
CREATE INDEX people_email_idx ON people (lower(email)) WHERE email <> '';

CREATE TABLE memberships (
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    person_id    uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    role         text NOT NULL CHECK (role IN ('member', 'admin')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, person_id)
);
CREATE INDEX memberships_person_idx ON memberships(person_id);

CREATE TABLE invitations (
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    email        text NOT NULL CHECK (email = lower(email) AND email LIKE '_%@_%' AND length(email) <= 320),
    role         text NOT NULL CHECK (role IN ('member', 'admin')),
    invited_by   uuid NULL REFERENCES people(id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, email)
);
CREATE INDEX invitations_email_idx ON invitations(email);

CREATE TABLE group_roles (
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    group_name   text NOT NULL CHECK (group_name <> '' AND length(group_name) <= 255),
    role         text NOT NULL CHECK (role IN ('member', 'admin')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, group_name)
);

-- +goose Down
DROP TABLE group_roles;
DROP TABLE invitations;
DROP TABLE memberships;
DROP TABLE people;
