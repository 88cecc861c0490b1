package identity

import (
	"context"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
)

// Workspace is a workspace as POST /api/workspaces answers it.
type Workspace struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	DefaultProjectID string `json:"defaultProjectId"`
	// CreatorIsAdmin says whether the caller became the workspace's first admin (a person
	// who signed in; a token whose subject is no person, such as a development token, does
	// not).
	CreatorIsAdmin bool `json:"creatorIsAdmin"`
}

// WorkspaceCreate creates a workspace named name (trimmed, 1 to 200 bytes) with its default
// project, and makes the caller its admin when the caller is a person, in one transaction
// (docs/DEPLOY.md "First sign-in"). Only a superuser creates workspaces: anyone else is
// FORBIDDEN; a bad name is VALIDATION_ERROR; nothing is written on an error.
func (s *Service) WorkspaceCreate(ctx context.Context, p *auth.Principal, name string) (_ Workspace, err error) {
	defer derrors.Wrap(&err, "identity.WorkspaceCreate")
	if p == nil || !p.IsSuperuser() {
		return Workspace{}, apperr.New(apperr.Forbidden, "only a superuser creates workspaces")
	}
	name = strings.TrimSpace(name)
	var out Workspace
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		w, err := db.WorkspaceCreate(ctx, tx, name)
		if err != nil {
			return err
		}
		out = Workspace{ID: w.ID, Name: w.Name, DefaultProjectID: *w.DefaultProjectID}
		if _, err := db.PersonGet(ctx, tx, p.Subject); err == nil {
			if err := db.MembershipInsert(ctx, tx, w.ID, p.Subject, auth.RoleAdmin); err != nil {
				return err
			}
			out.CreatorIsAdmin = true
		} else if apperr.CodeOf(err) != apperr.NotFound {
			return err
		}
		return nil
	})
	return out, err
}
