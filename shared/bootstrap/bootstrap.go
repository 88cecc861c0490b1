// Package bootstrap is what a deploy does to the database (docs/DEPLOY.md, "What the deploy
// does to the database"): it applies the migrations, loads the curated catalog, creates the
// first workspace and invites the first admin, idempotently. The migration function
// (cmd/migrate) runs it from a CloudFormation custom resource on every deploy whose
// migration function changed, before any serving function is updated (they depend on the
// custom resource), so new code goes live only after its schema.
package bootstrap

import (
	"context"
	"fmt"
	"io/fs"
	"net/mail"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/seed"
)

// Options are what one run does besides migrating.
type Options struct {
	// Migrations is the migration set (migrations.FS; another set only in tests).
	Migrations fs.FS
	// FirstAdminEmail, when set, is invited once as admin of the first workspace and
	// superuser (db.FirstAdminGrant); a person who already signed in with that verified
	// email is granted both at once. Each email is granted once: a later run with the same
	// email does nothing, so an admin's later change stays.
	FirstAdminEmail string
	// FirstWorkspaceName names the first workspace when the bootstrap creates it (default
	// DefaultWorkspaceName).
	FirstWorkspaceName string
}

// DefaultWorkspaceName is the first workspace's name when Options.FirstWorkspaceName is empty.
const DefaultWorkspaceName = "Default workspace"

// Result is what a run did; the migration function hands it to CloudFormation as the
// custom resource's attributes (SchemaVersion, WorkspaceId, FirstAdminInvited).
type Result struct {
	// SchemaVersion is goose's version after the run (the newest migration applied).
	SchemaVersion int64
	// WorkspaceID is the first workspace: created by the first run, or, where workspaces
	// existed before the first run, the oldest of them.
	WorkspaceID string
	// FirstAdmin is the outcome for FirstAdminEmail: "invited", "granted" (the person
	// existed), "already" (granted by an earlier run) or "none" (no email).
	FirstAdmin string
}

// Bootstrap record keys (deploy_bootstrap, migrations/00050).
const (
	keyFirstWorkspace = "first_workspace"
	keyFirstAdmin     = "first_admin:" // + lower-case email
)

// Run migrates the database of pool with o.Migrations, then in one transaction (under a
// transaction-scoped advisory lock, so concurrent runs serialise) loads the curated
// catalog (seed.Load: an entry an admin edited keeps the admin's values) and bootstraps the
// first workspace and the first admin. It is idempotent. A malformed FirstAdminEmail is
// VALIDATION_ERROR before anything is touched. A failing migration stops the run: that
// migration is rolled back, the ones before it stay applied (each runs in its own
// transaction), and nothing else runs.
func Run(ctx context.Context, pool *db.Pool, o Options) (*Result, error) {
	email := strings.ToLower(strings.TrimSpace(o.FirstAdminEmail))
	if email != "" {
		if a, err := mail.ParseAddress(email); err != nil || a.Address != email || a.Name != "" {
			return nil, apperr.New(apperr.Validation, "FirstAdminEmail %q is not one email address", o.FirstAdminEmail)
		}
	}
	name := strings.TrimSpace(o.FirstWorkspaceName)
	if name == "" {
		name = DefaultWorkspaceName
	}
	if len(name) > db.MaxWorkspaceNameLen {
		return nil, apperr.New(apperr.Validation, "FirstWorkspaceName is longer than %d bytes", db.MaxWorkspaceNameLen)
	}
	version, err := db.MigrateFS(ctx, pool, o.Migrations)
	if err != nil {
		return nil, err
	}
	res := &Result{SchemaVersion: version, FirstAdmin: "none"}
	err = db.InTx(ctx, pool, func(tx db.Tx) error {
		if err := db.LockKey(ctx, tx, "bootstrap", "deploy"); err != nil {
			return err
		}
		if err := seed.Load(ctx, tx); err != nil {
			return fmt.Errorf("catalog seed: %w", err)
		}
		ws, err := firstWorkspace(ctx, tx, name)
		if err != nil {
			return fmt.Errorf("first workspace: %w", err)
		}
		res.WorkspaceID = ws
		if email == "" {
			return nil
		}
		if _, done, err := db.BootstrapGet(ctx, tx, keyFirstAdmin+email); err != nil || done {
			res.FirstAdmin = "already"
			return err
		}
		if ws == "" { // every workspace was deleted since the first run: a new email needs one
			w, err := db.WorkspaceCreate(ctx, tx, name)
			if err != nil {
				return fmt.Errorf("first workspace: %w", err)
			}
			ws, res.WorkspaceID = w.ID, w.ID
		}
		invited, err := db.FirstAdminGrant(ctx, tx, ws, email)
		if err != nil {
			return fmt.Errorf("first admin: %w", err)
		}
		res.FirstAdmin = "granted"
		if invited {
			res.FirstAdmin = "invited"
		}
		return db.BootstrapSet(ctx, tx, keyFirstAdmin+email, ws)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// firstWorkspace returns the first workspace. The first time: the oldest existing
// workspace (a database set up before this bootstrap existed) or a new one named name,
// recorded. Later: the recorded one, or when an admin has deleted it since, the oldest
// workspace left (none is created again; "" when there is none).
func firstWorkspace(ctx context.Context, tx db.Tx, name string) (string, error) {
	id, recorded, err := db.BootstrapGet(ctx, tx, keyFirstWorkspace)
	if err != nil {
		return "", err
	}
	if recorded {
		if _, err := db.WorkspaceGet(ctx, tx, id); apperr.CodeOf(err) != apperr.NotFound {
			return id, err
		}
	}
	if id, err = db.WorkspaceOldest(ctx, tx); err != nil || recorded {
		return id, err
	}
	if id == "" {
		w, err := db.WorkspaceCreate(ctx, tx, name)
		if err != nil {
			return "", err
		}
		id = w.ID
	}
	return id, db.BootstrapSet(ctx, tx, keyFirstWorkspace, id)
}
