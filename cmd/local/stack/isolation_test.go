package stack_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// ids are the objects a request of the isolation matrix names.
type ids struct {
	ws, project, conn, chat, pin string
	ownChat                      string // the caller's own chat (cross-object requests)
}

// restRow is one REST route of the isolation matrix with the answer written down per
// principal. Principals: "member" and "admin" of the other workspace (the attackers),
// "ownMember", "ownAdmin" of the target workspace and "su" (superuser). 0 = not tried in
// the read phase (a write the owner performs in the ordered phase at the end).
type restRow struct {
	name   string
	method string
	path   func(ids) string
	body   func(ids) any
	want   map[string]int
}

// restMatrix covers every authenticated REST route that names a workspace object
// (functions/marketplace/api.Routes, functions/pins/api). Catalog entries are global (not a
// tenant's object) and are covered by the marketplace tests.
var restMatrix = []restRow{
	{"catalog list with B's install badges", "GET", func(i ids) string { return "/api/mcp-marketplace?workspaceId=" + i.ws }, nil,
		map[string]int{"member": 404, "admin": 404, "ownMember": 200, "ownAdmin": 200, "su": 200}},
	{"install into B", "POST", func(i ids) string { return "/api/mcp-marketplace/{entry}/install" }, func(i ids) any { return map[string]any{"workspaceId": i.ws} },
		map[string]int{"member": 403, "admin": 404, "ownMember": 403, "ownAdmin": 409, "su": 409}},
	{"uninstall from B", "DELETE", func(i ids) string { return "/api/mcp-marketplace/{entry}/install?workspaceId=" + i.ws }, nil,
		map[string]int{"member": 403, "admin": 404, "ownMember": 403}},
	{"list B's connections", "GET", func(i ids) string { return "/api/mcp-connections?workspaceId=" + i.ws }, nil,
		map[string]int{"member": 403, "admin": 404, "ownMember": 403, "ownAdmin": 200, "su": 200}},
	{"create a connection in B", "POST", func(i ids) string { return "/api/mcp-connections" },
		func(i ids) any {
			return map[string]any{"name": "pwn", "url": "http://127.0.0.1:1/mcp", "workspaceId": i.ws}
		},
		map[string]int{"member": 403, "admin": 404, "ownMember": 403}},
	{"B's statuses", "GET", func(i ids) string { return "/api/mcp-connections/statuses?workspaceId=" + i.ws }, nil,
		map[string]int{"member": 403, "admin": 404, "ownMember": 403, "ownAdmin": 200, "su": 200}},
	{"get B's connection", "GET", func(i ids) string { return "/api/mcp-connections/" + i.conn }, nil,
		map[string]int{"member": 403, "admin": 404, "ownMember": 403, "ownAdmin": 200, "su": 200}},
	{"update B's connection", "PUT", func(i ids) string { return "/api/mcp-connections/" + i.conn },
		func(i ids) any { return map[string]any{"url": "http://127.0.0.1:1/evil"} },
		map[string]int{"member": 403, "admin": 404, "ownMember": 403}},
	{"delete B's connection", "DELETE", func(i ids) string { return "/api/mcp-connections/" + i.conn }, nil,
		map[string]int{"member": 403, "admin": 404, "ownMember": 403}},
	{"toggle B's connection", "POST", func(i ids) string { return "/api/mcp-connections/" + i.conn + "/toggle" }, nil,
		map[string]int{"member": 403, "admin": 404, "ownMember": 403}},
	{"test B's connection", "POST", func(i ids) string { return "/api/mcp-connections/" + i.conn + "/test" }, nil,
		map[string]int{"member": 403, "admin": 404, "ownMember": 403, "ownAdmin": 200, "su": 200}},
	{"refresh B's connection", "POST", func(i ids) string { return "/api/mcp-connections/" + i.conn + "/refresh" }, nil,
		map[string]int{"member": 403, "admin": 404, "ownMember": 403, "ownAdmin": 200, "su": 200}},
	{"B's connection's tools", "GET", func(i ids) string { return "/api/mcp-connections/" + i.conn + "/tools" }, nil,
		map[string]int{"member": 403, "admin": 404, "ownMember": 403, "ownAdmin": 200, "su": 200}},
	{"approve B's tool", "POST", func(i ids) string { return "/api/mcp-connections/" + i.conn + "/tools/echo/approve" }, nil,
		map[string]int{"member": 403, "admin": 404, "ownMember": 403, "ownAdmin": 200, "su": 200}},
	{"authorize B's connection upstream", "POST", func(i ids) string { return "/api/mcp-connections/" + i.conn + "/authorize" }, nil,
		map[string]int{"member": 404, "admin": 404, "ownMember": 400, "ownAdmin": 400, "su": 400}},
	{"B's chat's pins", "GET", func(i ids) string { return "/api/chats/" + i.chat + "/pins" }, nil,
		map[string]int{"member": 404, "admin": 404, "ownMember": 200, "ownAdmin": 200, "su": 200}},
	{"pin in B's chat", "POST", func(i ids) string { return "/api/chats/" + i.chat + "/pins" },
		func(i ids) any { return map[string]any{"connectionId": i.conn} },
		map[string]int{"member": 404, "admin": 404, "ownMember": 403, "ownAdmin": 409, "su": 409}},
	{"unpin in B's chat", "DELETE", func(i ids) string { return "/api/chats/" + i.chat + "/pins/" + i.pin }, nil,
		map[string]int{"member": 404, "admin": 404, "ownMember": 403}},
	{"B's chat's tools", "GET", func(i ids) string { return "/api/chats/" + i.chat + "/tools" }, nil,
		map[string]int{"member": 404, "admin": 404, "ownMember": 200, "ownAdmin": 200, "su": 200}},
	{"pin B's connection into my chat", "POST", func(i ids) string { return "/api/chats/" + i.ownChat + "/pins" },
		func(i ids) any { return map[string]any{"connectionId": i.conn} },
		map[string]int{"member": 403, "admin": 404}},
}

// TestIsolationMatrix (issue 7, docs/DESIGN.md §8, SECURITY.md): every REST route and every gateway
// operation, tried by every principal against the other workspace's objects, in both
// directions, with the answer per cell written down above (REST) and below (gateway). A
// refusal to an attacker equals the refusal for an object that does not exist (same status
// and error code: existence does not leak); nothing of the target changes; no row ever ties
// one workspace's object to another.
func TestIsolationMatrix(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	snapshot := func() string {
		var s string
		w.env.FlushAudit(t)
		if err := w.env.Pool.QueryRow(t.Context(), `SELECT concat_ws('|',
			(SELECT string_agg(row_to_json(c)::text, ',' ORDER BY id) FROM mcp_connections c),
			(SELECT string_agg(row_to_json(p)::text, ',' ORDER BY id) FROM chat_mcp_pins p),
			(SELECT count(*) FROM event_log), (SELECT count(*) FROM audit_events))`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	objects := func(name string) ids {
		tn := w.ws[name]
		return ids{ws: tn.id, project: tn.project, conn: tn.conn, chat: tn.chat, pin: tn.pin}
	}
	ghost := ids{ws: uuid.NewString(), project: uuid.NewString(), conn: uuid.NewString(), chat: uuid.NewString(), pin: uuid.NewString()}
	path := func(r restRow, i ids) string { return strings.ReplaceAll(r.path(i), "{entry}", w.entry) }
	body := func(r restRow, i ids) any {
		if r.body == nil {
			return nil
		}
		return r.body(i)
	}
	code := func(b map[string]any) string {
		e, _ := b["error"].(map[string]any)
		return fmt.Sprint(e["code"])
	}

	// Phase 1: the attackers (A's member and admin against B, and B's against A).
	before := snapshot()
	for _, dir := range [][2]string{{"A", "B"}, {"B", "A"}} {
		att, target := w.ws[dir[0]], objects(dir[1])
		target.ownChat = att.chat
		g := ghost
		g.ownChat = att.chat
		for _, r := range restMatrix {
			for _, who := range []struct{ role, token string }{{"member", att.member}, {"admin", att.admin}} {
				t.Run(fmt.Sprintf("REST/%s of %s/%s", who.role, dir[0], r.name), func(t *testing.T) {
					st, b := w.do(t, r.method, path(r, target), who.token, body(r, target))
					if want := r.want[who.role]; st != want {
						t.Errorf("%s %s = %d %v, want %d", r.method, path(r, target), st, b, want)
					}
					gst, gb := w.do(t, r.method, path(r, g), who.token, body(r, g))
					if gst != st || code(gb) != code(b) {
						t.Errorf("existence leaks: the real object answers %d %s, a missing one %d %s", st, code(b), gst, code(gb))
					}
					for _, secret := range []string{target.conn, target.chat, target.pin, w.ws[dir[1]].handle} {
						if m, _ := b["error"].(map[string]any); m != nil && strings.Contains(fmt.Sprint(m), secret) {
							t.Errorf("the refusal names the target's object: %v", b)
						}
					}
				})
			}
		}
	}
	if after := snapshot(); after != before {
		t.Errorf("refused REST requests changed something:\nbefore %s\nafter  %s", before, after)
	}

	// Phase 2: the gateway, attackers against the other workspace.
	for _, dir := range [][2]string{{"A", "B"}, {"B", "A"}} {
		att, tg := w.ws[dir[0]], w.ws[dir[1]]
		own := "/mcp/" + att.id
		foreignTool := "mcp_" + tg.handle + "_echo"
		for _, who := range []struct{ role, token string }{{"member", att.member}, {"admin", att.admin}} {
			pre := "gateway/" + who.role + " of " + dir[0] + "/"
			adminOr := func(member, admin string) string {
				if who.role == "member" {
					return member
				}
				return admin
			}
			t.Run(pre+"target endpoint 403", func(t *testing.T) {
				if st, m := w.rpc(t, "/mcp/"+tg.id, who.token, "tools/list", nil, nil); st != http.StatusForbidden {
					t.Errorf("/mcp/{target} = %d %v, want 403", st, m)
				}
				if st, m := w.rpc(t, "/mcp", who.token, "tools/list", nil, map[string]string{"X-Workspace-Id": tg.id}); st != http.StatusForbidden {
					t.Errorf("X-Workspace-Id target = %d %v, want 403", st, m)
				}
			})
			t.Run(pre+"tools/list shows own tools only", func(t *testing.T) {
				st, m := w.rpc(t, own, who.token, "tools/list", nil, nil)
				names := toolNames(m)
				if st != 200 || !hasPrefix(names, "mcp_"+att.handle+"_") || hasPrefix(names, "mcp_"+tg.handle+"_") {
					t.Errorf("tools/list = %d %v", st, names)
				}
			})
			t.Run(pre+"proxied call of a target tool is unknown", func(t *testing.T) {
				st, _, out := w.call(t, own, who.token, foreignTool, map[string]any{"message": "x"}, nil)
				if st != 200 || !strings.Contains(out, "unknown tool") {
					t.Errorf("call %s = %d %s, want unknown tool", foreignTool, st, out)
				}
			})
			t.Run(pre+"single-server endpoint of a target connection 404", func(t *testing.T) {
				for _, ref := range []string{tg.handle, tg.conn} {
					if st, m := w.rpc(t, own+"/servers/"+ref, who.token, "tools/list", nil, nil); st != http.StatusNotFound {
						t.Errorf("servers/%s = %d %v, want 404", ref, st, m)
					}
				}
			})
			t.Run(pre+"target chat scoping 404", func(t *testing.T) {
				if st, m := w.rpc(t, own, who.token, "tools/list", nil, map[string]string{"X-Chat-Id": tg.chat}); st != http.StatusNotFound {
					t.Errorf("X-Chat-Id target = %d %v, want 404", st, m)
				}
				if st, m := w.rpc(t, own+"?chat="+tg.chat, who.token, "tools/list", nil, nil); st != http.StatusNotFound {
					t.Errorf("?chat=target = %d %v, want 404", st, m)
				}
			})
			builtins := []struct {
				tool string
				args map[string]any
				want string
			}{
				{"agentpack_connection_toggle", map[string]any{"connectionId": tg.conn}, adminOr("FORBIDDEN", "NOT_FOUND")},
				{"agentpack_connection_test", map[string]any{"connectionId": tg.conn}, adminOr("FORBIDDEN", "NOT_FOUND")},
				{"agentpack_pins_list", map[string]any{"chatId": tg.chat}, "NOT_FOUND"},
				{"agentpack_pin_add", map[string]any{"chatId": tg.chat, "connectionId": tg.conn}, adminOr("FORBIDDEN", "NOT_FOUND")},
				{"agentpack_pin_add", map[string]any{"chatId": att.chat, "connectionId": tg.conn}, adminOr("FORBIDDEN", "NOT_FOUND")},
				{"agentpack_pin_remove", map[string]any{"chatId": tg.chat, "pinId": tg.pin}, adminOr("FORBIDDEN", "NOT_FOUND")},
				{"agentpack_connections_list", map[string]any{"projectId": tg.project}, "INVALID_REFERENCE"},
			}
			for _, b := range builtins {
				t.Run(pre+"builtin "+b.tool, func(t *testing.T) {
					st, m, out := w.call(t, own, who.token, b.tool, b.args, nil)
					if st != 200 || out != b.want {
						t.Errorf("%s %v = %d %s, want %s", b.tool, b.args, st, out, b.want)
					}
					// The same call naming objects that do not exist answers the same.
					ghostArgs := map[string]any{}
					for k, v := range b.args {
						if v != att.chat {
							v = uuid.NewString()
						}
						ghostArgs[k] = v
					}
					if _, _, gout := w.call(t, own, who.token, b.tool, ghostArgs, nil); gout != out {
						t.Errorf("existence leaks: %s answers %s for the target's objects, %s for missing ones", b.tool, out, gout)
					}
					for _, s := range []string{tg.conn, "mcp_" + tg.handle + "_", tg.pin} {
						if strings.Contains(fmt.Sprint(m), s) {
							t.Errorf("%s answer names the target's %s", b.tool, s)
						}
					}
				})
			}
			t.Run(pre+"lists, search, audit, resources, prompts never show the target", func(t *testing.T) {
				reqs := []struct {
					method string
					params map[string]any
				}{
					{"resources/list", nil},
					{"resources/read", map[string]any{"uri": "agentpack://catalog"}},
					{"prompts/list", nil},
					{"tools/call", map[string]any{"name": "agentpack_tools_search", "arguments": map[string]any{"query": "echo"}}},
					{"tools/call", map[string]any{"name": "agentpack_connections_list", "arguments": map[string]any{}}},
					{"tools/call", map[string]any{"name": "agentpack_audit_list", "arguments": map[string]any{}}},
					{"tools/call", map[string]any{"name": "agentpack_pins_list", "arguments": map[string]any{"chatId": att.chat}}},
				}
				for _, r := range reqs {
					st, m := w.rpc(t, own, who.token, r.method, r.params, nil)
					if st != 200 || m["result"] == nil {
						t.Errorf("%s %v = %d %v", r.method, r.params, st, m)
					}
					for _, s := range []string{tg.conn, "mcp_" + tg.handle + "_", tg.pin, tg.chat} {
						if strings.Contains(fmt.Sprint(m), s) {
							t.Errorf("%s %v shows the target's %s", r.method, r.params, s)
						}
					}
				}
			})
		}
	}
	if after := snapshot(); after != before {
		t.Errorf("refused gateway requests changed something:\nbefore %s\nafter  %s", before, after)
	}

	// Phase 3: the owners and the superuser may (reads, and writes that refuse as
	// duplicates), so the refusals above are not a route that refuses everyone.
	for _, name := range []string{"B", "A"} {
		tn, target := w.ws[name], objects(name)
		target.ownChat = tn.chat
		for _, r := range restMatrix {
			for _, who := range []struct{ role, token string }{{"ownMember", tn.member}, {"ownAdmin", tn.admin}, {"su", w.su}} {
				want, ok := r.want[who.role]
				if !ok {
					continue
				}
				t.Run(fmt.Sprintf("REST/%s of %s/%s", who.role, name, r.name), func(t *testing.T) {
					if st, b := w.do(t, r.method, path(r, target), who.token, body(r, target)); st != want {
						t.Errorf("%s %s = %d %v, want %d", r.method, path(r, target), st, b, want)
					}
				})
			}
		}
		t.Run("gateway/owner and superuser of "+name, func(t *testing.T) {
			tool := "mcp_" + tn.handle + "_echo"
			for _, tok := range []string{tn.member, w.su} {
				st, m := w.rpc(t, "/mcp/"+tn.id, tok, "tools/list", nil, nil)
				if st != 200 || !hasPrefix(toolNames(m), tool) {
					t.Errorf("tools/list = %d %v", st, toolNames(m))
				}
				if st, _, out := w.call(t, "/mcp/"+tn.id, tok, tool, map[string]any{"message": "hi"}, nil); st != 200 || out != "ok" {
					t.Errorf("call %s = %d %s", tool, st, out)
				}
				if st, m := w.rpc(t, "/mcp/"+tn.id, tok, "tools/list", nil, map[string]string{"X-Chat-Id": tn.chat}); st != 200 || !hasPrefix(toolNames(m), tool) {
					t.Errorf("chat tools/list = %d %v", st, toolNames(m))
				}
			}
		})
	}
	// Only the owners' and the superuser's successful proxied calls were audited, each in
	// its own workspace.
	for _, name := range []string{"A", "B"} {
		tn := w.ws[name]
		if n := w.count(t, `SELECT count(*) FROM audit_events WHERE workspace_id = $1 AND connection_id = $2`, tn.id, tn.conn); n != 2 {
			t.Errorf("workspace %s: %d audit rows for its connection, want 2", name, n)
		}
	}
	if n := w.count(t, `SELECT count(*) FROM audit_events`); n != 4 {
		t.Errorf("%d audit rows, want 4", n)
	}

	// Phase 4: the owner's writes, in an order that leaves each step meaningful.
	b := w.ws["B"]
	for _, s := range []struct {
		method, path string
		body         any
		want         int
	}{
		{"PUT", "/api/mcp-connections/" + b.conn, map[string]any{"name": "renamed"}, 200},
		{"POST", "/api/mcp-connections/" + b.conn + "/toggle", nil, 200},
		{"POST", "/api/mcp-connections/" + b.conn + "/toggle", nil, 200},
		{"DELETE", "/api/chats/" + b.chat + "/pins/" + b.pin, nil, 204},
		{"POST", "/api/chats/" + b.chat + "/pins", map[string]any{"connectionId": b.conn}, 201},
		{"DELETE", "/api/mcp-marketplace/" + w.entry + "/install?workspaceId=" + b.id, nil, 204},
		{"POST", "/api/mcp-marketplace/" + w.entry + "/install", map[string]any{"workspaceId": b.id}, 201},
	} {
		if st, m := w.do(t, s.method, s.path, b.admin, s.body); st != s.want {
			t.Errorf("owner %s %s = %d %v, want %d", s.method, s.path, st, m, s.want)
		}
	}
	if n := w.crossRows(t); n != 0 {
		t.Errorf("%d rows tie one workspace's object to another", n)
	}
}
