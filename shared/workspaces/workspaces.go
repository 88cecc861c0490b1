// Package workspaces answers the questions the gateway's built-in tools ask about a
// workspace and its projects, over shared/db. Tenancy: a workspace's answers never name
// another workspace's projects (docs/DESIGN.md §8).
package workspaces

import (
	"cmp"
	"context"
	"fmt"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
)

// Service reads workspaces and projects.
type Service struct {
	Pool *db.Pool
}

// Project returns the project a call in workspace ws acts in (docs/DESIGN.md §4 "default
// project"): the first non-empty of ids (the call's argument, then the request's
// X-Project-Id), else the workspace's default project, else "" (the workspace has none).
// The project must belong to ws: an unknown project or another workspace's is
// INVALID_REFERENCE (the same answer for both, so ids of other tenants cannot be probed).
// A database failure is UNAVAILABLE, wrapped with "workspaces: project of <ws>".
func (s *Service) Project(ctx context.Context, ws string, ids ...string) (_ string, err error) {
	defer derrors.Wrap(&err, "workspaces: project %s", ws)
	defer func() {
		if err != nil && apperr.CodeOf(err) != apperr.InvalidReference {
			err = fmt.Errorf("workspaces: project of %s: %w", ws, err)
		}
	}()
	pid := cmp.Or(ids...)
	if pid == "" {
		w, err := db.WorkspaceGet(ctx, s.Pool, ws)
		if err != nil {
			return "", err
		}
		if w.DefaultProjectID == nil {
			return "", nil
		}
		pid = *w.DefaultProjectID
	}
	p, err := db.ProjectGet(ctx, s.Pool, pid)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return "", err // the database failing is UNAVAILABLE (retryable), not the caller's mistake
	}
	if err != nil || p.WorkspaceID != ws {
		return "", apperr.New(apperr.InvalidReference, "project %s is not in this workspace", pid)
	}
	return pid, nil
}
