package connections_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/google/uuid"
)

// TestServiceErrorsNameTheOperation: the connection flows' errors say what failed and on
// which ids, and keep their code, so the REST status is unchanged (404, 403, 400 here).
func TestServiceErrorsNameTheOperation(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	s := &connections.Service{Pool: pool}
	ws := dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{})
	admin := &auth.Principal{Subject: "adm", Role: auth.RoleAdmin, Workspaces: []string{ws}}
	member := &auth.Principal{Subject: "mem", Role: auth.RoleMember, Workspaces: []string{ws}}
	id, entry := uuid.NewString(), uuid.NewString()
	_, getErr := s.Get(ctx, admin, id)
	_, toolsErr := s.Tools(ctx, member, id)
	_, notesErr := s.SchemaNotes(ctx, admin, id)
	_, authErr := s.Authorize(ctx, admin, id, "")
	for _, tc := range []struct {
		name   string
		err    error
		prefix string
		status int
	}{
		{"get unknown", getErr, "connections: get " + id + ": ", http.StatusNotFound},
		{"tools as member", toolsErr, "connections: tools of " + id + ": ", http.StatusForbidden},
		{"schema notes of unknown", notesErr, "connections: schema notes of " + id + ": ", http.StatusNotFound},
		{"authorize unknown", authErr, "connections: authorize " + id + ": ", http.StatusNotFound},
		{"delete unknown", s.Delete(ctx, admin, id), "connections: delete " + id + ": ", http.StatusNotFound},
		{"delete as member", s.Delete(ctx, member, id), "connections: delete " + id + ": ", http.StatusForbidden},
		{"uninstall unknown entry", s.Uninstall(ctx, admin, entry, ws), "connections: uninstall " + entry + " from " + ws + ": ", http.StatusNotFound},
		{"uninstall from a malformed workspace", s.Uninstall(ctx, admin, entry, "x"), "connections: uninstall " + entry + " from x: ", http.StatusBadRequest},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !strings.HasPrefix(tc.err.Error(), tc.prefix) {
			t.Errorf("%s: error %q, want prefix %q", tc.name, tc.err, tc.prefix)
		}
		if st := apperr.Public(tc.err).Code.HTTPStatus(); st != tc.status {
			t.Errorf("%s: status %d, want %d (%v)", tc.name, st, tc.status, tc.err)
		}
	}
}
