package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/search/searcheval"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The two-call test on real tool definitions (docs/SEARCH.md): the recorded tools/list
// of the evaluation set's npm servers (shared/search/searcheval) served from a loopback
// go-sdk server, one URL path per server, installed as one connection each in one
// workspace (above the discovery threshold). A client searches in a user's words — in
// English and in Portuguese — and calls the first hit by name; the stub answers with the
// server and tool it ran and the arguments it got.

// realAsks are the asks of the test, the tool each must find first (server/tool), and the
// arguments of the call.
var realAsks = []struct {
	query, want string
	args        map[string]any
}{
	{"how high above sea level is this spot", "google-maps/maps_elevation",
		map[string]any{"locations": []any{map[string]any{"latitude": 38.72, "longitude": -9.14}}}},
	{"criar uma pasta nova no disco", "filesystem/create_directory", map[string]any{"path": "/tmp/novo"}},
}

// realStub serves every dump at /s/<id>; a call answers "<id>/<tool> <arguments>".
func realStub(t *testing.T, dumps []searcheval.Dump) string {
	t.Helper()
	mux := http.NewServeMux()
	for _, d := range dumps {
		s := mcp.NewServer(&mcp.Implementation{Name: d.ID, Version: d.Version}, nil)
		for _, tl := range d.Tools {
			id := d.ID + "/" + tl.Name
			s.AddTool(&mcp.Tool{Name: tl.Name, Title: tl.Title, Description: tl.Description, InputSchema: tl.InputSchema},
				func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return demoupstream.TextResult(id + " " + string(req.Params.Arguments)), nil
				})
		}
		h, err := demoupstream.NewHandler(s, demoupstream.ModeStreamable)
		if err != nil {
			t.Fatal(err)
		}
		mux.Handle("/s/"+d.ID, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// realWorkspace installs every dump as a connection (rows and tools through the db
// package, then one catalog rebuild) and returns the workspace, an admin token and each
// server's handle by id.
func realWorkspace(t *testing.T, env *stacktest.Env, stub string, dumps []searcheval.Dump) (ws, token string, handles map[string]string) {
	t.Helper()
	ctx := t.Context()
	ws, _, _ = env.Workspace(t, "Real tool definitions")
	token = stacktest.Token(t, "alice", auth.RoleAdmin, ws)
	handles = map[string]string{}
	err := db.InTx(ctx, env.Pool, func(tx db.Tx) error {
		for _, d := range dumps {
			c, err := db.ConnectionCreate(ctx, tx, &db.ConnectionNew{Name: d.ID, URL: stub + "/s/" + d.ID, TransportType: "streamable-http",
				Source: "manual", Enabled: true, WorkspaceID: &ws, CreatedBy: "alice"})
			if err != nil {
				return err
			}
			defs := make([]db.ToolDef, 0, len(d.Tools))
			for _, tl := range d.Tools {
				defs = append(defs, db.ToolDef{Name: tl.Name, Title: tl.Title, Description: tl.Description, InputSchema: tl.InputSchema})
			}
			if _, err := db.ConnectionToolsSync(ctx, tx, c.ID, c.Handle, defs, false); err != nil {
				return fmt.Errorf("%s: %w", d.ID, err)
			}
			handles[d.ID] = c.Handle
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := catalog.Rebuild(ctx, env.Pool, env.Deps.Store, []string{ws}); err != nil {
		t.Fatal(err)
	}
	return ws, token, handles
}

// exposedOf is the gateway's name of a server/tool id in the workspace.
func exposedOf(handles map[string]string, id string) string {
	server, tool, _ := strings.Cut(id, "/")
	return "mcp_" + handles[server] + "_" + tool
}

// TestDiscoveryTwoCallsRealDefinitions: with the official go-sdk client and with the MCP
// Inspector CLI (pinned in test/npm), on the workspace of realWorkspace: tools/list
// shows no proxied tool (above the threshold); each ask of realAsks is two tools/call —
// agentpack_tools_search, whose first hit is the tool the ask needs, with its server,
// matched fields and input schema; then agentpack_tool_call with that name, answered by
// that server's stub with the arguments sent.
func TestDiscoveryTwoCallsRealDefinitions(t *testing.T) {
	t.Parallel()
	dumps, err := searcheval.Servers()
	if err != nil {
		t.Fatal(err)
	}
	stub := realStub(t, dumps)
	env := stacktest.New(t, nil)
	ws, token, handles := realWorkspace(t, env, stub, dumps)
	checkHit := func(t *testing.T, raw []byte, want string) searchHit {
		t.Helper()
		var hits searchHits
		if err := json.Unmarshal(raw, &hits); err != nil || !hits.OK || len(hits.Data.Tools) == 0 {
			t.Fatalf("search answer: %v %s", err, raw)
		}
		first := hits.Data.Tools[0]
		server, _, _ := strings.Cut(want, "/")
		if first.Name != exposedOf(handles, want) || first.Source != server || first.Connection != handles[server] ||
			len(first.Matched) == 0 || first.InputSchema["type"] != "object" {
			t.Fatalf("first hit %+v; want %s", first, exposedOf(handles, want))
		}
		return first
	}

	t.Run("go-sdk", func(t *testing.T) {
		ctx, s := discoverySession(t, env, ws, token)
		for _, ask := range realAsks {
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "agentpack_tools_search", Arguments: map[string]any{"query": ask.query}})
			if err != nil || res.IsError {
				t.Fatalf("search %q: %v %+v", ask.query, err, res)
			}
			b, _ := json.Marshal(res.StructuredContent)
			first := checkHit(t, b, ask.want)
			res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "agentpack_tool_call",
				Arguments: map[string]any{"name": first.Name, "arguments": ask.args}})
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Fatalf("call by name: %v %+v", err, res)
			}
			if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.HasPrefix(tc.Text, ask.want+" {") {
				t.Fatalf("call by name answered %#v; want %s's stub", res.Content[0], ask.want)
			}
		}
	})

	t.Run("inspector", func(t *testing.T) {
		ask := realAsks[len(realAsks)-1]
		sr, _ := inspectorToolCall(t, env, ws, token, "--tool-name", "agentpack_tools_search", "--tool-arg", "query="+ask.query)
		first := checkHit(t, sr.StructuredContent, ask.want)
		args, _ := json.Marshal(ask.args)
		cr, out := inspectorToolCall(t, env, ws, token, "--tool-name", "agentpack_tool_call", "--tool-arg", "name="+first.Name, "--tool-arg", "arguments="+string(args))
		if len(cr.Content) != 1 || !strings.HasPrefix(cr.Content[0].Text, ask.want+" {") {
			t.Fatalf("call by name: want %s's stub\n%s", ask.want, out)
		}
	})
}
