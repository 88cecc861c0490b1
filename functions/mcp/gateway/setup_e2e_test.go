package gateway_test

import (
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
)

// testBundle is the world of most gateway end-to-end tests, made by setup (one setup
// returning one bundle, as river's tests do, instead of a preamble copied into each test):
// a stack, one workspace with alice as its admin, an upstream, and that upstream installed
// in the workspace as a connection.
type testBundle struct {
	env   *stacktest.Env
	ws    string                // the workspace's id
	proj  string                // its default project's id
	admin string                // alice's bearer token, admin of ws
	up    *testpeer.RawUpstream // the upstream setup started; nil after setupWith
	conn  *db.Connection        // the upstream, installed in ws by alice
}

// setup starts a stack with a workspace named workspace and installs a new raw upstream
// (testpeer.NewRawUpstream, JSON answers) in it as a connection named connName.
func setup(t *testing.T, workspace, connName string) *testBundle {
	t.Helper()
	up := testpeer.NewRawUpstream(t, false)
	b := setupWith(t, workspace, connName, up.URL)
	b.up = up
	return b
}

// setupWith is setup for an upstream the test started itself, at url.
func setupWith(t *testing.T, workspace, connName, url string) *testBundle {
	t.Helper()
	b := setupWorkspace(t, workspace)
	b.conn = b.install(t, connName, url)
	return b
}

// setupWorkspace is setup without an upstream (conn and up nil): for tests that install
// their own, with install.
func setupWorkspace(t *testing.T, workspace string) *testBundle {
	t.Helper()
	env := stacktest.New(t, nil)
	b := &testBundle{env: env}
	b.ws, b.proj, _ = env.Workspace(t, workspace)
	b.admin = stacktest.Token(t, "alice", auth.RoleAdmin, b.ws)
	return b
}

// install installs the upstream at url in the bundle's workspace as alice, as a connection
// named name, and returns it (listed and published before it returns; a refusal fails t).
func (b *testBundle) install(t *testing.T, name, url string) *db.Connection {
	t.Helper()
	return b.env.Connection(t, stacktest.Admin("alice", b.ws), connections.CreateInput{Name: name, URL: url, WorkspaceID: &b.ws}).Connection
}
