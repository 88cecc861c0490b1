package console_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
)

// twoPeople is the world of a browser test about what an admin and a member of one
// workspace each see and do, made by newTwoPeople instead of a preamble copied into each
// test: the stack, the workspace, its admin (web-admin) and member (web-member) with their
// development sign-ins and bearer tokens, and the browser. The browser is one Chromium,
// signed in as neither yet: as(name) signs it in as "admin" or "member" (the development
// sign-in replaces the session), so a test switches people the way a shared laptop does.
type twoPeople struct {
	env         *stacktest.Env
	dev         *devSignIn
	ws, chat    string
	adminToken  string // web-admin's bearer token, admin of ws
	memberToken string // web-member's bearer token, member of ws
	k           *pgKit
}

// newTwoPeople starts a stack with a workspace named workspace, its two people and a
// browser (closed when t ends).
func newTwoPeople(t *testing.T, workspace string) *twoPeople {
	t.Helper()
	env, dev := devStack(t, nil)
	p := &twoPeople{env: env, dev: dev}
	p.ws, _, p.chat = env.Workspace(t, workspace)
	dev.as("admin", "web-admin", auth.RoleAdmin, p.ws)
	dev.as("member", "web-member", auth.RoleMember, p.ws)
	p.adminToken = stacktest.Token(t, "web-admin", auth.RoleAdmin, p.ws)
	p.memberToken = stacktest.Token(t, "web-member", auth.RoleMember, p.ws)
	k, stop := kit(t, env.URL)
	t.Cleanup(stop)
	p.k = k
	return p
}

// as signs the browser in as name ("admin" or "member") and returns it.
func (p *twoPeople) as(name string) *pgKit {
	p.k.signIn(p.dev, name)
	return p.k
}

// installRaw starts a raw upstream (testpeer.NewRawUpstream, JSON answers) and installs it
// in the workspace as the admin through POST /api/mcp-connections, as a connection named
// "Raw"; a refused create fails t.
func (p *twoPeople) installRaw(t *testing.T) (conn struct{ ID, Handle string }, up *testpeer.RawUpstream) {
	t.Helper()
	up = testpeer.NewRawUpstream(t, false)
	st, b := p.env.Do(t, "POST", "/api/mcp-connections", p.adminToken, map[string]any{"name": "Raw", "url": up.URL, "workspaceId": p.ws})
	if st != http.StatusCreated {
		t.Fatalf("create connection: %d %s", st, b)
	}
	if err := json.Unmarshal(b, &conn); err != nil {
		t.Fatal(err)
	}
	return conn, up
}
