package connections_test

import (
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/google/uuid"
)

// TestGetInWorkspace: only a connection of the named workspace, for a member of it, is
// found; another workspace's, a global one, an unknown id and a non-member all get the same
// NOT_FOUND; a database that is gone is UNAVAILABLE.
func TestGetInWorkspace(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	s := &connections.Service{Pool: pool}
	a, b := uuid.NewString(), uuid.NewString()
	mk := func(name string, ws *string) string {
		t.Helper()
		if ws != nil {
			dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: *ws, Name: name})
		}
		return dbtest.Connection(t, pool, dbtest.ConnectionOpts{Name: name, URL: "https://" + name + ".example/mcp", WorkspaceID: ws}).ID
	}
	inA, inB, global := mk("a", &a), mk("b", &b), mk("global", nil)
	both := &auth.Principal{Subject: "p", Role: auth.RoleAdmin, Workspaces: []string{a, b}}
	onlyB := &auth.Principal{Subject: "q", Role: auth.RoleAdmin, Workspaces: []string{b}}
	if c, err := s.GetInWorkspace(ctx, both, a, inA); err != nil || c.ID != inA {
		t.Fatalf("own connection: %v %v", c, err)
	}
	for name, tc := range map[string]struct {
		p  *auth.Principal
		id string
	}{
		"another workspace's": {both, inB}, "global": {both, global}, "unknown": {both, uuid.NewString()},
		"not a member": {onlyB, inA}, "malformed id": {both, "x"},
	} {
		_, err := s.GetInWorkspace(ctx, tc.p, a, tc.id)
		if e := apperr.As(err); e == nil || e.Code != apperr.NotFound || e.Message != "no such connection in this workspace" {
			t.Errorf("%s: %v", name, err)
		}
	}
	pool.Close()
	if _, err := s.GetInWorkspace(ctx, both, a, inA); apperr.CodeOf(err) != apperr.Unavailable {
		t.Fatalf("closed pool: %v", err)
	}
}
