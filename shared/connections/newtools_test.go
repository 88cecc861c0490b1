package connections_test

import (
	"context"
	"testing"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRefreshNewToolsNeedApproval: with Service.NewToolsNeedApproval (NEW_TOOLS_NEED_APPROVAL)
// a tool that appears on a refresh is stored pending — withheld from the gateway until an
// admin approves it — while the tools already approved stay active; without it a new tool
// is active at once.
func TestRefreshNewToolsNeedApproval(t *testing.T) {
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	const ws = "aaaaaaaa-0000-4000-8000-0000000000a1"
	dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: ws, Name: "ws"})
	f := testpeer.NewFixture(t, nil)
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	up := mcpclient.New(&mcpclient.Options{Guard: guard})
	t.Cleanup(func() { _ = up.Close() })
	svc := &connections.Service{Pool: pool, Store: &catalog.DiskStore{Dir: t.TempDir()}, Upstreams: up, Guard: guard}
	wsID := ws
	c := dbtest.Connection(t, pool, dbtest.ConnectionOpts{Name: "demo", URL: f.URL, TransportType: mcpclient.TransportStreamable, WorkspaceID: &wsID})
	statuses := func() map[string]string {
		t.Helper()
		tools, err := db.ConnectionToolList(ctx, pool, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, tl := range tools {
			m[tl.UpstreamName] = tl.Status
		}
		return m
	}
	refresh := func(hold bool) {
		t.Helper()
		svc.NewToolsNeedApproval = hold
		res, err := svc.Refresh(ctx, "admin", c)
		if err != nil || !res.OK {
			t.Fatalf("refresh: %v %+v", err, res)
		}
	}
	addTool := func(name string) {
		mcp.AddTool(f.Server, &mcp.Tool{Name: name, Description: "new"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}

	refresh(false)
	before := statuses()
	if len(before) == 0 {
		t.Fatal("the demo upstream listed no tools")
	}
	for name, st := range before {
		if st != db.ToolActive {
			t.Fatalf("option off: %s is %s, want active", name, st)
		}
	}

	addTool("held_tool")
	refresh(true)
	after := statuses()
	if after["held_tool"] != db.ToolPending {
		t.Errorf("option on: the new tool is %q, want pending", after["held_tool"])
	}
	for name := range before {
		if after[name] != db.ToolActive {
			t.Errorf("option on: the approved tool %s became %s", name, after[name])
		}
	}

	addTool("open_tool")
	refresh(false)
	last := statuses()
	if last["open_tool"] != db.ToolActive || last["held_tool"] != db.ToolPending {
		t.Errorf("option off: open_tool %q (want active), held_tool %q (still pending until approved)", last["open_tool"], last["held_tool"])
	}
}
