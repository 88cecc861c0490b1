package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// chatWorld: workspace A with a chat, connections of every scope to one real loopback
// upstream (the demo server): Alpha and Bravo (workspace A), Global and Global2 (global),
// Proj (project of A), Off (A, disabled), Other (workspace B).
type chatWorld struct {
	env            *stacktest.Env
	wsA, wsB       string
	chatA, chatB   string
	admin, member  string
	conns          map[string]string // name → id
	builtinsAdmin  []string
	builtinsMember []string
}

func newChatWorld(t *testing.T) *chatWorld {
	t.Helper()
	env := stacktest.New(t, nil)
	w := &chatWorld{env: env, conns: map[string]string{}}
	var projA string
	w.wsA, projA, w.chatA = env.Workspace(t, "A")
	w.wsB, _, w.chatB = env.Workspace(t, "B")
	w.admin = stacktest.Token(t, "alice", auth.RoleAdmin, w.wsA)
	w.member = stacktest.Token(t, "mallory", auth.RoleMember, w.wsA)
	alice := stacktest.Admin("alice", w.wsA)
	super := &auth.Principal{Subject: "root", Role: auth.RoleSuperuser}
	up := testpeer.NewFixture(t, nil)
	off := false
	for _, c := range []struct {
		by *auth.Principal
		in connections.CreateInput
	}{
		{alice, connections.CreateInput{Name: "Alpha", WorkspaceID: &w.wsA}},
		{alice, connections.CreateInput{Name: "Bravo", WorkspaceID: &w.wsA}},
		{super, connections.CreateInput{Name: "Global"}},
		{super, connections.CreateInput{Name: "Global2"}},
		{alice, connections.CreateInput{Name: "Proj", WorkspaceID: &w.wsA, ProjectID: &projA}},
		{alice, connections.CreateInput{Name: "Off", WorkspaceID: &w.wsA, Enabled: &off}},
		{stacktest.Admin("bob", w.wsB), connections.CreateInput{Name: "Other", WorkspaceID: &w.wsB}},
	} {
		c.in.URL = up.URL
		w.conns[c.in.Name] = env.Connection(t, c.by, c.in).Connection.ID
	}
	for _, tok := range []string{w.admin, w.member} {
		var b []string
		for _, n := range listAll(t, env.MCP(t, "/mcp/"+w.wsA, tok, "", nil)) {
			if strings.HasPrefix(n, "agentpack_") {
				b = append(b, n)
			}
		}
		if tok == w.admin {
			w.builtinsAdmin = b
		} else {
			w.builtinsMember = b
		}
	}
	return w
}

// exposed returns the exposed tool names of the named connections, read from Postgres
// (an oracle independent of the gateway and of the pins code).
func (w *chatWorld) exposed(t *testing.T, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		rows, err := w.env.Pool.Query(context.Background(),
			`SELECT exposed_name FROM mcp_connection_tools WHERE connection_id = $1 AND status = 'active'`, w.conns[n])
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			_ = rows.Scan(&s)
			out = append(out, s)
		}
		rows.Close()
		if len(out) == 0 && n != "Off" {
			t.Fatalf("connection %s has no tools", n)
		}
	}
	return out
}

func sorted(s ...[]string) []string {
	var out []string
	for _, x := range s {
		out = append(out, x...)
	}
	slices.Sort(out)
	return out
}

func (w *chatWorld) chatTools(t *testing.T, token string, hdr map[string]string, path string) []string {
	t.Helper()
	if path == "" {
		path = "/mcp/" + w.wsA
	}
	got := listAll(t, w.env.MCP(t, path, token, "", hdr))
	slices.Sort(got)
	return got
}

func (w *chatWorld) pin(t *testing.T, name string) string {
	t.Helper()
	status, body := w.env.Do(t, "POST", "/api/chats/"+w.chatA+"/pins", w.admin, map[string]any{"connectionId": w.conns[name]})
	if status != http.StatusCreated {
		t.Fatalf("pin %s: %d %s", name, status, body)
	}
	var p struct{ ID string }
	_ = json.Unmarshal(body, &p)
	return p.ID
}

// restProxied is GET /api/chats/{chatId}/tools: the proxied part of the resolved set,
// with each tool's source connection name.
func (w *chatWorld) restProxied(t *testing.T) (names []string, sources map[string]string, fellBack bool) {
	t.Helper()
	status, body := w.env.Do(t, "GET", "/api/chats/"+w.chatA+"/tools", w.member, nil)
	if status != http.StatusOK {
		t.Fatalf("chat tools: %d %s", status, body)
	}
	var out struct {
		FellBack bool
		Tools    []struct{ Name, Source, Kind string }
	}
	_ = json.Unmarshal(body, &out)
	sources = map[string]string{}
	for _, tl := range out.Tools {
		names = append(names, tl.Name)
		sources[tl.Name] = tl.Source
	}
	slices.Sort(names)
	return names, sources, out.FellBack
}

// TestChatToolsListIsResolvedSet: with X-Chat-Id (or ?chat=) tools/list is exactly
// built-ins ∪ the chat's resolved connections' tools (docs/DESIGN.md §7), equal to what
// GET /api/chats/{chatId}/tools and agentpack_pins_list report, and tools/call refuses
// anything else.
func TestChatToolsListIsResolvedSet(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	chatHdr := map[string]string{"X-Chat-Id": w.chatA}

	// No pins: every enabled connection of the workspace scope (globals in; project-scoped,
	// disabled and other-workspace out).
	want := sorted(w.builtinsAdmin, w.exposed(t, "Alpha", "Bravo", "Global", "Global2"))
	if got := w.chatTools(t, w.admin, chatHdr, ""); !slices.Equal(got, want) {
		t.Fatalf("no pins: tools/list\n got %v\nwant %v", got, want)
	}
	rest, sources, _ := w.restProxied(t)
	if !slices.Equal(rest, w.exposedSorted(t, "Alpha", "Bravo", "Global", "Global2")) {
		t.Fatalf("REST resolved set %v", rest)
	}
	for _, n := range w.exposed(t, "Global2") {
		if sources[n] != "Global2" {
			t.Fatalf("source of %s = %q, want Global2", n, sources[n])
		}
	}

	// Only a disabled pin: fallback to the workspace default, with a warning.
	offPin := w.pin(t, "Off")
	if got := w.chatTools(t, w.admin, chatHdr, ""); !slices.Equal(got, want) {
		t.Fatalf("fallback: tools/list\n got %v\nwant %v", got, want)
	}
	if !strings.Contains(w.env.Logs.String(), "every pinned connection is disabled or out of scope") {
		t.Fatal("fallback logged no warning")
	}
	if _, _, fb := w.restProxied(t); !fb {
		t.Fatal("REST does not report the fallback")
	}

	// Pin Global: pinned global ∪ workspace-scoped; the unpinned Global2 drops out.
	w.pin(t, "Global")
	want = sorted(w.builtinsAdmin, w.exposed(t, "Alpha", "Bravo", "Global"))
	for _, hdr := range []map[string]string{chatHdr, nil} {
		path := ""
		if hdr == nil {
			path = "/mcp/" + w.wsA + "?chat=" + w.chatA
		}
		if got := w.chatTools(t, w.admin, hdr, path); !slices.Equal(got, want) {
			t.Fatalf("pinned Global (%s): tools/list\n got %v\nwant %v", path, got, want)
		}
	}
	if got := w.chatTools(t, w.member, chatHdr, ""); !slices.Equal(got, sorted(w.builtinsMember, w.exposed(t, "Alpha", "Bravo", "Global"))) {
		t.Fatalf("member: tools/list %v", got)
	}
	if rest, _, _ := w.restProxied(t); !slices.Equal(rest, w.exposedSorted(t, "Alpha", "Bravo", "Global")) {
		t.Fatalf("REST resolved set %v", rest)
	}

	// agentpack_pins_list reports the same set, each tool with its source.
	sess := w.env.MCP(t, "/mcp/"+w.wsA, w.admin, "", chatHdr)
	res, err := sess.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentpack_pins_list", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("pins_list: %v %+v", err, res)
	}
	var env struct {
		Data struct {
			Pins    []struct{ ConnectionName string }
			ToolSet struct {
				Tools []struct{ Name, Source, Kind string }
			}
		}
	}
	_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env)
	var listed []string
	for _, tl := range env.Data.ToolSet.Tools {
		listed = append(listed, tl.Name)
		if tl.Kind == "proxied" && !strings.HasPrefix(tl.Source, "Alpha") && !strings.HasPrefix(tl.Source, "Bravo") && tl.Source != "Global" {
			t.Fatalf("unexpected source %q for %s", tl.Source, tl.Name)
		}
	}
	slices.Sort(listed)
	if !slices.Equal(listed, want) || len(env.Data.Pins) != 2 {
		t.Fatalf("pins_list tool set\n got %v\nwant %v (pins %+v)", listed, want, env.Data.Pins)
	}

	// tools/call refuses a tool outside the chat's set; the same call works without the chat.
	outside := w.exposed(t, "Global2")[0]
	for _, n := range w.exposed(t, "Global2") {
		if strings.HasSuffix(n, "_echo") {
			outside = n
		}
	}
	if r, err := sess.CallTool(t.Context(), &mcp.CallToolParams{Name: outside, Arguments: map[string]any{"message": "x"}}); err == nil && !r.IsError {
		t.Fatalf("call of %s outside the chat's set succeeded", outside)
	}
	plain := w.env.MCP(t, "/mcp/"+w.wsA, w.admin, "", nil)
	if r, err := plain.CallTool(t.Context(), &mcp.CallToolParams{Name: outside, Arguments: map[string]any{"message": "x"}}); err != nil || r.IsError {
		t.Fatalf("call of %s without a chat: %v %+v", outside, err, r)
	}
	inside := strings.Replace(outside, w.handle(t, "Global2"), w.handle(t, "Global"), 1)
	if r, err := sess.CallTool(t.Context(), &mcp.CallToolParams{Name: inside, Arguments: map[string]any{"message": "x"}}); err != nil || r.IsError {
		t.Fatalf("call of %s inside the chat's set: %v %+v", inside, err, r)
	}

	// Pin built-ins: a member cannot see or call them; an admin removes a pin; the set follows.
	msess := w.env.MCP(t, "/mcp/"+w.wsA, w.member, "", chatHdr)
	r, err := msess.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentpack_pin_add", Arguments: map[string]any{"connectionId": w.conns["Global2"]}})
	if err != nil || !r.IsError || envelopeOf(t, r)["error"].(map[string]any)["code"] != "FORBIDDEN" {
		t.Fatalf("member pin_add: %v %+v", err, r)
	}
	r, err = sess.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentpack_pin_add", Arguments: map[string]any{"connectionId": w.conns["Global2"]}})
	if err != nil || r.IsError {
		t.Fatalf("admin pin_add: %v %+v", err, r)
	}
	r, err = sess.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentpack_pin_add", Arguments: map[string]any{"connectionId": w.conns["Other"]}})
	if err != nil || !r.IsError || envelopeOf(t, r)["error"].(map[string]any)["code"] != "NOT_FOUND" {
		t.Fatalf("pin_add of another workspace's connection: %v %+v", err, r)
	}
	r, err = sess.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentpack_pin_remove", Arguments: map[string]any{"pinId": offPin}})
	if err != nil || r.IsError {
		t.Fatalf("pin_remove: %v %+v", err, r)
	}
	r, err = sess.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentpack_pin_remove", Arguments: map[string]any{"pinId": offPin}})
	if err != nil || !r.IsError || envelopeOf(t, r)["error"].(map[string]any)["code"] != "NOT_FOUND" {
		t.Fatalf("second pin_remove: %v %+v", err, r)
	}
	want = sorted(w.builtinsAdmin, w.exposed(t, "Alpha", "Bravo", "Global", "Global2"))
	if got := w.chatTools(t, w.admin, chatHdr, ""); !slices.Equal(got, want) {
		t.Fatalf("after pin_add Global2: tools/list\n got %v\nwant %v", got, want)
	}
	// Without a chat, pins_list needs a chatId.
	r, err = plain.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentpack_pins_list", Arguments: map[string]any{}})
	if err != nil || !r.IsError || envelopeOf(t, r)["error"].(map[string]any)["code"] != "VALIDATION_ERROR" {
		t.Fatalf("pins_list without chat: %v %+v", err, r)
	}
	r, err = plain.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentpack_pins_list", Arguments: map[string]any{"chatId": w.chatB}})
	if err != nil || !r.IsError || envelopeOf(t, r)["error"].(map[string]any)["code"] != "NOT_FOUND" {
		t.Fatalf("pins_list of another workspace's chat: %v %+v", err, r)
	}
}

// TestChatOfAnotherWorkspace: a chat id that is not the workspace's (or unknown) is 404.
func TestChatOfAnotherWorkspace(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, chat := range []string{w.chatB, uuid.NewString(), "not-a-uuid"} {
		resp, out := w.env.RPC(t, "/mcp/"+w.wsA, w.admin, body, map[string]string{"X-Chat-Id": chat})
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("chat %s: %d %s", chat, resp.StatusCode, out)
		}
	}
}

func (w *chatWorld) exposedSorted(t *testing.T, names ...string) []string {
	return sorted(w.exposed(t, names...))
}

func (w *chatWorld) handle(t *testing.T, name string) string {
	t.Helper()
	var h string
	if err := w.env.Pool.QueryRow(context.Background(), `SELECT handle FROM mcp_connections WHERE id = $1`, w.conns[name]).Scan(&h); err != nil {
		t.Fatal(err)
	}
	return h
}
