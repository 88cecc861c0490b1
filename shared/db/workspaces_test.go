package db_test

import (
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

// TestProjectChatEnsureAndDefaultProject: ProjectEnsure and ChatEnsure create once and
// leave an existing row alone; WorkspaceSetDefaultProject sets the default; the error
// paths keep their codes.
func TestProjectChatEnsureAndDefaultProject(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	const (
		project = "f0000000-0000-4000-8000-000000000001"
		chat    = "f0000000-0000-4000-8000-000000000002"
	)
	mustWorkspace(t, pool, wsA)

	if err := db.ProjectEnsure(ctx, pool, project, wsA, "first"); err != nil {
		t.Fatal(err)
	}
	if err := db.ProjectEnsure(ctx, pool, project, wsA, "second"); err != nil {
		t.Fatalf("second ensure: %v", err)
	}
	if p, err := db.ProjectGet(ctx, pool, project); err != nil || p.Name != "first" || p.WorkspaceID != wsA {
		t.Fatalf("project = %+v, %v; want the first one unchanged", p, err)
	}
	if err := db.ProjectEnsure(ctx, pool, "f0000000-0000-4000-8000-000000000009", unknownUUID, "x"); apperr.CodeOf(err) != apperr.InvalidReference {
		t.Fatalf("project of an unknown workspace: %v, want INVALID_REFERENCE", err)
	}

	if err := db.WorkspaceSetDefaultProject(ctx, pool, wsA, project); err != nil {
		t.Fatal(err)
	}
	if w, err := db.WorkspaceGet(ctx, pool, wsA); err != nil || w.DefaultProjectID == nil || *w.DefaultProjectID != project {
		t.Fatalf("workspace = %+v, %v; want default project %s", w, err, project)
	}
	if err := db.WorkspaceSetDefaultProject(ctx, pool, unknownUUID, project); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("default project of an unknown workspace: %v, want NOT_FOUND", err)
	}
	if err := db.WorkspaceSetDefaultProject(ctx, pool, "x", project); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("default project of a malformed workspace id: %v, want NOT_FOUND", err)
	}
	if err := db.WorkspaceSetDefaultProject(ctx, pool, wsA, unknownUUID); apperr.CodeOf(err) != apperr.InvalidReference {
		t.Fatalf("unknown default project: %v, want INVALID_REFERENCE", err)
	}

	if err := db.ChatEnsure(ctx, pool, chat, wsA, "first"); err != nil {
		t.Fatal(err)
	}
	if err := db.ChatEnsure(ctx, pool, chat, wsA, "second"); err != nil {
		t.Fatalf("second ensure: %v", err)
	}
	if c, err := db.ChatGet(ctx, pool, chat); err != nil || c.Title != "first" {
		t.Fatalf("chat = %+v, %v; want the first one unchanged", c, err)
	}
	if err := db.ChatEnsure(ctx, pool, "x", wsA, "t"); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("chat with a malformed id: %v, want VALIDATION_ERROR", err)
	}
}
