package db

import (
	"context"

	"github.com/agentpack/gateway/shared/apperr"
)

// The deploy's bootstrap records and the first workspace (migrations/00050; shared/bootstrap).

// BootstrapGet returns the value recorded under key in deploy_bootstrap and whether there
// is one.
func BootstrapGet(ctx context.Context, q Querier, key string) (string, bool, error) {
	var v string
	err := Interpret(q.QueryRow(ctx, `SELECT value FROM deploy_bootstrap WHERE key = $1`, key).Scan(&v))
	if apperr.CodeOf(err) == apperr.NotFound {
		return "", false, nil
	}
	return v, err == nil, err
}

// BootstrapSet records value under key (replacing an earlier value).
func BootstrapSet(ctx context.Context, q Querier, key, value string) error {
	_, err := q.Exec(ctx, `INSERT INTO deploy_bootstrap (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, key, value)
	return Interpret(err)
}

// WorkspaceOldest returns the id of the workspace created first, or "" when there is none.
func WorkspaceOldest(ctx context.Context, q Querier) (string, error) {
	var id string
	err := Interpret(q.QueryRow(ctx, `SELECT id::text FROM workspaces ORDER BY created_at, id LIMIT 1`).Scan(&id))
	if apperr.CodeOf(err) == apperr.NotFound {
		return "", nil
	}
	return id, err
}

// MaxWorkspaceNameLen bounds a workspace's name in bytes (WorkspaceCreate).
const MaxWorkspaceNameLen = 200

// WorkspaceCreate creates a workspace named name with its default project (named "Default
// project") and returns it; run it in a transaction so that both rows or neither exist.
// An empty name or one over MaxWorkspaceNameLen bytes is VALIDATION_ERROR.
func WorkspaceCreate(ctx context.Context, q Querier, name string) (*Workspace, error) {
	if name == "" || len(name) > MaxWorkspaceNameLen {
		return nil, apperr.New(apperr.Validation, "a workspace name is 1 to %d bytes", MaxWorkspaceNameLen)
	}
	var w Workspace
	if err := q.QueryRow(ctx, `INSERT INTO workspaces (name) VALUES ($1) RETURNING id::text, name`, name).
		Scan(&w.ID, &w.Name); err != nil {
		return nil, Interpret(err)
	}
	var project string
	if err := q.QueryRow(ctx, `INSERT INTO projects (workspace_id, name) VALUES ($1, 'Default project') RETURNING id::text`,
		w.ID).Scan(&project); err != nil {
		return nil, Interpret(err)
	}
	if err := WorkspaceSetDefaultProject(ctx, q, w.ID, project); err != nil {
		return nil, err
	}
	w.DefaultProjectID = &project
	return &w, nil
}

// FirstAdminGrant makes email an admin of ws and a superuser (the deploy's first admin,
// shared/bootstrap): when a person with that verified email exists it grants both at once
// (reporting invited false), else it invites email as admin with the superuser flag, which
// the person's first sign-in claims (InvitationsClaim). An existing invitation of email to
// ws is upgraded to admin and superuser.
func FirstAdminGrant(ctx context.Context, q Querier, ws, email string) (invited bool, err error) {
	p, err := PersonByVerifiedEmail(ctx, q, email)
	switch {
	case err == nil:
		if err := MembershipUpsert(ctx, q, ws, p.ID, "admin"); err != nil {
			return false, err
		}
		return false, PersonSetSuperuser(ctx, q, p.ID, true)
	case apperr.CodeOf(err) != apperr.NotFound:
		return false, err
	}
	_, err = q.Exec(ctx, `INSERT INTO invitations (workspace_id, email, role, superuser) VALUES ($1, lower($2), 'admin', true)
		ON CONFLICT (workspace_id, email) DO UPDATE SET role = 'admin', superuser = true`, ws, email)
	return err == nil, Interpret(err)
}
