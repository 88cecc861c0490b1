package workspaces

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/google/uuid"
)

// TestProject: the defaulting order (argument, request, workspace default, none), and
// other tenants' or unknown projects refused alike; a database that is gone is
// UNAVAILABLE, not the caller's mistake.
func TestProject(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	ws, bare, other := uuid.NewString(), uuid.NewString(), uuid.NewString()
	def, second, foreign := uuid.NewString(), uuid.NewString(), uuid.NewString()
	for _, w := range []string{ws, bare, other} {
		dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: w, Name: "w"})
	}
	for _, p := range [][2]string{{def, ws}, {second, ws}, {foreign, other}} {
		if err := db.ProjectEnsure(ctx, pool, p[0], p[1], "p"); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.WorkspaceSetDefaultProject(ctx, pool, ws, def); err != nil {
		t.Fatal(err)
	}
	s := &Service{Pool: pool}
	cases := []struct {
		name string
		ws   string
		ids  []string
		want string
		code apperr.Code
	}{
		{"argument wins", ws, []string{second, def}, second, ""},
		{"request's project when no argument", ws, []string{"", second}, second, ""},
		{"workspace default", ws, []string{"", ""}, def, ""},
		{"no default: none", bare, nil, "", ""},
		{"another workspace's project", ws, []string{foreign}, "", apperr.InvalidReference},
		{"unknown project", ws, []string{uuid.NewString()}, "", apperr.InvalidReference},
	}
	for _, c := range cases {
		got, err := s.Project(ctx, c.ws, c.ids...)
		if got != c.want || apperr.CodeOf(err) != c.code && !(c.code == "" && err == nil) {
			t.Errorf("%s: %q, %v; want %q, %s", c.name, got, err, c.want, c.code)
		}
	}
	pool.Close()
	_, err := s.Project(ctx, ws)
	if apperr.CodeOf(err) != apperr.Unavailable || !strings.Contains(err.Error(), "workspaces: project of "+ws) {
		t.Fatalf("closed pool: %v", err)
	}
	var e *apperr.Error
	if !errors.As(err, &e) {
		t.Fatal("the wrapped error lost its apperr.Error")
	}
}
